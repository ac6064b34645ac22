"""``delegate`` in an executor of ours (``relay_agents.DelegatingAgent``, served on a memory runtime)
calling a remote over real HTTP: another app of ours, or the a2a-sdk reference server, on either
binding. What the remote does shows up in our task: its artifacts chunk by chunk, its WORKING
messages, its end as our end."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from delegation_servers import Agent, our_agent
from relay_agents import SECRET

from testkit.waiting import wait_until

BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]


def orders(to: Agent, send: str, **more: Any) -> str:
    return json.dumps({"to": to.card_url, "send": send, **more})


def status_text(task: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for p in task["status"].get("message", {}).get("parts", []))


def streamed(agent: Agent, text: str) -> list[dict[str, Any]]:
    """The StreamResponses of SendStreamingMessage(text) to ``agent``, to the stream's end."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
    events = []
    with httpx.stream("POST", agent.url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:])["result"])
    return events


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_remote_stream_is_relayed_chunk_by_chunk(delegator: Agent, chores: Agent, binding: str) -> None:
    # Given our agent delegating "chunks 3" to a streaming agent of ours, over one binding
    # When a client streams our task
    events = streamed(delegator, orders(chores, "chunks 3", binding=binding))

    # Then the remote's three chunks came as ours, appended, the last one marked
    chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["chunk 0;", "chunk 1;", "chunk 2;"]
    assert [bool(c.get("append")) for c in chunks] == [False, True, True]
    assert [bool(c.get("lastChunk")) for c in chunks] == [False, False, True]
    ids = {c["artifact"]["artifactId"] for c in chunks}
    assert len(ids) == 1
    assert ids.pop().endswith(":out")
    # And its WORKING message was relayed, and its final message became ours
    said = [status_text(e["statusUpdate"]) for e in events if "statusUpdate" in e]
    assert "on it" in said
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert said[-1] == "done"
    # And the remote used the binding asked for
    paths = {path for method, path, _ in chores.requests if method == "POST"}
    assert ("/message:stream" in paths) == (binding == "HTTP+JSON")


def test_two_delegations_of_one_run_do_not_collide(chores: Agent) -> None:
    # Given an agent that delegates to an agent that delegates: both relay an artifact called "out"
    with our_agent("relay_agents:DelegatingAgent") as outer, our_agent("relay_agents:DelegatingAgent") as inner:
        # When the chain runs
        task = outer.send(orders(inner, orders(chores, "chunks 2")))

    # Then the relayed artifact arrives whole under an id mapped at each hop
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    [artifact] = task["artifacts"]
    assert [p["text"] for p in artifact["parts"]] == ["chunk 0;chunk 1;"]
    assert artifact["artifactId"].count(":") == 2


def test_an_agent_that_does_not_stream_is_polled() -> None:
    # Given a remote whose card says it does not stream
    with (
        our_agent("relay_agents:ChoreAgent", streaming=False) as quiet,
        our_agent("relay_agents:DelegatingAgent") as delegator,
    ):
        # When our agent delegates to it
        task = delegator.send(orders(quiet, "chunks 3", binding="HTTP+JSON"))

    # Then our task has its artifact, whole, and its final message
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["chunk 0;chunk 1;chunk 2;"]
    assert status_text(task) == "done"
    # And the remote was sent the message once, then asked for its task
    assert [p for m, p, _ in quiet.requests if m == "POST"] == ["/message:send"]
    assert any(m == "GET" and p.startswith("/tasks/") for m, p, _ in quiet.requests)


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_reference_agent_s_stream_is_relayed(delegator: Agent, reference: Agent, binding: str) -> None:
    # Given the a2a-sdk reference agent, which streams "tick N SECONDS" as N appended chunks
    # When our agent delegates to it over one binding
    task = delegator.send(orders(reference, "tick 3 0.01", binding=binding))

    # Then our task has its chunks, whole, under our id for its artifact
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    [artifact] = task["artifacts"]
    assert [p["text"] for p in artifact["parts"]] == ["tick 0tick 1tick 2"]
    assert artifact["artifactId"].endswith(":ticks")


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_message_only_reply_completes_our_task_with_it(delegator: Agent, chores: Agent, binding: str) -> None:
    # When the remote answers with a message and no task work
    task = delegator.send(orders(chores, "reply", binding=binding))

    # Then our task completed with that message as ours
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert status_text(task) == "hello back"


@pytest.mark.parametrize(
    ("order", "says"),
    [
        pytest.param("fail", "'chore agent' failed", id="failed"),
        pytest.param("reject", "'chore agent' rejected the task: not my job", id="rejected"),
        pytest.param("ask", "'chore agent' needs more input: which one?", id="input-required"),
    ],
)
def test_a_remote_that_does_not_complete_fails_our_task_naming_it(
    delegator: Agent, chores: Agent, order: str, says: str
) -> None:
    # When the remote fails, rejects, or asks a question our agent does not answer
    task = delegator.send(orders(chores, order))

    # Then our task failed with a message naming the remote, and nothing of its internals
    assert task["status"]["state"] == "TASK_STATE_FAILED", task
    assert says in status_text(task)
    assert SECRET not in json.dumps(task)


def test_a_remote_that_never_finishes_fails_our_task_at_the_limit(delegator: Agent, chores: Agent) -> None:
    # Given a remote that works until it is canceled, and a limit of half a second
    task = delegator.send(orders(chores, "hang", limit=0.5))

    # Then our task failed saying the remote did not finish in time
    assert task["status"]["state"] == "TASK_STATE_FAILED", task
    assert "'chore agent' did not finish within the time it was given" in status_text(task)
    # And the remote's task was canceled
    remote_task = _remote_task_of(chores, "hang")
    chores.wait_for(remote_task, "TASK_STATE_CANCELED")


@pytest.mark.parametrize("remote_kind", ["ours", "reference"])
def test_canceling_our_task_cancels_the_remote_task(
    delegator: Agent, chores: Agent, reference: Agent, remote_kind: str
) -> None:
    remote, order = (chores, "hang") if remote_kind == "ours" else (reference, "tick 2000 0.05")
    known = {t["id"] for t in remote.tasks()}
    # Given our task delegating to a remote that is still working
    ours = delegator.send(orders(remote, order), wait=False)["id"]
    remote_task = wait_until(lambda: _working_task(remote, known), "the remote task to work", within=30)

    # When a client cancels our task
    delegator.call("CancelTask", {"id": ours})

    # Then the remote task is canceled too, and ours ends CANCELED
    remote.wait_for(remote_task, "TASK_STATE_CANCELED")
    delegator.wait_for(ours, "TASK_STATE_CANCELED")


def _working_task(remote: Agent, known: set[str]) -> str | None:
    fresh = [t for t in remote.tasks() if t["id"] not in known and t["status"]["state"] == "TASK_STATE_WORKING"]
    return fresh[0]["id"] if fresh else None


def _remote_task_of(remote: Agent, order: str) -> str:
    for summary in remote.tasks():
        task = remote.call("GetTask", {"id": summary["id"], "historyLength": 10})
        if any(p.get("text") == order for m in task.get("history", []) for p in m["parts"]):
            return str(task["id"])
    raise AssertionError(f"no remote task for {order!r}")
