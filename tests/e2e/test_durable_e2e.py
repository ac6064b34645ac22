"""End to end in durable mode (``A2A_EXECUTION_MODE=durable``, docs/durable-tasks.md): the real local
stack (``a2a-serverless dev``: moto, uvicorn, the function processes), where each task runs as a
durable execution of the durable worker on the official local runner in the API process, driven by
the official a2a-sdk 1.x client.

``GET /_local/durable`` (the local stack's view of the durable worker, in durable mode only) tells
how many invocations of the worker run: a task that waits for input holds none.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from e2e_stack import running_stack

from testkit.sdk import sdk_session, send, user_message

pytestmark = pytest.mark.e2e

S = TaskState
STATUS = "/_local/durable"


@pytest.fixture(scope="module")
def durable_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a local stack in durable mode."""
    settings = {"A2A_EXECUTION_MODE": "durable"}
    with running_stack(tmp_path_factory.mktemp("durable-stack"), settings) as (base_url, stack):
        assert any("execution mode durable" in line for line in stack.stdout + stack.stderr), stack.output()
        yield base_url


async def durable_status(base_url: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=10.0) as http:
        response = await http.get(f"{base_url}{STATUS}")
    assert response.status_code == 200, response.text
    status: dict[str, Any] = response.json()
    return status


async def until_idle(base_url: str, within: float = 10.0) -> dict[str, Any]:
    """The durable worker's status once no invocation of it runs (a hang guard, not a timing)."""
    deadline = time.monotonic() + within
    while True:
        status = await durable_status(base_url)
        if status["invocationsRunning"] == 0:
            return status
        assert time.monotonic() < deadline, f"an invocation of the durable worker kept running: {status}"
        await asyncio.sleep(0.05)


async def ask(client: Client) -> Task:
    """A task that asked for input (the demo agent: 'ask me' -> 'What is your name?')."""
    task = await send(client, SendMessageRequest(message=user_message("ask me")))
    assert task.status.state == S.TASK_STATE_INPUT_REQUIRED, task
    assert [p.text for p in task.status.message.parts] == ["What is your name?"]
    return task


@pytest.mark.asyncio
async def test_the_stack_says_it_runs_durable_mode(durable_stack: str) -> None:
    status = await durable_status(durable_stack)
    assert status["executionMode"] == "durable"
    assert status["function"] == "a2a-local-DurableWorkerFunction"


@pytest.mark.asyncio
async def test_a_blocking_hello_runs_as_a_durable_execution(durable_stack: str) -> None:
    before = await durable_status(durable_stack)
    async with sdk_session(durable_stack) as session:
        client = session.client
        task = await send(client, SendMessageRequest(message=user_message("hello durable")))

    assert task.status.state == S.TASK_STATE_COMPLETED
    assert [p.text for p in task.artifacts[0].parts] == ["Echo: hello durable"]
    after = await until_idle(durable_stack)
    assert after["executions"] == before["executions"] + 1
    assert after["invocations"] > before["invocations"]


@pytest.mark.asyncio
async def test_a_multi_turn_task_waits_for_input_with_no_invocation_and_the_answer_completes_it(
    durable_stack: str,
) -> None:
    async with sdk_session(durable_stack) as session:
        client = session.client
        asked = await ask(client)

        # While it waits for input, no invocation of the durable worker runs
        waiting = await until_idle(durable_stack)
        got = await client.get_task(GetTaskRequest(id=asked.id))
        assert got.status.state == S.TASK_STATE_INPUT_REQUIRED
        assert (await durable_status(durable_stack))["invocationsRunning"] == 0

        # The answer resumes the same execution, which runs the second turn
        answer = user_message("Ann", task_id=asked.id, context_id=asked.context_id)
        done = await send(client, SendMessageRequest(message=answer))

    assert done.id == asked.id
    assert done.status.state == S.TASK_STATE_COMPLETED
    assert [p.text for a in done.artifacts for p in a.parts] == ["Nice to meet you, Ann!"]
    after = await until_idle(durable_stack)
    assert after["executions"] == waiting["executions"]  # the same execution went on
    assert after["invocations"] > waiting["invocations"]


@pytest.mark.asyncio
async def test_cancel_during_the_wait_cancels_the_task(durable_stack: str) -> None:
    async with sdk_session(durable_stack) as session:
        client = session.client
        asked = await ask(client)
        await until_idle(durable_stack)

        canceled = await client.cancel_task(CancelTaskRequest(id=asked.id))
        assert canceled.status.state == S.TASK_STATE_CANCELED

        final = await client.get_task(GetTaskRequest(id=asked.id))
    assert final.status.state == S.TASK_STATE_CANCELED
    await until_idle(durable_stack)  # the woken execution ended


@pytest.mark.asyncio
async def test_a_stream_of_hello(durable_stack: str) -> None:
    async with sdk_session(durable_stack, streaming=True) as session:
        client = session.client
        request = SendMessageRequest(
            message=user_message("hello stream"), configuration=SendMessageConfiguration(return_immediately=False)
        )
        events: list[StreamResponse] = [event async for event in client.send_message(request)]

    assert events[0].HasField("task")
    task_id = events[0].task.id
    states = [
        e.status_update.status.state if e.HasField("status_update") else e.task.status.state
        for e in events
        if e.HasField("status_update") or e.HasField("task")
    ]
    assert states[-1] == S.TASK_STATE_COMPLETED, [S.Name(s) for s in states]
    texts = [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts]
    assert texts == ["Echo: hello stream"]
    assert all(
        (e.status_update.task_id if e.HasField("status_update") else e.artifact_update.task_id) == task_id
        for e in events[1:]
    )
