"""One turn through the local stack's processes (the API, the worker, the dispatcher, the delivery
function, each a process of its own) is one trace, collected by the stack itself and served by the
console's dev API (``GET /_console/api/tasks/{id}/trace``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from testkit.devstack import DevStack
from testkit.waiting import wait_until

if TYPE_CHECKING:
    from conftest import WebhookReceiver  # tests/conftest.py

pytestmark = pytest.mark.e2e

SECRET = "a sentence only its sender should read"
CONSOLE = {"X-A2A-Console": "1"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevStack]:
    with DevStack.running(tmp_path_factory.mktemp("traced-stack")) as running:
        yield running


def send(stack: DevStack, text: str, **configuration: Any) -> dict[str, Any]:
    message = {"messageId": f"m-{text[:8]}-{len(text)}", "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": configuration}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    answer = httpx.post(stack.base + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60).json()
    task: dict[str, Any] = answer["result"]["task"]
    return task


def spans_of(stack: DevStack, task_id: str) -> list[dict[str, Any]]:
    """The spans of the task's one trace (the test fails if it has more than one)."""
    url = f"{stack.base}/_console/api/tasks/{task_id}/trace"
    traces = httpx.get(url, headers=CONSOLE, timeout=10).json()["traces"]
    assert len(traces) <= 1, [t["traceId"] for t in traces]
    return traces[0]["spans"] if traces else []


def wait_for_trace(stack: DevStack, task_id: str, *names: str) -> list[dict[str, Any]]:
    """The trace's spans once it holds a span of each of ``names`` and every span's parent but the
    root's (a span is written when it ends, so a parent after its children)."""

    def complete() -> list[dict[str, Any]] | None:
        every = spans_of(stack, task_id)
        ids = {span["spanId"] for span in every}
        whole = sum(span["parentSpanId"] not in ids for span in every) == 1
        return every if whole and set(names) <= {span["name"] for span in every} else None

    return wait_until(complete, f"spans {names} of task {task_id}", within=60, every=0.2)


def wait_for_spans(stack: DevStack, task_id: str, *names: str) -> dict[str, dict[str, Any]]:
    """:func:`wait_for_trace`'s spans by name (the last of a name wins)."""
    return {span["name"]: span for span in wait_for_trace(stack, task_id, *names)}


