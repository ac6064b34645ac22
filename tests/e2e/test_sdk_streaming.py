"""Streaming end to end on the real local stack, driven by the official a2a-sdk 1.x client.

``ClientConfig(streaming=True)`` over each binding: SendStreamingMessage delivers the Task first,
then the status updates, the artifact and the final COMPLETED status, in order; a client that
hung up mid-stream subscribes again (``Client.subscribe``) and follows the task to its end; a
multi-turn exchange ends its first stream at INPUT_REQUIRED and continues on a new one.
(A message-only reply needs a different agent than the demo: see tests/streaming.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)

from testkit.sdk import user_message

pytestmark = pytest.mark.e2e

BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED
EVENT_GUARD_SECONDS = 30.0
"""A hang guard on each awaited event: generous, and half the 60 s task that needs it."""


@dataclass
class Clients:
    streaming: Client
    plain: Client
    """The same agent without streaming (SendMessage with returnImmediately)."""
    requests: list[tuple[str, str]]


@asynccontextmanager
async def sdk_clients(base_url: str, binding: str) -> AsyncIterator[Clients]:
    requests: list[tuple[str, str]] = []

    async def record(request: httpx.Request) -> None:
        requests.append((request.method, request.url.path))

    async with httpx.AsyncClient(timeout=60.0, event_hooks={"request": [record]}) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        assert card.capabilities.streaming
        streaming = ClientFactory(
            ClientConfig(supported_protocol_bindings=[binding], streaming=True, httpx_client=http)
        ).create(card)
        plain = ClientFactory(
            ClientConfig(supported_protocol_bindings=[binding], streaming=False, httpx_client=http)
        ).create(card)
        try:
            yield Clients(streaming=streaming, plain=plain, requests=requests)
        finally:
            await streaming.close()
            await plain.close()


def kind(event: StreamResponse) -> str:
    name = event.WhichOneof("payload")
    assert name is not None, event
    return name


def state_of(event: StreamResponse) -> Any:
    if event.HasField("task"):
        return event.task.status.state
    if event.HasField("status_update"):
        return event.status_update.status.state
    return None


def progress_texts(events: list[StreamResponse]) -> list[str]:
    return [
        p.text
        for e in events
        if e.HasField("status_update") and e.status_update.status.HasField("message")
        for p in e.status_update.status.message.parts
        if p.text.startswith("worked ")
    ]


def assert_lifecycle(events: list[StreamResponse], final: Any) -> str:
    """The Task first, then updates of that task only, ending at ``final`` and nowhere before."""
    assert events, "no events"
    assert kind(events[0]) == "task", events[0]
    task_id = events[0].task.id
    assert task_id
    for event in events[1:]:
        assert kind(event) in {"status_update", "artifact_update"}, event
        update = event.status_update if event.HasField("status_update") else event.artifact_update
        assert update.task_id == task_id
        assert update.context_id == events[0].task.context_id
    states = [state_of(e) for e in events if state_of(e) is not None]
    assert states[-1] == final, [TaskState.Name(s) for s in states]
    assert state_of(events[-1]) == final
    assert not ({*states[:-1]} & (TERMINAL | {final})), [TaskState.Name(s) for s in states]
    return str(task_id)


def assert_binding(clients: Clients, binding: str, rest_paths: set[str]) -> None:
    calls = [r for r in clients.requests if r[1] != "/.well-known/agent-card.json"]
    assert calls
    if binding == "JSONRPC":
        assert all(r == ("POST", "/") for r in calls), calls
    else:
        assert all(r[1] != "/" for r in calls), calls
        assert {path.rsplit("/", 1)[-1].split(":")[-1] for _, path in calls} >= rest_paths, calls


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_streaming_send_delivers_task_updates_artifact_and_completed_in_order(
    devstack: str, binding: str
) -> None:
    async with sdk_clients(devstack, binding) as clients:
        request = SendMessageRequest(message=user_message("sleep 2"))
        events = [event async for event in clients.streaming.send_message(request)]

        assert_lifecycle(events, COMPLETED)
        assert events[0].task.status.state in {TaskState.TASK_STATE_SUBMITTED, WORKING}
        kinds = [kind(e) for e in events]
        assert kinds.count("artifact_update") == 1
        assert kinds.index("artifact_update") == len(kinds) - 2  # the artifact, then COMPLETED
        assert [p.text for p in events[-2].artifact_update.artifact.parts] == ["slept 2s"]
        assert progress_texts(events) == ["worked 1s of 2s", "worked 2s of 2s"]
        assert [state_of(e) for e in events[1:-1] if e.HasField("status_update")] == [WORKING] * (
            kinds.count("status_update") - 1
        )
        assert_binding(clients, binding, {"stream"})


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streaming_send_delivers_each_event_while_the_task_works(devstack: str, binding: str) -> None:
    async with sdk_clients(devstack, binding) as clients:
        # Given a task that works for a minute, beyond the hang guard on each event
        stream = clients.streaming.send_message(SendMessageRequest(message=user_message("sleep 60")))
        # When the stream is open, the Task and the first progress report arrive while it works
        # (a stream held back until the task ends would give nothing within the guard)
        events = [await asyncio.wait_for(anext(stream), EVENT_GUARD_SECONDS)]
        assert kind(events[0]) == "task"
        task_id = events[0].task.id
        while not progress_texts(events):
            events.append(await asyncio.wait_for(anext(stream), EVENT_GUARD_SECONDS))
        assert progress_texts(events) == ["worked 1s of 60s"]
        assert (await clients.plain.get_task(GetTaskRequest(id=task_id))).status.state == WORKING
        # Then, the task canceled, the same stream follows it to CANCELED and closes
        await clients.plain.cancel_task(CancelTaskRequest(id=task_id))

        async def rest() -> None:
            events.extend([event async for event in stream])

        await asyncio.wait_for(rest(), EVENT_GUARD_SECONDS)
        assert assert_lifecycle(events, TaskState.TASK_STATE_CANCELED) == task_id
        assert not any(e.HasField("artifact_update") for e in events)
        assert_binding(clients, binding, {"stream", "cancel"})


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_subscribe_to_a_running_task_follows_it_to_the_end(devstack: str, binding: str) -> None:
    async with sdk_clients(devstack, binding) as clients:
        sent = [
            e
            async for e in clients.plain.send_message(
                SendMessageRequest(
                    message=user_message("sleep 2"), configuration=SendMessageConfiguration(return_immediately=True)
                )
            )
        ]
        assert len(sent) == 1
        task = sent[0].task
        assert task.status.state in {TaskState.TASK_STATE_SUBMITTED, WORKING}

        events = [e async for e in clients.streaming.subscribe(SubscribeToTaskRequest(id=task.id))]

        assert assert_lifecycle(events, COMPLETED) == task.id
        assert events[0].task.status.state in {TaskState.TASK_STATE_SUBMITTED, WORKING}
        assert [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts] == [
            "slept 2s"
        ]
        seen = progress_texts(events)
        expected = ["worked 1s of 2s", "worked 2s of 2s"]
        assert seen == expected[len(expected) - len(seen) :]  # what came after the snapshot, in order
        assert_binding(clients, binding, {"send", "subscribe"})


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_hang_up_mid_stream_then_subscribe_for_the_rest(devstack: str, binding: str) -> None:
    async with sdk_clients(devstack, binding) as clients:
        stream = clients.streaming.send_message(SendMessageRequest(message=user_message("sleep 3")))
        first = await anext(stream)
        await stream.aclose()  # the client hangs up after the Task
        assert kind(first) == "task"
        task_id = first.task.id

        events = [e async for e in clients.streaming.subscribe(SubscribeToTaskRequest(id=task_id))]

        assert assert_lifecycle(events, COMPLETED) == task_id
        assert events[0].task.status.state == WORKING
        assert [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts] == [
            "slept 3s"
        ]
        assert progress_texts(events)[-1:] == ["worked 3s of 3s"]
        assert_binding(clients, binding, {"stream", "subscribe"})


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_multi_turn_stream_ends_at_input_required_and_continues_on_a_new_stream(
    devstack: str, binding: str
) -> None:
    async with sdk_clients(devstack, binding) as clients:
        asked = [e async for e in clients.streaming.send_message(SendMessageRequest(message=user_message("ask me")))]
        task_id = assert_lifecycle(asked, TaskState.TASK_STATE_INPUT_REQUIRED)
        question = asked[-1].status_update.status.message
        assert [p.text for p in question.parts] == ["What is your name?"]

        answer = user_message("Ann", task_id=task_id, context_id=asked[0].task.context_id)
        answered = [e async for e in clients.streaming.send_message(SendMessageRequest(message=answer))]
        assert assert_lifecycle(answered, COMPLETED) == task_id
        assert [
            p.text for e in answered if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts
        ] == ["Nice to meet you, Ann!"]
