"""An executor that will not stop does not keep its worker invocation (worker.py, step 5).

One executor swallows ``asyncio.CancelledError``; another blocks its event loop (a synchronous wait
inside ``async def execute``). Each is canceled fifty times in a row (and, a few times each, runs
past its deadline or has its task ended by another writer) through the worker's Lambda entry point
(``a2a_serverless.functions.worker``), invoked as the local stack's SQS poller invokes it, on a
pool of two threads: an invocation that did not return would hold a thread, and the normal task
sent last would never run. DynamoDB and SQS are moto in process. Durable mode is checked on the
durable SDK's local runner. The graces are made short (the behaviour, not the time, is asserted).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

import boto3
import pytest
from moto import mock_aws

from a2a_serverless import telemetry
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution import (
    AgentExecutor,
    EventQueue,
    RequestContext,
    TaskUpdater,
    _monitor,
    _own_loop,
    _supervisor,
)
from a2a_serverless.models import CancelTaskRequest, Part, TaskState
from a2a_serverless.mutation import mutate
from a2a_serverless.operations import cancel_task, send_message
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.runtime import Runtime
from a2a_serverless.telemetry import _sdk
from a2a_serverless.transitions import DEAD_LETTER_TEXT, OUT_OF_TIME_TEXT, dead_letter
from a2a_serverless.wiring import build_runtime, get_runtime, reset_runtime
from a2a_serverless_dev._lambda import LambdaContext, sqs_event
from a2a_serverless_dev._template import SqsEventSource
from a2a_serverless_dev.durable import DurableLimits, LocalDurableWorker
from a2a_serverless_dev.pollers import SqsPoller
from a2a_serverless_dev.resources import create_resources
from testkit.aws import fake_credentials
from testkit.calls import CTX, SCOPE, send_request

HANG_GUARD_SECONDS = 60.0
"""How long a test waits for anything before it fails (a hang guard, not a budget)."""

RELEASE = threading.Event()
"""Ends the blocking executors' waits (at the end of a test)."""
BLOCKED: list[threading.Thread] = []
"""The threads whose event loop a blocking executor holds."""


class StubbornAgent(AgentExecutor):
    """``swallow``: ignores cancellation; ``block``: blocks its event loop until released;
    anything else: answers at once."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        text = context.get_user_input()
        await updater.start_work()
        if text == "swallow":
            while True:
                with contextlib.suppress(asyncio.CancelledError):  # the habit under test
                    await asyncio.sleep(3600)
        if text == "block":
            BLOCKED.append(threading.current_thread())
            RELEASE.wait(HANG_GUARD_SECONDS * 2)  # a synchronous wait: the loop is held
            await updater.update_status(TaskState.TASK_STATE_WORKING)  # late: refused
            return
        await updater.complete(updater.new_agent_message([Part(text=f"Echo: {text}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None  # the worker ends the task CANCELED


@dataclass
class Stack:
    sqs: Any
    queue_url: str
    queue_arn: str
    pool: ThreadPoolExecutor

    @property
    def runtime(self) -> Runtime:
        return get_runtime()

    def invoke(self, timeout_seconds: int = 900) -> Any:
        """One invocation of the worker function on the pool, as the local stack's poller makes it."""
        poller = SqsPoller(
            sqs=self.sqs,
            source=SqsEventSource("Worker", "", "WorkQueue", 1, True, timeout_seconds, 512),
            queue_url=self.queue_url,
            queue_arn=self.queue_arn,
            handler=importlib.import_module("a2a_serverless.functions.worker").handler,
            function_name="worker",
            wait_seconds=0,
        )
        return self.pool.submit(poller.poll_once)

    def send(self, text: str) -> str:
        task = send_message(send_request(text, message_id=str(uuid.uuid4())), CTX, self.runtime).task
        assert task is not None
        return task.id

    def state(self, task_id: str) -> TaskState:
        record = self.runtime.store.get_task(SCOPE, task_id)
        assert record is not None
        return record.state


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    monkeypatch.setattr(_supervisor, "CANCEL_GRACE_SECONDS", 0.1)
    monkeypatch.setattr(_supervisor, "ABANDON_MARGIN_SECONDS", 0.2)
    monkeypatch.setattr(_own_loop, "LEFTOVER_GRACE_SECONDS", 0.1)
    monkeypatch.setattr(_monitor, "CANCEL_POLL_SECONDS", 0.02)  # a cancel is seen sooner (many runs)
    RELEASE.clear()
    BLOCKED.clear()
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="invocation")
    with fake_credentials(), mock_aws():
        dynamodb, sqs = boto3.client("dynamodb"), boto3.client("sqs")
        resources = create_resources(dynamodb, sqs, prefix="stubborn")
        queue_url = resources.queue_urls["WorkQueue"]
        arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        for key, value in {
            "A2A_STORE": "dynamodb",
            "A2A_TABLE_NAME": resources.tables["TasksTable"],
            "A2A_QUEUE_URL": queue_url,
            "A2A_EXECUTOR": f"{__name__}:StubbornAgent",
            "A2A_CANCEL_WAIT_SECONDS": "0",
            "POWERTOOLS_METRICS_NAMESPACE": "A2ATest",
        }.items():
            monkeypatch.setenv(key, value)
        reset_runtime()
        try:
            yield Stack(sqs, queue_url, arn, pool)
        finally:
            # The blocked executors return; what they then try is refused (asserted by the tests).
            RELEASE.set()
            for thread in BLOCKED:
                thread.join(HANG_GUARD_SECONDS)
            pool.shutdown(wait=False, cancel_futures=True)  # an invocation that never returned: failed above
            reset_runtime()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


