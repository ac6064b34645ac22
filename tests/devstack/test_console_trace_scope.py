"""The console's trace view serves an owner only their own task's spans, even when another owner's
calls share the trace id (a request's ``traceparent`` names whatever trace its caller likes)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from a2a_serverless import telemetry
from a2a_serverless.config import Settings
from a2a_serverless.json_types import Json
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.console import with_console
from a2a_serverless_dev.traces import read_spans, task_traces

CONSOLE = {"X-A2A-Console": "1"}
ALICE = {"A2A-Version": "1.0", "Authorization": "Bearer key-alice"}
BOB = {"A2A-Version": "1.0", "Authorization": "Bearer key-bob"}
SECRET = "alice's words, for alice only"
RUN_SPANS = {"SendMessage", "send work", "process work", "invoke_agent DemoAgentExecutor", "commit events"}


@pytest.fixture
def span_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Tracing on in this process, to span files (as the local stack's), with content capture on."""
    monkeypatch.setenv(telemetry.SWITCH_ENV, "file")
    monkeypatch.setenv(telemetry.DIR_ENV, str(tmp_path))
    monkeypatch.setenv(telemetry.CONTENT_ENV, "true")
    telemetry.reset()
    assert telemetry.tracing_on()
    yield tmp_path
    monkeypatch.delenv(telemetry.SWITCH_ENV)
    monkeypatch.delenv(telemetry.DIR_ENV)
    monkeypatch.delenv(telemetry.CONTENT_ENV)
    telemetry.reset()


@pytest_asyncio.fixture
async def client(span_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(store="memory", auth_mode="api-key", api_keys={"key-alice": "alice", "key-bob": "bob"})
    runtime: Runtime = build_runtime(settings)
    app = with_console(create_app(runtime), lambda: runtime)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as c:
            yield c
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


async def _call(client: httpx.AsyncClient, headers: dict[str, str], method: str, params: Json) -> Json:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: Json = (await client.post("/", json=body, headers=headers)).json()
    return answer


async def _send(client: httpx.AsyncClient, headers: dict[str, str], text: str) -> Json:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    task = (await _call(client, headers, "SendMessage", {"message": message}))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    return dict(task)


async def _trace(client: httpx.AsyncClient, who: dict[str, str], task_id: str) -> list[dict[str, Any]]:
    headers = {**CONSOLE, "Authorization": who["Authorization"]}
    response = await client.get(f"/_console/api/tasks/{task_id}/trace", headers=headers)
    assert response.status_code == 200
    traces: list[dict[str, Any]] = response.json()["traces"]
    return traces


async def _spans_once(
    client: httpx.AsyncClient, who: dict[str, str], task_id: str, names: set[str]
) -> list[dict[str, Any]]:
    """The spans of the task's traces once they hold a span of each of ``names``."""
    for _ in range(200):
        spans = [span for trace in await _trace(client, who, task_id) for span in trace["spans"]]
        if names <= {span["name"] for span in spans}:
            return spans
        await asyncio.sleep(0.05)
    raise AssertionError(f"no spans {names} for task {task_id}")


@pytest.mark.asyncio
async def test_an_owner_reusing_another_s_trace_id_sees_none_of_their_spans(
    client: httpx.AsyncClient, span_dir: Path
) -> None:
    # Given alice's task, traced (content capture on: her text is in her spans)
    alice_task = await _send(client, ALICE, SECRET)
    alice_first = await _spans_once(client, ALICE, alice_task["id"], RUN_SPANS)
    call = next(span for span in alice_first if span["name"] == "SendMessage")
    assert SECRET in json.dumps(alice_first)
    # When bob sends a task of his own, and asks for hers, naming her trace (under her call's span)
    traceparent = {"traceparent": f"00-{call['traceId']}-{call['spanId']}-01"}
    bob_task = await _send(client, {**BOB, **traceparent}, "bob's words")
    probe = await _call(client, {**BOB, **traceparent}, "GetTask", {"id": alice_task["id"]})
    assert "error" in probe
    message = {"messageId": "m-bob", "role": "ROLE_USER", "parts": [{"text": "bob's"}], "taskId": alice_task["id"]}
    assert "error" in await _call(client, {**BOB, **traceparent}, "SendMessage", {"message": message})
    bob_spans = await _spans_once(client, BOB, bob_task["id"], RUN_SPANS)
    # (his spans are in her trace indeed)
    shared = [s for s in read_spans(span_dir) if s["traceId"] == call["traceId"]]
    assert {s["attributes"].get("a2a.task.id") for s in shared} >= {alice_task["id"], bob_task["id"]}
    probes = [s for s in shared if s["name"] in {"GetTask", "SendMessage"} and s["spanId"] != call["spanId"]]
    probes = [s for s in probes if s["attributes"].get("a2a.task.id") == alice_task["id"]]
    assert len(probes) == 2  # they name her task, but are his calls

    alice_spans = [span for trace in await _trace(client, ALICE, alice_task["id"]) for span in trace["spans"]]
    alice_ids = {span["spanId"] for span in alice_spans}
    bob_ids = {span["spanId"] for span in bob_spans}
    # Then bob's trace view holds none of alice's spans, nor her text
    assert not bob_ids & alice_ids
    assert SECRET not in json.dumps(bob_spans)
    assert {span["attributes"].get("a2a.task.id") for span in bob_spans} <= {bob_task["id"], None}
    # and alice's none of bob's: not his task's, not his probe of hers
    assert {span["spanId"] for span in alice_first} == alice_ids
    assert [span["name"] for span in alice_spans].count("SendMessage") == 1
    assert "GetTask" not in {span["name"] for span in alice_spans}
    # And bob's view of alice's task is empty (the task is read in his scope)
    assert await _trace(client, BOB, alice_task["id"]) == []


def _span(span_id: str, parent: str | None, kind: str = "INTERNAL", **attributes: str) -> Json:
    return {
        "traceId": "t1",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": span_id,
        "kind": kind,
        "startUnixNano": len(span_id),
        "attributes": {k.replace("_", "."): v for k, v in attributes.items()},
    }


def test_a_task_s_trace_is_its_spans_and_their_unclaimed_descendants() -> None:
    spans = [
        _span("call", None, "SERVER", a2a_task_id="mine"),
        _span("run", "call", "CONSUMER", a2a_task_id="mine"),
        _span("commit", "run"),
        _span("model", "commit"),
        _span("other-call", "run", "SERVER", a2a_task_id="theirs"),  # a traceparent naming our span
        _span("other-run", "other-call", "CONSUMER", a2a_task_id="theirs"),
        _span("other-commit", "other-run"),
        _span("untagged-call", "commit", "SERVER"),  # e.g. a ListTasks naming our span
        _span("other-tenant", "run", "CONSUMER", a2a_task_id="mine", a2a_tenant="t2"),
        _span("probe", "call", "SERVER", a2a_task_id="mine", error_type="-32001"),
    ]
    (mine,) = task_traces(spans, "mine")
    assert [s["spanId"] for s in mine["spans"]] == ["run", "call", "model", "commit"]
    (theirs,) = task_traces(spans, "theirs")
    assert sorted(s["spanId"] for s in theirs["spans"]) == ["other-call", "other-commit", "other-run"]
    (tenant,) = task_traces(spans, "mine", tenant="t2")
    assert [s["spanId"] for s in tenant["spans"]] == ["other-tenant"]
    assert task_traces(spans, "nobody") == []
