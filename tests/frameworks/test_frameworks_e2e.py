"""The five framework adapters end to end: ONE ``a2a-serverless dev`` (DynamoDB and S3 on moto, the
SQS worker, API keys for two callers) serving ``stack_agents.executor``, which hands each message to
the framework its metadata names, driven by the a2a-sdk client. For each framework: the streamed
answer, a tool call, an interrupt and its resume, cancel mid-stream, and two owners of one context
id. One stack
for the five: a stack start (and the five frameworks' imports in it) costs more than all the
stories together."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from a2a.types import CancelTaskRequest, SendMessageRequest, StreamResponse, Task, TaskState
from google.protobuf.json_format import MessageToDict

from testkit.devstack import DevStack
from testkit.sdk import Session, sdk_session, send, user_message

pytestmark = pytest.mark.e2e

KEYS = {"alice-key": "alice", "bob-key": "bob"}
TESTS = Path(__file__).resolve().parents[1]
APPROVAL = "Approve calling tool post? Reply yes to approve, anything else to "

FRAMEWORKS = [
    pytest.param(("strands", "Shall I post it?", "Done: posted (yes)."), id="strands"),
    pytest.param(("langgraph", "Shall I post it?", "Draft. Posted (yes)."), id="langgraph"),
    pytest.param(("pydantic_ai", APPROVAL + "deny.", "Done: posted."), id="pydantic-ai"),
    pytest.param(("openai_agents", APPROVAL + "deny.", "Done: posted."), id="openai-agents"),
    pytest.param(("google_adk", APPROVAL + "reject.", "Done: posted."), id="google-adk"),
]
"""Each framework, the question its pause asks, and the answer once the reply "yes" resumed it."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The local stack serving the five frameworks' agents: its base URL. A card file, so the API
    serves the card without importing the frameworks."""
    home = tmp_path_factory.mktemp("frameworks")
    (home / "card.json").write_text(json.dumps({"name": "Five", "description": "The five frameworks' agents"}))
    env = {
        "A2A_EXECUTOR": "frameworks.stack_agents:executor",
        "A2A_CARD_FILE": str(home / "card.json"),
        "A2A_AUTH_MODE": "api-key",
        "A2A_API_KEYS": json.dumps(KEYS),
        "PYTHONPATH": str(TESTS),
    }
    with DevStack.running(home, env, wait=240) as served:  # five frameworks to import: under load, minutes
        yield served.base


@pytest.fixture(params=FRAMEWORKS)
def framework(request: pytest.FixtureRequest) -> tuple[str, str, str]:
    name, question, resumed = request.param
    return name, question, resumed


@asynccontextmanager
async def caller(base: str, owner: str = "alice", *, streaming: bool = False) -> AsyncIterator[Session]:
    key = next(key for key, name in KEYS.items() if name == owner)
    async with sdk_session(base, streaming=streaming, headers={"Authorization": f"Bearer {key}"}) as session:
        yield session


def to(name: str, text: str, **fields: Any) -> SendMessageRequest:
    """A SendMessage of ``text`` for the agent of framework ``name``."""
    return SendMessageRequest(message=user_message(text, metadata={"framework": name}, **fields))


def chunks(events: list[StreamResponse]) -> list[tuple[str, bool, bool]]:
    return [
        (
            "".join(p.text for p in e.artifact_update.artifact.parts),
            e.artifact_update.append,
            e.artifact_update.last_chunk,
        )
        for e in events
        if e.HasField("artifact_update")
    ]


def text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


def test_the_answer_streams_as_one_artifact_chunk_by_chunk_with_the_last_marked(
    stack: str, framework: tuple[str, str, str]
) -> None:
    name = framework[0]

    async def scenario() -> list[StreamResponse]:
        async with caller(stack, streaming=True) as session:
            return [e async for e in session.client.send_message(to(name, "hello"))]

    events = asyncio.run(scenario())

    streamed = chunks(events)
    assert len(streamed) > 1
    assert "".join(text for text, _, _ in streamed) == "You said: hello"
    assert [(append, last) for _, append, last in streamed] == [(False, False)] + [(True, False)] * (
        len(streamed) - 2
    ) + [(True, True)]
    assert len({e.artifact_update.artifact.artifact_id for e in events if e.HasField("artifact_update")}) == 1
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


def test_a_tool_call_is_a_working_status_naming_the_tool(stack: str, framework: tuple[str, str, str]) -> None:
    name = framework[0]

    async def scenario() -> list[StreamResponse]:
        async with caller(stack, streaming=True) as session:
            return [e async for e in session.client.send_message(to(name, "weather in Paris?"))]

    events = asyncio.run(scenario())

    tools = [
        MessageToDict(e.status_update.metadata)
        for e in events
        if e.HasField("status_update") and e.status_update.status.state == TaskState.TASK_STATE_WORKING
    ]
    assert [tool["tool"] for tool in tools if tool] == ["weather"]
    assert "".join(text for text, _, _ in chunks(events)) == "Done: sunny in Paris."
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


def test_an_interrupt_is_input_required_and_the_reply_on_the_task_resumes_it(
    stack: str, framework: tuple[str, str, str]
) -> None:
    name, question, resumed = framework

    async def scenario() -> tuple[Task, Task]:
        async with caller(stack) as session:
            asked = await send(session.client, to(name, "post it"))
            reply = to(name, "yes", task_id=asked.id, context_id=asked.context_id)
            return asked, await send(session.client, reply)

    asked, done = asyncio.run(scenario())

    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert asked.status.message.parts[0].text == question
    assert (done.id, done.status.state) == (asked.id, TaskState.TASK_STATE_COMPLETED)
    assert text(done) == resumed


def test_cancel_mid_stream_ends_the_task_canceled_with_no_chunk_after(
    stack: str, framework: tuple[str, str, str]
) -> None:
    name = framework[0]

    async def scenario() -> list[StreamResponse]:
        events: list[StreamResponse] = []
        async with caller(stack, streaming=True) as streaming, caller(stack) as other:
            async for event in streaming.client.send_message(to(name, "forever")):
                events.append(event)
                if event.HasField("artifact_update") and len(chunks(events)) == 3:  # once, at the third
                    await other.client.cancel_task(CancelTaskRequest(id=event.artifact_update.task_id))
        return events

    events = asyncio.run(scenario())

    assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
    ended = next(
        i
        for i, e in enumerate(events)
        if e.HasField("status_update") and e.status_update.status.state == TaskState.TASK_STATE_CANCELED
    )
    assert ended == len(events) - 1  # nothing after CANCELED
    assert len(chunks(events)) >= 3


def test_turns_of_a_context_share_memory_and_two_owners_of_one_context_id_never_do(
    stack: str, framework: tuple[str, str, str]
) -> None:
    name, context = framework[0], str(uuid.uuid4())

    async def scenario() -> list[Task]:
        async with caller(stack) as alice, caller(stack, "bob") as bob:
            return [
                await send(alice.client, to(name, "I am Alice", context_id=context)),
                await send(bob.client, to(name, "I am Bob", context_id=context)),
                await send(alice.client, to(name, "who am I?", context_id=context)),
                await send(bob.client, to(name, "who am I?", context_id=context)),
            ]

    tasks = asyncio.run(scenario())

    assert [(task.context_id, task.status.state) for task in tasks] == [(context, TaskState.TASK_STATE_COMPLETED)] * 4
    assert [text(task) for task in tasks] == [
        "You said: I am Alice",
        "You said: I am Bob",
        "You said: I am Alice | who am I?",
        "You said: I am Bob | who am I?",
    ]