class Records(logging.Handler):
    """What the worker logs, caught on its own logger (the function's Powertools set-up stops it
    from propagating to the root logger, where pytest's capture listens)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.exc_info]

    def warnings_by_task(self) -> collections.Counter[str | None]:
        return collections.Counter(getattr(r, "task_id", None) for r in self.records if r.levelno == logging.WARNING)


@pytest.fixture
def worker_log() -> Iterator[Records]:
    records = Records()
    logger = logging.getLogger("a2a_serverless.execution.worker")
    logger.addHandler(records)
    try:
        yield records
    finally:
        logger.removeHandler(records)


def then_a_normal_task_completes(stack: Stack) -> None:
    task_id = stack.send("hello")
    assert stack.invoke().result(HANG_GUARD_SECONDS) == 1
    assert stack.state(task_id) is TaskState.TASK_STATE_COMPLETED


@pytest.mark.parametrize("habit", ["swallow", "block"])
def test_fifty_cancels_of_an_executor_that_will_not_stop_each_free_their_invocation(
    habit: str, stack: Stack, worker_log: Records
) -> None:
    canceled: list[str] = []
    for _ in range(50):
        # Given a run of an executor that will not stop
        task_id = stack.send(habit)
        invocation = stack.invoke()
        wait_until(lambda: stack.state(task_id) is TaskState.TASK_STATE_WORKING, "the run started")  # noqa: B023
        # When the task is canceled
        cancel_task(CancelTaskRequest(id=task_id), CTX, stack.runtime)
        # Then the invocation returns (its message handled), and the task is CANCELED
        assert invocation.result(HANG_GUARD_SECONDS) == 1
        assert stack.state(task_id) is TaskState.TASK_STATE_CANCELED
        canceled.append(task_id)
    # And a normal task still gets a worker and completes
    then_a_normal_task_completes(stack)
    # And each stubborn run was logged once, at WARNING, with its task id (and nothing else was)
    RELEASE.set()
    for thread in BLOCKED:
        thread.join(HANG_GUARD_SECONDS)
        assert not thread.is_alive()
    assert worker_log.warnings_by_task() == dict.fromkeys(canceled, 1)
    assert worker_log.tracebacks() == []
    # And what a released executor did late changed nothing
    assert all(stack.state(task_id) is TaskState.TASK_STATE_CANCELED for task_id in canceled)


@pytest.mark.parametrize("habit", ["swallow", "block"])
def test_a_run_past_its_deadline_that_will_not_stop_fails_the_task_and_frees_the_invocation(
    habit: str, stack: Stack, worker_log: Records
) -> None:
    handler = importlib.import_module("a2a_serverless.functions.worker").handler
    failed: list[str] = []
    for _ in range(3):
        # Given a run of an executor that will not stop, in an invocation with two seconds left
        task_id = stack.send(habit)
        (message,) = stack.sqs.receive_message(
            QueueUrl=stack.queue_url, MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"]
        )["Messages"]
        event = sqs_event([message], queue_arn=stack.queue_arn, region="us-east-1")
        # When its deadline passes, then the invocation returns with nothing to redeliver
        invocation = stack.pool.submit(
            handler, event, LambdaContext.start("worker", region="us-east-1", memory_mb=512, timeout_seconds=2)
        )
        assert invocation.result(HANG_GUARD_SECONDS) == {"batchItemFailures": []}
        stack.sqs.delete_message(QueueUrl=stack.queue_url, ReceiptHandle=message["ReceiptHandle"])
        # And the task FAILED, saying it ran out of time
        record = stack.runtime.store.get_task(SCOPE, task_id)
        assert record is not None
        assert record.state is TaskState.TASK_STATE_FAILED
        assert record.task.status.message is not None
        assert record.task.status.message.parts[0].text == OUT_OF_TIME_TEXT
        failed.append(task_id)
    then_a_normal_task_completes(stack)
    RELEASE.set()
    for thread in BLOCKED:
        thread.join(HANG_GUARD_SECONDS)
    # And each stubborn run was logged once, at WARNING, with its task id (the deadline itself is
    # an ERROR line of its own)
    assert worker_log.warnings_by_task() == dict.fromkeys(failed, 1)
    assert worker_log.tracebacks() == []
    assert all(stack.state(task_id) is TaskState.TASK_STATE_FAILED for task_id in failed)


# ------------------------------------------------------------------ durable mode (a turn per step)


class StubbornSteps(AgentExecutor):
    """A durable executor whose step will not stop: ``swallow`` ignores its cancellation; ``block``
    blocks the event loop inside the step."""

    durable_steps = True

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        habit = context.get_user_input()
        await context.steps.run(habit, self._block if habit == "block" else self._swallow)

    def _block(self) -> str:
        BLOCKED.append(threading.current_thread())
        RELEASE.wait(HANG_GUARD_SECONDS * 2)
        return "late"

    async def _swallow(self) -> str:
        while True:
            with contextlib.suppress(asyncio.CancelledError):  # the habit under test
                await asyncio.sleep(3600)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


@pytest.mark.parametrize("habit", ["swallow", "block"])
def test_a_durable_step_that_will_not_stop_is_canceled_and_its_execution_ends(
    habit: str, monkeypatch: pytest.MonkeyPatch, worker_log: Records
) -> None:
    monkeypatch.setattr(_supervisor, "CANCEL_GRACE_SECONDS", 0.1)
    monkeypatch.setattr(_supervisor, "ABANDON_MARGIN_SECONDS", 0.2)
    monkeypatch.setattr(_own_loop, "LEFTOVER_GRACE_SECONDS", 0.1)
    monkeypatch.setattr(_monitor, "CANCEL_POLL_SECONDS", 0.02)  # a cancel is seen sooner (many runs)
    RELEASE.clear()
    BLOCKED.clear()
    store = MemoryTaskStore()
    config = Settings(
        store="memory",
        execution_mode="durable",
        poll_interval_seconds=0.01,
        executor=f"{__name__}:StubbornSteps",
        cancel_wait_seconds=0,
    )
    worker = LocalDurableWorker(
        config, limits=DurableLimits(invocation_timeout=900, execution_timeout=120), store=store
    )
    runtime = build_runtime(config, store=store, durable=worker.runs)
    try:
        tasks: list[str] = []
        for _ in range(5):
            # Given a durable run in a step that will not stop
            task = submit_message(send_request(habit, message_id=str(uuid.uuid4())), CTX, runtime).task
            wait_until(lambda: store.get_task(SCOPE, task.id).state is TaskState.TASK_STATE_WORKING, "working")  # noqa: B023
            time.sleep(0.2)  # (into the step: not asserted, either way the run is canceled)
            # When it is canceled
            cancel_task(CancelTaskRequest(id=task.id), CTX, runtime)
            # Then the task is CANCELED, and its execution ends
            arn = worker.runs.execution_arn(task.id)
            assert arn is not None
            worker.runs.runner.wait_for_result(arn, timeout=HANG_GUARD_SECONDS)
            assert store.get_task(SCOPE, task.id).state is TaskState.TASK_STATE_CANCELED
            tasks.append(task.id)
        RELEASE.set()
        for thread in BLOCKED:
            thread.join(HANG_GUARD_SECONDS)
        # And each stubborn run was logged once, at WARNING, with its task id
        assert worker_log.warnings_by_task() == dict.fromkeys(tasks, 1)
        assert worker_log.tracebacks() == []  # (nor do their late steps: the run was over)
        assert all(store.get_task(SCOPE, task_id).state is TaskState.TASK_STATE_CANCELED for task_id in tasks)
    finally:
        RELEASE.set()
        worker.close()


@pytest.mark.parametrize("habit", ["swallow", "block"])
def test_a_run_whose_task_another_writer_ended_frees_the_invocation_when_its_executor_will_not_stop(
    habit: str, stack: Stack, worker_log: Records
) -> None:
    lost: list[str] = []
    for _ in range(3):
        # Given a run of an executor that will not stop
        task_id = stack.send(habit)
        invocation = stack.invoke()
        wait_until(lambda: stack.state(task_id) is TaskState.TASK_STATE_WORKING, "the run started")  # noqa: B023
        # When another writer ends the task (the dead-letter handler, as for an item SQS gave up on)
        record = stack.runtime.store.get_task(SCOPE, task_id)
        assert record is not None
        rule = partial(dead_letter, message_id=record.running_message_id, max_history=100)
        assert mutate(stack.runtime.store, SCOPE, task_id, rule).result
        # Then the invocation returns, and the task stays as that writer left it
        assert invocation.result(HANG_GUARD_SECONDS) == 1
        final = stack.runtime.store.get_task(SCOPE, task_id)
        assert final is not None
        assert final.state is TaskState.TASK_STATE_FAILED
        assert final.task.status.message is not None
        assert final.task.status.message.parts[0].text == DEAD_LETTER_TEXT
        lost.append(task_id)
    then_a_normal_task_completes(stack)
    RELEASE.set()
    for thread in BLOCKED:
        thread.join(HANG_GUARD_SECONDS)
    # And each run says once that it lost its task, and once that its executor did not stop
    stubborn = [r for r in worker_log.records if r.getMessage().startswith("the executor did not stop")]
    assert collections.Counter(getattr(r, "task_id", None) for r in stubborn) == dict.fromkeys(lost, 1)
    assert all(r.levelno == logging.WARNING for r in stubborn)
    assert worker_log.warnings_by_task() == dict.fromkeys(lost, 2)
    assert worker_log.tracebacks() == []


def test_with_tracing_on_an_abandoned_executor_ends_its_span_as_stopped_without_noise(
    stack: Stack, worker_log: Records, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given tracing on (spans in memory), and an executor that swallows its cancellation
    monkeypatch.setenv(telemetry.SWITCH_ENV, "memory")
    telemetry.reset()
    assert telemetry.tracing_on()
    _sdk.MEMORY.clear()
    caplog.set_level(logging.INFO, logger="opentelemetry")
    try:
        for _ in range(3):
            task_id = stack.send("swallow")
            invocation = stack.invoke()
            wait_until(lambda: stack.state(task_id) is TaskState.TASK_STATE_WORKING, "the run started")  # noqa: B023
            # When it is canceled, then the invocation returns and the task is CANCELED
            cancel_task(CancelTaskRequest(id=task_id), CTX, stack.runtime)
            assert invocation.result(HANG_GUARD_SECONDS) == 1
            assert stack.state(task_id) is TaskState.TASK_STATE_CANCELED
        # And the abandoned coroutines were closed in their own context: each agent span ended,
        # as stopped, and OpenTelemetry had nothing to say about a context it could not detach
        agents = [s for s in _sdk.finished_spans() if s.name.startswith("invoke_agent")]
        assert [(s.attributes or {}).get("a2a_serverless.run.outcome") for s in agents] == ["stopped"] * 3
        assert [r.getMessage() for r in caplog.records if r.name.startswith("opentelemetry")] == []
        assert worker_log.tracebacks() == []
    finally:
        _sdk.MEMORY.clear()
        monkeypatch.delenv(telemetry.SWITCH_ENV)
        telemetry.reset()
