"""Durable execution mode on the official local runner of durable executions
(aws-durable-execution-sdk-python-testing): checkpoints, replay, callback waits, as on Lambda.

The operations are the ordinary ones (SendMessage, CancelTask, GetTask) on a memory store; only
the runtime's mode differs: each task runs as one durable execution named after it, a turn is one
step, and a task that asks for input waits on a callback with no invocation running.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest
from aws_durable_execution_sdk_python.execution import InvocationStatus

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.durable.turns import INPUT_WAIT_TEXT
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
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
from a2a_serverless.ports import Scope, TaskHead, WorkItem
from a2a_serverless.runtime import Runtime
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.durable import DurableLimits, LocalDurableWorker
from a2a_serverless_dev.local_durable import LocalDurableRuns

CTX = CallContext(principal=Principal("alice", authenticated=True))
SCOPE = Scope("", "alice")
S = TaskState


@dataclass
class Durable:
    runtime: Runtime
    """The API's runtime (SendMessage, CancelTask): its executions run on ``worker``."""
    worker: LocalDurableWorker
    """The durable worker on the local runner, as the local stack runs it, with its invocations counted."""
    store: MemoryTaskStore

    @property
    def runs(self) -> LocalDurableRuns:
        return self.worker.runs

    def invocations(self) -> int:
        return int(self.worker.status()["invocations"])

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


def _durable(*, invocation_timeout: int = 900, **settings: Any) -> Iterator[Durable]:
    store = MemoryTaskStore()
    config = Settings(store="memory", execution_mode="durable", poll_interval_seconds=0.01, **settings)
    limits = DurableLimits(invocation_timeout=invocation_timeout, execution_timeout=120)
    worker = LocalDurableWorker(config, limits=limits, store=store)
    runtime = build_runtime(config, store=store, durable=worker.runs)
    try:
        yield Durable(runtime, worker, store)
    finally:
        worker.close()


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
    while durable.worker.running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert durable.worker.running == 0
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


def test_a_second_execution_of_a_task_runs_nothing_twice(durable: Durable) -> None:
    # Lambda returns the execution a name already has; should a task's work still reach a second
    # execution (an at-least-once start), the run's conditional claim keeps the executor to one run
    task_id = durable.send("hello", "m-1")
    item = WorkItem(tenant="", owner="alice", task_id=task_id, message_id="m-1", turn=1)
    again = durable.runs.runner.run_async(
        input=json.dumps({"item": item.to_json()}), execution_name=f"{task_id}-again", execution_timeout=60
    )

    assert durable.result(task_id).status is InvocationStatus.SUCCEEDED
    second = durable.runs.runner.wait_for_result(again, timeout=20)
    assert second.status is InvocationStatus.SUCCEEDED
    # its claim skipped: while the first ran ("running"), or after it ("terminal")
    assert json.loads(second.result or "{}")["end"] in ("running", "terminal")
    record = durable.store.get_task(SCOPE, task_id)
    assert record is not None
    assert [a.parts[0].text for a in record.task.artifacts] == ["Echo: hello"]
    assert [k for k in _stored_kinds(durable, task_id) if k.startswith("TASK_STATE")] == [
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
    ]


# --------------------------------------------------------------------------- steps an executor marks

STEP_CALLS: list[str] = []


class ThreeSteps(AgentExecutor):
    """Three steps, each adding an artifact; ``sleep 1`` between the second and the third."""

    durable_steps = True
    step_seconds = 0.0

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        done = []
        for n in (1, 2, 3):
            done.append(await context.steps.run(f"step-{n}", partial(self._work, context.task_id, n, updater)))
            if n == 2:
                await context.steps.sleep(1, "rest")
        await updater.complete(message=updater.new_agent_message([Part(text=" ".join(done))]))

    async def _work(self, task_id: str, n: int, updater: TaskUpdater) -> str:
        STEP_CALLS.append(f"{task_id}:{n}")
        if self.step_seconds:
            await asyncio.sleep(self.step_seconds)
        await updater.add_artifact([Part(text=f"part {n}")], name=f"a{n}")
        return f"part-{n}"

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class FiveSlowSteps(ThreeSteps):
    step_seconds = 1.0

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for n in range(1, 6):
            await context.steps.run(f"step-{n}", partial(self._work, context.task_id, n, updater))
        await updater.complete()


def _path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _stored_kinds(durable: Durable, task_id: str) -> list[str]:
    out = []
    for stored in durable.store.read_events(SCOPE, task_id, limit=1000):
        event = stored.event
        if event.status_update is not None:
            out.append(event.status_update.status.state.name)
        elif event.artifact_update is not None:
            out.append(event.artifact_update.artifact.name)
        else:
            out.append("task" if event.task is not None else "message")
    return out


