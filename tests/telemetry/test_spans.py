"""The spans of one turn in one process (the app on a memory runtime, its runs inline), kept in
memory: what each span is named, what it carries, how they nest, and what never goes in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from a2a_serverless import telemetry
from a2a_serverless.telemetry import _sdk
from testkit.asgi import memory_app

pytestmark = [pytest.mark.usefixtures("spans"), pytest.mark.asyncio]

SECRET = "the words only the user should see"
HEADERS = {"A2A-Version": "1.0"}


def send(text: str, message_id: str = "m-1") -> dict[str, Any]:
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def finished() -> dict[str, ReadableSpan]:
    return {span.name: span for span in _sdk.finished_spans()}


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def all_text(spans: dict[str, ReadableSpan]) -> str:
    return json.dumps(
        [[dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]] for s in spans.values()], default=str
    )


async def test_a_turn_nests_from_the_call_to_the_commits() -> None:
    # Given tracing on, when one blocking SendMessage runs its turn
    async with memory_app() as client:
        answer = (await client.post("/", json=send("hello"), headers=HEADERS)).json()["result"]["task"]
    spans = finished()

    # Then the call, the enqueue, the run, the agent and the commits are one trace, each the child of the last
    call, enqueue, run = spans["SendMessage"], spans["send work"], spans["process work"]
    agent, commit = spans["invoke_agent DemoAgentExecutor"], spans["commit events"]
    assert {s.context.trace_id for s in spans.values()} == {call.context.trace_id}
    assert parent_id(call) is None
    assert parent_id(enqueue) == call.context.span_id
    assert parent_id(run) == enqueue.context.span_id
    assert parent_id(agent) == run.context.span_id
    assert parent_id(commit) == run.context.span_id
    # with the A2A and GenAI names
    assert attributes(call)["a2a.method.name"] == "SendMessage"
    assert attributes(call)["a2a.task.id"] == answer["id"]
    assert attributes(call)["gen_ai.conversation.id"] == answer["contextId"]
    assert attributes(call)["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert attributes(agent)["gen_ai.operation.name"] == "invoke_agent"
    assert attributes(agent)["a2a.task.id"] == answer["id"]
    assert attributes(commit)["a2a_serverless.commit.events"] >= 1
    assert attributes(commit)["a2a_serverless.commit.bytes"] > 0


async def test_a_crashed_run_is_an_error_without_its_message() -> None:
    # Given an executor that raises (the demo's "fail")
    async with memory_app() as client:
        await client.post("/", json=send("fail"), headers=HEADERS)
    spans = finished()

    # Then the agent's span and the run's are errors naming the exception's class, not its text
    for name in ("invoke_agent DemoAgentExecutor", "process work"):
        span = spans[name]
        assert span.status.is_ok is False, name
        assert attributes(span)["error.type"] == "RuntimeError"
    assert "demo failure requested" not in all_text(spans)


async def test_no_message_text_goes_into_a_span_by_default() -> None:
    async with memory_app() as client:
        await client.post("/", json=send(SECRET), headers=HEADERS)
    assert SECRET not in all_text(finished())


async def test_content_opted_in_puts_the_message_on_the_agent_span(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given A2A_TRACING_CONTENT=true
    monkeypatch.setenv(telemetry.CONTENT_ENV, "true")
    telemetry.reset()

    async with memory_app() as client:
        await client.post("/", json=send(SECRET), headers=HEADERS)

    # Then the agent's span carries the input message (GenAI's gen_ai.input.messages)
    agent = finished()["invoke_agent DemoAgentExecutor"]
    assert SECRET in attributes(agent)["gen_ai.input.messages"]


async def test_a_caller_s_traceparent_is_the_call_s_parent() -> None:
    trace_id, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    async with memory_app() as client:
        headers = {**HEADERS, "traceparent": f"00-{trace_id}-{parent}-01"}
        await client.post("/", json=send("hello"), headers=headers)
    call = finished()["SendMessage"]
    assert format(call.context.trace_id, "032x") == trace_id
    assert format(parent_id(call) or 0, "016x") == parent


async def test_the_rest_binding_names_the_same_method() -> None:
    async with memory_app() as client:
        body = {"message": {"messageId": "m-rest", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}
        await client.post("/message:send", json=body, headers=HEADERS)
    call = finished()["SendMessage"]
    assert attributes(call)["a2a.message.id"] == "m-rest"


async def test_a_refused_call_is_its_error_type() -> None:
    async with memory_app() as client:
        params = {"id": "no-such-task"}
        await client.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": params}, headers=HEADERS)
    call = finished()["GetTask"]
    # TaskNotFound is the caller's error (-32001): named, but not a server fault
    assert attributes(call)["error.type"] == "-32001"
    assert attributes(call)["a2a.task.id"] == "no-such-task"
    assert call.status.is_unset


async def test_the_agent_s_own_spans_nest_under_its_invoke_agent_span() -> None:
    # Given an agent that traces its own step with the standard API (traced_agent.py)
    async with memory_app(executor="traced_agent:TracedAgent") as client:
        await client.post("/", json=send("look"), headers=HEADERS)
    spans = finished()

    # Then its span is in the turn's trace, the child of the kit's span for its run
    agent, own = spans["invoke_agent TracedAgent"], spans["look things up"]
    assert own.context.trace_id == spans["SendMessage"].context.trace_id
    assert parent_id(own) == agent.context.span_id
