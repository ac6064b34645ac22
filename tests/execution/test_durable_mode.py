"""Durable execution mode on the official local runner of durable executions
(aws-durable-execution-sdk-python-testing): checkpoints, replay, callback waits, as on Lambda.

The operations are the ordinary ones (SendMessage, CancelTask, GetTask) on a memory store; only
the runtime's mode differs: each task runs as one durable execution named after it, a turn is one
step, and a task that asks for input waits on a callback with no invocation running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from aws_durable_execution_sdk_python.context import DurableContext
from aws_durable_execution_sdk_python.execution import InvocationStatus, durable_execution

from a2a_serverless.adapters.local_durable import LocalDurableRuns
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.execution.durable import INPUT_WAIT_TEXT, run_task
from a2a_serverless.models import (
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_serverless.operations import CallContext
from a2a_serverless.operations.cancel_task import cancel_task
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, TaskHead
from a2a_serverless.runtime import Runtime, build_runtime

CTX = CallContext(principal=Principal("alice", authenticated=True))
SCOPE = Scope("", "alice")
S = TaskState


@dataclass
class Durable:
    runtime: Runtime
    runs: LocalDurableRuns
    store: MemoryTaskStore
    active: list[int]
    """Invocations of the durable worker running right now (one counter)."""

    def send(self, text: str, message_id: str, task_id: str = "") -> str:
        message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)
        request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))
        return submit_message(request, CTX, self.runtime).task.id

    def head(self, task_id: str) -> TaskHead:
        head = self.store.get_head(SCOPE, task_id)
        assert head is not None
        return head

    def until(self, task_id: str, done: Callable[[TaskHead], bool], within: float = 20.0) -> TaskHead:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            head = self.head(task_id)
            if done(head):
                return head
            time.sleep(0.02)
        raise AssertionError(f"task {task_id} never got there: {self.head(task_id)}")

    def result(self, task_id: str) -> Any:
        arn = self.runs.execution_arn(task_id)
        assert arn is not None, "no execution was started for the task"
        return self.runs.runner.wait_for_result(arn, timeout=20)


def _durable(**settings: Any) -> Iterator[Durable]:
    store = MemoryTaskStore()
    active = [0]
    lock = threading.Lock()
    holder: dict[str, Runtime] = {}

    @durable_execution
    def worker(event: Any, context: DurableContext) -> dict[str, Any]:
        with lock:
            active[0] += 1
        try:
            return run_task(event, context, holder["runtime"])
        finally:
            with lock:
                active[0] -= 1

    runs = LocalDurableRuns(worker, execution_timeout=120)
    config = Settings(store="memory", execution_mode="durable", poll_interval_seconds=0.01, **settings)
    runtime = build_runtime(config, store=store, durable=runs)
    holder["runtime"] = runtime
    try:
        yield Durable(runtime, runs, store, active)
    finally:
        runs.close()


@pytest.fixture
def durable() -> Iterator[Durable]:
    yield from _durable()


def test_a_task_runs_as_one_execution_named_after_it(durable: Durable) -> None:
    task_id = durable.send("hello", "m-1")

    result = durable.result(task_id)

    assert result.status is InvocationStatus.SUCCEEDED
    record = durable.store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is S.TASK_STATE_COMPLETED
    assert [a.parts[0].text for a in record.task.artifacts] == ["Echo: hello"]
    assert result.get_step("turn-1") is not None


def test_a_task_waiting_for_input_holds_no_invocation_and_the_answer_resumes_it(durable: Durable) -> None:
    # Given a task that asked for input
    task_id = durable.send("ask me", "m-1")
    waiting = durable.until(task_id, lambda h: bool(h.waiting_callback))
    assert waiting.state is S.TASK_STATE_INPUT_REQUIRED

    # Then no invocation of the worker runs while it waits (the execution is suspended)
    deadline = time.monotonic() + 10
    while durable.active[0] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert durable.active == [0]
    assert durable.runs.runner.wait_for_callback(durable.runs.execution_arn(task_id) or "", name="input-1")

    # When the answer comes, the same execution goes on with it
    assert durable.send("Ann", "m-2", task_id) == task_id
    result = durable.result(task_id)

    assert result.status is InvocationStatus.SUCCEEDED
    record = durable.store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is S.TASK_STATE_COMPLETED
    assert record.waiting_callback == ""
    assert result.get_step("turn-2") is not None


def test_cancel_during_the_wait_ends_the_task_and_its_execution(durable: Durable) -> None:
    task_id = durable.send("ask me", "m-1")
    durable.until(task_id, lambda h: bool(h.waiting_callback))

    canceled = cancel_task(CancelTaskRequest(id=task_id), CTX, durable.runtime)

    assert canceled.status.state is S.TASK_STATE_CANCELED
    result = durable.result(task_id)
    assert result.status is InvocationStatus.SUCCEEDED  # the execution ended itself
    record = durable.store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is S.TASK_STATE_CANCELED


def test_a_wait_past_the_limit_fails_the_task_as_documented() -> None:
    for durable in _durable(input_wait_seconds=1):
        task_id = durable.send("ask me", "m-1")

        result = durable.result(task_id)

        assert result.status is InvocationStatus.SUCCEEDED
        record = durable.store.get_task(SCOPE, task_id)
        assert record is not None
        assert record.state is S.TASK_STATE_FAILED
        assert record.task.status.message is not None
        assert record.task.status.message.parts[0].text == INPUT_WAIT_TEXT


def test_a_second_start_of_a_task_is_harmless(durable: Durable) -> None:
    # A re-sent first message queues its work again (the idempotent send's healing): the execution
    # of that name goes on, nothing runs twice
    task_id = durable.send("hello", "m-1")
    durable.send("hello", "m-1")
    durable.result(task_id)
    record = durable.store.get_task(SCOPE, task_id)
    assert record is not None
    assert [a.parts[0].text for a in record.task.artifacts] == ["Echo: hello"]
    assert record.task.history[0].message_id == "m-1"