def test_a_three_step_run_recycled_between_steps_runs_each_step_once_and_writes_no_event_twice() -> None:
    # Every step leaves less than a step's time of its invocation: the run goes on in a new
    # invocation after each (and the sleep is another), which replays the steps before
    for durable in _durable(executor=_path(ThreeSteps), durable_invocation_seconds=1, durable_step_seconds=1):
        before = durable.invocations()
        task_id = durable.send("go", "m-1")

        result = durable.result(task_id)

        assert result.status is InvocationStatus.SUCCEEDED
        assert [c for c in STEP_CALLS if c.startswith(task_id)] == [f"{task_id}:{n}" for n in (1, 2, 3)]
        assert durable.invocations() - before >= 5  # the first, one after each step, one after the sleep
        assert _stored_kinds(durable, task_id) == [
            "task",
            "TASK_STATE_WORKING",
            "a1",
            "a2",
            "a3",
            "TASK_STATE_COMPLETED",
        ]
        record = durable.store.get_task(SCOPE, task_id)
        assert record is not None
        assert record.task.status.message is not None
        assert record.task.status.message.parts[0].text == "part-1 part-2 part-3"


def test_a_run_longer_than_the_functions_timeout_completes_step_by_step() -> None:
    # Five one-second steps and a four-second function timeout (the local runner ends an
    # invocation that outlives it): each invocation runs the steps that fit, then the run goes on
    for durable in _durable(
        executor=_path(FiveSlowSteps), invocation_timeout=4, durable_invocation_seconds=4, durable_step_seconds=2
    ):
        before = durable.invocations()
        task_id = durable.send("go", "m-1")

        result = durable.result(task_id)

        assert result.status is InvocationStatus.SUCCEEDED
        assert [c for c in STEP_CALLS if c.startswith(task_id)] == [f"{task_id}:{n}" for n in range(1, 6)]
        assert durable.invocations() - before >= 3
        assert _stored_kinds(durable, task_id).count("TASK_STATE_COMPLETED") == 1
        assert [k for k in _stored_kinds(durable, task_id) if k.startswith("a")] == ["a1", "a2", "a3", "a4", "a5"]


def test_steps_are_plain_calls_in_queue_mode() -> None:
    runtime = build_runtime(Settings(store="memory", executor=_path(ThreeSteps)), store=MemoryTaskStore())
    try:
        message = Message(message_id="m-q", role=Role.ROLE_USER, parts=[Part(text="go")])
        task_id = submit_message(SendMessageRequest(message=message), CTX, runtime).task.id
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            head = runtime.store.get_head(SCOPE, task_id)
            if head is not None and head.state.is_terminal:
                break
            time.sleep(0.02)
        record = runtime.store.get_task(SCOPE, task_id)
        assert record is not None
        assert record.state is S.TASK_STATE_COMPLETED
        assert [a.name for a in record.task.artifacts] == ["a1", "a2", "a3"]
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


class LongSleep(ThreeSteps):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await context.steps.run("before", partial(self._work, context.task_id, 1, updater))
        await context.steps.sleep(600, "nap")
        await context.steps.run("after", partial(self._work, context.task_id, 2, updater))
        await updater.complete()


def test_a_run_sleeping_holds_no_invocation_and_cancel_wakes_it_to_end_canceled() -> None:
    for durable in _durable(executor=_path(LongSleep), cancel_wait_seconds=0):
        sent_at = int(time.time())  # (read before the sleep began: however long ago that was)
        task_id = durable.send("go", "m-1")
        sleeping = durable.until(task_id, lambda h: bool(h.waiting_callback))
        assert sleeping.state is S.TASK_STATE_WORKING
        assert sleeping.lease_until > sent_at + 600  # the lease is held over the sleep
        deadline = time.monotonic() + 10
        while durable.worker.running and time.monotonic() < deadline:
            time.sleep(0.02)
        assert durable.worker.running == 0

        cancel_task(CancelTaskRequest(id=task_id), CTX, durable.runtime)

        ended = durable.until(task_id, lambda h: h.state.is_terminal)
        assert ended.state is S.TASK_STATE_CANCELED
        assert durable.result(task_id).status is InvocationStatus.SUCCEEDED
        assert [c for c in STEP_CALLS if c.startswith(task_id)] == [f"{task_id}:1"]