def test_a_turn_with_a_webhook_is_one_connected_trace_across_the_processes(
    stack: DevStack, webhook_receiver: WebhookReceiver
) -> None:
    # Given a task sent with a push config, whose webhook answers
    config = {"url": webhook_receiver.url + "/hook", "token": "tok"}
    task = send(stack, "hello", taskPushNotificationConfig=config)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"

    # When its trace holds the delivery's POSTs
    names = ("SendMessage", "send work", "process work", "invoke_agent DemoAgentExecutor", "commit events")
    every = wait_for_trace(stack, task["id"], *names, "dispatch push", "deliver push", "POST")
    spans = {span["name"]: span for span in every}

    # Then every span but the call's has its parent in the same trace: one connected tree
    ids = {span["spanId"] for span in every}
    assert [span["name"] for span in every if span["parentSpanId"] not in ids] == ["SendMessage"]
    # each part in the process that does it, under the part before it
    by_id = {span["spanId"]: span for span in every}

    def parent(name: str) -> str:
        return str(by_id[spans[name]["parentSpanId"]]["name"])

    assert spans["SendMessage"]["service"] == "api"
    assert spans["SendMessage"]["kind"] == "SERVER"
    assert parent("send work") == "SendMessage"
    assert (spans["process work"]["service"], parent("process work")) == ("WorkerFunction", "send work")
    assert parent("invoke_agent DemoAgentExecutor") == "process work"
    assert parent("commit events") == "process work"
    assert spans["dispatch push"]["service"] == "PushDispatcherFunction"
    assert parent("dispatch push") in {"SendMessage", "commit events"}  # the commit that logged the event
    assert (spans["deliver push"]["service"], parent("deliver push")) == ("PushDeliveryFunction", "dispatch push")
    assert (parent("POST"), spans["POST"]["kind"]) == ("deliver push", "CLIENT")
    # with the names the conventions give
    call = spans["SendMessage"]["attributes"]
    assert call["a2a.method.name"] == "SendMessage"
    assert call["a2a.task.id"] == task["id"]
    assert call["gen_ai.conversation.id"] == task["contextId"]
    assert spans["invoke_agent DemoAgentExecutor"]["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    commits = [span["attributes"] for span in every if span["name"] == "commit events"]
    assert sum(c["a2a_serverless.commit.events"] for c in commits) >= 2  # WORKING... COMPLETED
    assert all(c["a2a_serverless.commit.bytes"] > 0 for c in commits)
    assert spans["POST"]["attributes"]["http.response.status_code"] < 300
    assert spans["POST"]["attributes"]["server.address"] == "127.0.0.1"


def test_a_crashed_run_s_trace_says_so(stack: DevStack) -> None:
    # Given a run whose executor raises (the demo agent's "fail")
    task = send(stack, "fail")
    assert task["status"]["state"] == "TASK_STATE_FAILED"

    # Then its agent's span and its run's are errors, naming the exception's class only
    spans = wait_for_spans(stack, task["id"], "process work", "invoke_agent DemoAgentExecutor")
    for name in ("process work", "invoke_agent DemoAgentExecutor"):
        assert spans[name]["status"]["code"] == "ERROR", name
        assert spans[name]["attributes"]["error.type"] == "RuntimeError"
    assert "demo failure requested" not in json.dumps(spans_of(stack, task["id"]))


def test_no_message_text_in_a_trace_by_default(stack: DevStack) -> None:
    task = send(stack, SECRET)
    wait_for_spans(stack, task["id"], "SendMessage", "invoke_agent DemoAgentExecutor", "commit events")
    assert SECRET not in json.dumps(spans_of(stack, task["id"]))


def test_another_caller_s_task_has_no_trace_to_show(stack: DevStack) -> None:
    url = f"{stack.base}/_console/api/tasks/no-such-task/trace"
    assert httpx.get(url, headers=CONSOLE, timeout=10).json() == {
        "taskId": "no-such-task",
        "enabled": True,
        "traces": [],
    }


def test_a_streamed_turn_is_one_trace_under_its_streaming_call(stack: DevStack) -> None:
    # Given a turn sent with SendStreamingMessage (read to its end)
    message = {"messageId": "m-streamed", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
    headers = {"A2A-Version": "1.0", "Accept": "text/event-stream"}
    with httpx.stream("POST", stack.base + "/", json=body, headers=headers, timeout=60) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data:")]
    task_id = json.loads(lines[0][5:])["result"]["task"]["id"]

    # Then the streaming call is the trace's root and the run is in it
    spans = wait_for_spans(stack, task_id, "SendStreamingMessage", "process work", "invoke_agent DemoAgentExecutor")
    assert spans["SendStreamingMessage"]["parentSpanId"] is None
    assert spans["SendStreamingMessage"]["attributes"]["a2a.method.name"] == "SendStreamingMessage"
    assert spans["process work"]["traceId"] == spans["SendStreamingMessage"]["traceId"]


def test_a_later_turn_is_a_trace_of_its_own_linked_to_the_turn_before(stack: DevStack) -> None:
    # Given a task that asked for input (the demo's "ask me"), answered on the same task
    first = send(stack, "ask me")
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    wait_for_spans(stack, first["id"], "process work", "commit events")
    answer = {"messageId": "m-answer", "role": "ROLE_USER", "parts": [{"text": "Ada"}], "taskId": first["id"]}
    body = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": answer}}
    httpx.post(stack.base + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60)

    # When both turns' runs are traced
    url = f"{stack.base}/_console/api/tasks/{first['id']}/trace"

    def two_runs() -> list[dict[str, Any]] | None:
        traces: list[dict[str, Any]] = httpx.get(url, headers=CONSOLE, timeout=10).json()["traces"]
        runs = [s for t in traces for s in t["spans"] if s["name"] == "process work"]
        return traces if len(traces) == 2 and len(runs) == 2 else None

    earlier, later = wait_until(two_runs, "the two turns' traces", within=60, every=0.2)

    # Then the second turn's run links to the commit that ended the first turn
    run = next(s for s in later["spans"] if s["name"] == "process work")
    assert run["attributes"]["a2a_serverless.work.turn"] > 1
    commits = {s["spanId"] for s in earlier["spans"] if s["name"] == "commit events"}
    assert [(link["traceId"], link["spanId"] in commits) for link in run["links"]] == [(earlier["traceId"], True)]
