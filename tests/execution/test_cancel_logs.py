"""A canceled run of a well-behaved agent logs no traceback (issue 40, item 8); a failing one still does.

CancelTask makes the worker call the executor's ``cancel`` (the demo's reports CANCELED), then
cancel ``execute``. Meanwhile ``execute`` may try to report progress: the run's log refuses it (the
task settled), and that refusal is how it stops, like the ``CancelledError``. The local stack's
console marks a traceback logged with an ``executor...`` line as "your agent's traceback"; none may
be logged for a cancel. Run in process on the in-memory runtime."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from types import SimpleNamespace

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater, demo, run_log
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_serverless.operations import cancel_task, send_message
from a2a_serverless.runtime import Runtime
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE
from testkit.queues import RecordingQueue

DEMO = "a2a_serverless.execution.demo:DemoAgentExecutor"


def start(executor: str, text: str) -> tuple[Runtime, str, threading.Thread]:
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=executor, cancel_wait_seconds=0)
    runtime = build_runtime(settings, store=MemoryTaskStore(), queue=queue)
    request = SendMessageRequest(
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text=text)]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    task = send_message(request, CTX, runtime).task
    assert task is not None
    worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]))
    worker.start()
    return runtime, task.id, worker


def wait_for_state(runtime: Runtime, task_id: str, state: TaskState) -> None:
    deadline = time.monotonic() + 10
    while (record := runtime.store.get_task(SCOPE, task_id)) is None or record.state is not state:
        assert time.monotonic() < deadline, f"the task never reached {state}"
        time.sleep(0.01)


def cancel_and_join(runtime: Runtime, task_id: str, worker: threading.Thread) -> None:
    cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)
    worker.join(timeout=15)
    assert not worker.is_alive()
    final = runtime.store.get_task(SCOPE, task_id)
    assert final is not None
    assert final.state is TaskState.TASK_STATE_CANCELED


def blamed_on_the_agent(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """Records the console would show with a traceback, or as the executor's failure."""
    return [
        r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING or r.getMessage().startswith("executor")
    ]


def test_a_canceled_demo_sleep_logs_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    runtime, task_id, worker = start(DEMO, "sleep 30")
    wait_for_state(runtime, task_id, TaskState.TASK_STATE_WORKING)
    cancel_and_join(runtime, task_id, worker)
    assert blamed_on_the_agent(caplog) == []


def test_a_demo_reporting_progress_as_its_cancel_settles_the_task_logs_no_traceback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given commits that take a while, and the demo's sleep ending while its cancel's CANCELED is
    # being committed (the race the local stack's slower store shows now and then)
    caplog.set_level(logging.DEBUG)
    transact = run_log.RunWriter.transact

    def slow_transact(self: run_log.RunWriter, rule: object) -> object:
        time.sleep(0.3)
        return transact(self, rule)  # type: ignore[arg-type]

    cancel_reported = asyncio.Event()  # (bound to the worker's loop, where it is used)

    class Updater(TaskUpdater):
        async def cancel(self, message: Message | None = None) -> None:
            cancel_reported.set()  # what follows (the CANCELED event closes the log) runs at once
            await super().cancel(message)

    async def sleep_until_canceled(seconds: float) -> None:
        await cancel_reported.wait()
        await asyncio.sleep(0.05)  # the cancel's CANCELED is queued and being committed (0.3 s)

    monkeypatch.setattr(run_log.RunWriter, "transact", slow_transact)
    monkeypatch.setattr(demo, "TaskUpdater", Updater)
    monkeypatch.setattr(demo, "asyncio", SimpleNamespace(sleep=sleep_until_canceled))
    runtime, task_id, worker = start(DEMO, "sleep 30")
    wait_for_state(runtime, task_id, TaskState.TASK_STATE_WORKING)

    # When the task is canceled: the demo's next progress report comes after CANCELED
    cancel_and_join(runtime, task_id, worker)

    # Then its refusal is noted in one INFO line, without a traceback, and nothing blames the agent
    assert blamed_on_the_agent(caplog) == []
    assert any("after it ended" in r.getMessage() for r in caplog.records)


class FailingAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        raise RuntimeError("the agent broke")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise AssertionError("not canceled")


class RaisingWhileStopped(AgentExecutor):
    """Reports CANCELED, but its ``execute`` raises its own error when it is stopped."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RuntimeError("cleanup failed") from None

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def test_an_agent_that_raises_still_logs_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _, _, worker = start(f"{__name__}:FailingAgent", "go")
    worker.join(timeout=15)
    failures = [r for r in caplog.records if r.getMessage() == "executor failed"]
    assert len(failures) == 1
    assert failures[0].levelno == logging.ERROR
    assert failures[0].exc_info is not None
    assert isinstance(failures[0].exc_info[1], RuntimeError)


def test_an_agent_that_raises_its_own_error_when_canceled_still_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    runtime, task_id, worker = start(f"{__name__}:RaisingWhileStopped", "go")
    wait_for_state(runtime, task_id, TaskState.TASK_STATE_WORKING)
    cancel_and_join(runtime, task_id, worker)
    stopping = [r for r in caplog.records if r.getMessage() == "executor raised while stopping"]
    assert len(stopping) == 1
    assert stopping[0].exc_info is not None
    assert isinstance(stopping[0].exc_info[1], RuntimeError)


class CompletingAsCanceled(AgentExecutor):
    """Its ``execute`` completes the task just as its ``cancel`` is called: the cancel's CANCELED
    comes after the task settled, and is refused."""

    def __init__(self) -> None:
        self.cancel_called, self.completing = asyncio.Event(), asyncio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await self.cancel_called.wait()
        self.completing.set()  # the COMPLETED event closes the run's log before anything else runs
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.cancel_called.set()
        await self.completing.wait()
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def test_a_cancel_that_comes_as_the_agent_completes_logs_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    runtime, task_id, worker = start(f"{__name__}:CompletingAsCanceled", "go")
    wait_for_state(runtime, task_id, TaskState.TASK_STATE_WORKING)
    cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)
    worker.join(timeout=15)
    final = runtime.store.get_task(SCOPE, task_id)
    assert final is not None
    assert final.state is TaskState.TASK_STATE_COMPLETED
    assert blamed_on_the_agent(caplog) == []
    assert any("the cancel came after the run ended" in r.getMessage() for r in caplog.records)