def test_the_steps_demo_agent_plans_across_invocations() -> None:
    for durable in _durable(
        executor="a2a_serverless.execution.steps_demo:StepsDemoExecutor",
        durable_invocation_seconds=1,
        durable_step_seconds=1,
    ):
        task_id = durable.send("plan 3 nap 1", "m-1")

        assert durable.result(task_id).status is InvocationStatus.SUCCEEDED
        record = durable.store.get_task(SCOPE, task_id)
        assert record is not None
        assert record.state is S.TASK_STATE_COMPLETED
        (plan,) = record.task.artifacts
        assert "".join(p.text or "" for p in plan.parts) == "".join(f"step {n} of 3 done\n" for n in (1, 2, 3))


def test_an_a2a_sdk_executor_runs_unchanged_in_durable_mode_a_turn_a_step() -> None:
    # test_sdk_adapter.name_agent: an unmodified a2a-sdk executor that asks for a name
    for durable in _durable(executor="test_sdk_adapter:name_agent"):
        task_id = durable.send("hi", "m-1")
        durable.until(task_id, lambda h: bool(h.waiting_callback))
        durable.send("Ann", "m-2", task_id)

        result = durable.result(task_id)

        assert result.status is InvocationStatus.SUCCEEDED
        assert result.get_step("turn-1") is not None
        assert result.get_step("turn-2") is not None
        record = durable.store.get_task(SCOPE, task_id)
        assert record is not None
        assert record.state is S.TASK_STATE_COMPLETED
        assert [p.text for a in record.task.artifacts for p in a.parts] == ["Nice to meet you, Ann!"]


def test_the_durable_workers_own_runtime_builds_without_a_function_to_start() -> None:
    # The template gives the durable worker no A2A_DURABLE_FUNCTION (its own alias would be a cycle)
    runtime = build_runtime(Settings(store="memory", execution_mode="durable"), store=MemoryTaskStore())
    assert runtime.durable is not None
    with pytest.raises(ConfigError, match="A2A_DURABLE_FUNCTION"):
        runtime.durable.start("t1", "{}")


# --------------------------------------------------------------------------- what a cancel logs

DURABLE_LOGGERS = ("a2a_serverless", "aws_durable_execution_sdk_python")
"""Our lines and the durable SDK's (a Lambda's log); the local runner's own are not the function's."""


class SlowStep(ThreeSteps):
    """A step that works for a minute (unless the run is stopped), then a quick one."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await context.steps.run("slow", partial(self._slow, context.task_id))
        await context.steps.run("after", partial(self._work, context.task_id, 2, updater))
        await updater.complete()

    async def _slow(self, task_id: str) -> str:
        STEP_CALLS.append(f"{task_id}:slow")
        await asyncio.sleep(60)
        STEP_CALLS.append(f"{task_id}:slow-done")
        return "slow"


class BrokenStep(ThreeSteps):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        await context.steps.run("broken", self._broken)

    def _broken(self) -> str:
        raise RuntimeError("the step broke")


def _lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(DURABLE_LOGGERS)]


def test_a_cancel_during_a_step_stops_it_in_one_line_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    for durable in _durable(executor=_path(SlowStep)):
        task_id = durable.send("go", "m-1")
        deadline = time.monotonic() + 20  # a hang guard
        while f"{task_id}:slow" not in STEP_CALLS:
            assert time.monotonic() < deadline, "the slow step never started"
            time.sleep(0.02)

        canceled = cancel_task(CancelTaskRequest(id=task_id), CTX, durable.runtime)

        assert durable.until(task_id, lambda h: h.state.is_terminal).state is S.TASK_STATE_CANCELED
        assert canceled.status.state in (S.TASK_STATE_WORKING, S.TASK_STATE_CANCELED)
        assert durable.result(task_id).status is InvocationStatus.SUCCEEDED
    assert [c for c in STEP_CALLS if c.startswith(task_id)] == [f"{task_id}:slow"]  # stopped, the next never ran
    lines = _lines(caplog)
    assert [r.getMessage() for r in lines if r.exc_info or r.levelno >= logging.WARNING] == []
    assert [r.getMessage() for r in lines if "stopped" in r.getMessage()] == [
        "step 'slow' stopped: its run ended (canceled, out of time or taken over)"
    ]


def test_a_step_that_fails_still_logs_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    for durable in _durable(executor=_path(BrokenStep)):
        durable.send("go", "m-1")
        deadline = time.monotonic() + 20  # a hang guard
        while not [r for r in _lines(caplog) if r.exc_info]:
            assert time.monotonic() < deadline, "no failure was logged"
            time.sleep(0.02)
    failed = next(r for r in _lines(caplog) if r.exc_info)
    assert failed.levelno == logging.ERROR
    assert failed.exc_info is not None
    assert isinstance(failed.exc_info[1], RuntimeError)
    assert "broken" in failed.getMessage()
