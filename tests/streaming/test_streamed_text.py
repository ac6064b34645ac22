"""An answer streamed token by token, driven by the official a2a-sdk 1.x client on both bindings.

The app runs under uvicorn on 127.0.0.1 against a memory runtime whose work queue runs the real
worker on threads, with an agent that streams its answer as one ``append`` artifact update per
token. The stream carries every token as its own event; GetTask, ListTasks, a blocking SendMessage's
answer and the Task a stream or a subscription starts with hold the answer as one text part (the
fold joins appended text: ``lifecycle.append_parts``); a subscriber that applies the updates after
its snapshot, joining the same way, ends with the task as stored; a v0.3 client reads one TextPart.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import pytest
from a2a.client import Client
from a2a.types import (
    Artifact,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)

from a2a_serverless.config import Settings
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import Part
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.sdk import sdk_session, send, user_message
from testkit.served import served

pytestmark = pytest.mark.asyncio

BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]
GUARD_SECONDS = 60.0
"""A hang guard on waits for the agent or a stream: generous, never a measured expectation."""
COMPLETED = TaskState.TASK_STATE_COMPLETED


def tokens_of(text: str) -> list[str]:
    """``text`` as a model streams it: words, the spaces between them their own tokens."""
    out: list[str] = []
    for n, word in enumerate(text.split(" ")):
        out += [" ", word] if n else [word]
    return out


class TokenExecutor(AgentExecutor):
    """Streams ``<context id> heard: <the user's words>`` one token per ``append`` artifact update
    of its one ``answer`` artifact. A message starting ``pause`` stops after half its tokens until
    the test opens :attr:`gate`."""

    gate: ClassVar[threading.Semaphore] = threading.Semaphore(0)
    paused: ClassVar[threading.Semaphore] = threading.Semaphore(0)
    """Released once a paused run has emitted its first half."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        said = context.get_user_input()
        tokens = tokens_of(f"{context.context_id[:7]} heard: {said}")
        await updater.start_work()
        for n, token in enumerate(tokens):
            if said.startswith("pause") and n == len(tokens) // 2:
                TokenExecutor.paused.release()
                assert await asyncio.to_thread(TokenExecutor.gate.acquire, timeout=GUARD_SECONDS)
            await updater.add_artifact(
                [Part(text=token)],
                artifact_id="answer",
                name="answer" if n == 0 else "",
                append=n > 0,
                last_chunk=n == len(tokens) - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


@dataclass
class Agent:
    base_url: str
    runtime: Runtime


@asynccontextmanager
async def agent() -> AsyncIterator[Agent]:
    executor = f"{TokenExecutor.__module__}:{TokenExecutor.__qualname__}"
    settings = Settings(store="memory", executor=executor, poll_interval_seconds=0.01, stream_poll_seconds=0.01)
    runtime = build_runtime(settings)
    try:
        with served(create_app(runtime)) as base_url:
            yield Agent(base_url, runtime)
    finally:
        await asyncio.to_thread(runtime.queue.shutdown)  # type: ignore[attr-defined]


def chunks(events: list[StreamResponse]) -> list[str]:
    """The text of each artifact update of ``events``, one entry per event."""
    return ["".join(p.text for p in e.artifact_update.artifact.parts) for e in events if e.HasField("artifact_update")]


def one_text(artifact: Artifact) -> str:
    """The artifact's one part, which must be text."""
    assert len(artifact.parts) == 1, list(artifact.parts)
    assert artifact.parts[0].HasField("text")
    return str(artifact.parts[0].text)


def apply_appends(parts: list[str], events: list[StreamResponse]) -> list[str]:
    """A client's fold of a stream's artifact updates onto the text parts it holds (one artifact of
    text parts without metadata): an appended update's first text continues the last part."""
    out = list(parts)
    for e in events:
        if not e.HasField("artifact_update"):
            continue
        texts = [p.text for p in e.artifact_update.artifact.parts]
        if e.artifact_update.append and out:
            out[-1] += texts[0]
            out += texts[1:]
        else:
            out = texts
    return out


async def stream_of(client: Client, text: str) -> list[StreamResponse]:
    events: list[StreamResponse] = []
    async with asyncio.timeout(GUARD_SECONDS):
        async for event in client.send_message(SendMessageRequest(message=user_message(text))):
            events.append(event)
    return events


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streamed_answer_is_one_text_part_wherever_the_task_is_read(binding: str) -> None:
    async with (
        agent() as served_agent,
        sdk_session(served_agent.base_url, binding, streaming=True) as streaming,
        sdk_session(served_agent.base_url, binding) as plain,
    ):
        # Given an answer streamed as 7 tokens: "<ctx> heard: what a day"
        events = await stream_of(streaming.client, "what a day")

        # Then the stream carried each token as its own event, as it came
        assert events[0].HasField("task")
        task_id = events[0].task.id
        whole = f"{events[0].task.context_id[:7]} heard: what a day"
        assert chunks(events) == tokens_of(whole)
        assert len(chunks(events)) == 9
        assert events[-1].status_update.status.state == COMPLETED

        # And GetTask has the answer as one text part
        got = await plain.client.get_task(GetTaskRequest(id=task_id))
        assert [a.artifact_id for a in got.artifacts] == ["answer"]
        assert one_text(got.artifacts[0]) == whole
        assert got.artifacts[0].name == "answer"

        # And so does ListTasks
        listed = await plain.client.list_tasks(ListTasksRequest(include_artifacts=True))
        (mine,) = [t for t in listed.tasks if t.id == task_id]
        assert one_text(mine.artifacts[0]) == whole

        # And a blocking SendMessage's answer
        answered = await send(plain.client, SendMessageRequest(message=user_message("and a night")))
        assert answered.status.state == COMPLETED
        assert one_text(answered.artifacts[0]) == f"{answered.context_id[:7]} heard: and a night"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_subscriber_gets_the_joined_text_then_only_later_tokens(binding: str) -> None:
    async with (
        agent() as served_agent,
        sdk_session(served_agent.base_url, binding, streaming=True) as streaming,
        sdk_session(served_agent.base_url, binding) as plain,
    ):
        # Given a run that streamed the first half of its tokens and waits
        configuration = SendMessageConfiguration(return_immediately=True)
        request = SendMessageRequest(message=user_message("pause for one two three"), configuration=configuration)
        task = await send(plain.client, request)
        assert await asyncio.to_thread(TokenExecutor.paused.acquire, timeout=GUARD_SECONDS)
        whole = f"{task.context_id[:7]} heard: pause for one two three"
        tokens = tokens_of(whole)
        half = len(tokens) // 2
        async with asyncio.timeout(GUARD_SECONDS):  # its last commit may still be on its way
            while True:
                seen = await plain.client.get_task(GetTaskRequest(id=task.id))
                if seen.artifacts and "".join(p.text for p in seen.artifacts[0].parts) == "".join(tokens[:half]):
                    break
                await asyncio.sleep(0.05)

        # When a client subscribes, and the run goes on
        subscribed: list[StreamResponse] = []
        async with asyncio.timeout(GUARD_SECONDS):
            async for event in streaming.client.subscribe(SubscribeToTaskRequest(id=task.id)):
                subscribed.append(event)
                if len(subscribed) == 1:
                    TokenExecutor.gate.release()

        # Then the Task it starts with holds the first half as one text part
        snapshot = subscribed[0].task
        assert snapshot.id == task.id
        assert one_text(snapshot.artifacts[0]) == "".join(tokens[:half])
        # and the stream then carried only the later tokens, each as it came
        assert chunks(subscribed) == tokens[half:]
        assert subscribed[-1].status_update.status.state == COMPLETED
        # and applying them to the snapshot, joining appended text, gives the task as stored
        stored = await plain.client.get_task(GetTaskRequest(id=task.id))
        assert apply_appends([one_text(snapshot.artifacts[0])], subscribed) == [one_text(stored.artifacts[0])]
        assert one_text(stored.artifacts[0]) == whole


async def test_a_v03_client_reads_the_streamed_answer_as_one_text_part() -> None:
    async with agent() as served_agent, sdk_session(served_agent.base_url, streaming=True) as streaming:
        events = await stream_of(streaming.client, "old friend")
        task_id = events[0].task.id
        whole = f"{events[0].task.context_id[:7]} heard: old friend"
        async with httpx.AsyncClient(base_url=served_agent.base_url, timeout=GUARD_SECONDS) as http:
            rpc = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
            answer: dict[str, Any] = (await http.post("/", json=rpc)).json()
            rest: dict[str, Any] = (await http.get(f"/v1/tasks/{task_id}")).json()
        assert answer["result"]["artifacts"][0]["parts"] == [{"kind": "text", "text": whole}]
        assert rest["artifacts"][0]["parts"] == [{"text": whole}]
