"""A run on the write path: it claims only what CancelTask left, writes without reading, commits
what arrives during a commit together, stops at its deadline, and cannot die unnoticed (lease and
sweeper). On the memory store (its contract is the DynamoDB store's, tests/contract)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.sweeper import sweep
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from a2a_serverless.mutation import mutate
from a2a_serverless.operations import cancel_task
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, TaskRecord
from a2a_serverless.runtime import Runtime
from a2a_serverless.transitions import LEASE_LOST_TEXT, OUT_OF_TIME_TEXT, claim
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE
from testkit.queues import RecordingQueue


class SpyingStore(MemoryTaskStore):
    """The memory store, noting the commits (their event counts) and the task reads, with a hook
    run before each commit."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[int] = []
        self.reads = 0
        self.before_commit: Any = None

    def commit(self, record: TaskRecord, events: Sequence[StreamResponse] = (), **options: Any) -> Any:
        if self.before_commit is not None:
            self.before_commit(record, events)
        stored = super().commit(record, events, **options)
        self.commits.append(len(events))
        return stored

    def get_task(self, scope: Scope, task_id: str) -> Any:
        self.reads += 1
        return super().get_task(scope, task_id)


class Recorder(AgentExecutor):
    runs: ClassVar[list[str]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        Recorder.runs.append(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.add_artifact([Part(text="ran")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class Burst(AgentExecutor):
    """``burst N``: N chunks into one artifact as fast as it can (no await but the queue's)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        count = int(context.get_user_input().split()[1])
        await updater.start_work()
        for n in range(count):
            await updater.add_artifact([Part(text=f"c{n} ")], artifact_id="answer", append=n > 0)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class Sleeper(AgentExecutor):
    """Works for 30 s, reporting once; notes that it was stopped."""

    stopped: ClassVar[threading.Event] = threading.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            Sleeper.stopped.set()
            raise
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class Ticker(AgentExecutor):
    """``ticks N SECONDS``: a status update every SECONDS, N times."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        _, count, every = context.get_user_input().split()
        await updater.start_work()
        for n in range(int(count)):
            await asyncio.sleep(float(every))
            await updater.update_status(TaskState.TASK_STATE_WORKING, updater.new_agent_message([Part(text=f"{n}")]))
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def runtime_for(executor: str, store: MemoryTaskStore | None = None, **settings: Any) -> tuple[Runtime, RecordingQueue]:
    queue = RecordingQueue()
    values: dict[str, Any] = {"store": "memory", "executor": f"{__name__}:{executor}", "cancel_wait_seconds": 0}
    runtime = build_runtime(Settings(**(values | settings)), store=store or SpyingStore(), queue=queue)
    return runtime, queue


def send(runtime: Runtime, text: str = "go", message_id: str = "m1") -> str:
    request = SendMessageRequest(
        message=Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    return submit_message(request, CTX, runtime).task.id


def record_of(runtime: Runtime, task_id: str) -> TaskRecord:
    record = runtime.store.get_task(SCOPE, task_id)
    assert record is not None
    return record


# ------------------------------------------------------------------------------- claim vs cancel


def test_an_agent_never_runs_on_a_task_canceled_before_its_claim() -> None:
    # Given a submitted task, and a CancelTask that lands between the worker's read of the task
    # and its claim (the claim's commit then conflicts, and the claim is decided again)
    store = SpyingStore()
    runtime, queue = runtime_for("Recorder", store)
    Recorder.runs = []
    task_id = send(runtime)

    def cancel_first(record: TaskRecord, events: Sequence[StreamResponse]) -> None:
        if record.running_message_id and store.before_commit is not None:
            store.before_commit = None
            cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)

    store.before_commit = cancel_first

    # When the work item is processed
    process_work_item(runtime, queue.items[0])

    # Then the agent never ran, and the task is the CANCELED one CancelTask left
    assert Recorder.runs == []
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_CANCELED
    assert (record.running_message_id, record.pending_message_id, record.lease_until) == ("", "", 0)


def test_mutate_returns_the_result_of_the_attempt_that_committed() -> None:
    # Given a claim whose first attempt loses to a concurrent write
    store = SpyingStore()
    runtime, _ = runtime_for("Recorder", store)
    task_id = send(runtime)
    raced = {"done": False}

    def race(record: TaskRecord, events: Sequence[StreamResponse]) -> None:
        if not raced["done"]:
            raced["done"] = True
            current = store.get_task(SCOPE, task_id)
            assert current is not None
            store.commit(replace(current, cancel_requested=False))  # any write: a new version

    store.before_commit = race
    rule = partial(claim, message_id="m1", receive_count=1, now=1_000, lease_seconds=60, max_history=200)

    # When it is applied through mutate
    committed = mutate(store, SCOPE, task_id, rule)

    # Then what comes back is the second attempt's: committed, and the record as stored
    assert committed.wrote
    assert committed.result.value == "claimed"
    assert (committed.record.running_message_id, committed.record.lease_until) == ("m1", 1_060)
    assert committed.record.version == record_of(runtime, task_id).version


# ------------------------------------------------------------------------------- the write path


def test_a_run_reads_its_task_once_and_one_working_is_logged() -> None:
    # Given a run that streams 50 chunks
    store = SpyingStore()
    runtime, queue = runtime_for("Burst", store)
    task_id = send(runtime, "burst 50")
    store.reads = 0

    # When it runs
    process_work_item(runtime, queue.items[0])

    # Then the worker read the task once (the claim), never before its writes, and the log has the
    # task, one WORKING, the 50 chunks and COMPLETED, gap-free
    assert store.reads == 1
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert "".join(p.text or "" for p in record.task.artifacts[0].parts) == "".join(f"c{n} " for n in range(50))
    events = runtime.store.read_events(SCOPE, task_id, limit=1000)
    assert [e.seq for e in events] == list(range(1, 54))
    working = [
        e for e in events if e.event.status_update and e.event.status_update.status.state.value.endswith("WORKING")
    ]
    assert len(working) == 1


def test_events_emitted_while_a_commit_is_in_flight_go_out_together(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a run of 200 chunks, and a store that holds the run's first commit until the executor
    # has handed over all its events (it is never held up by the store meanwhile)
    from a2a_serverless.execution import run_log

    handed_over = 0
    original = run_log.RunLog.enqueue_event

    async def counting(self: Any, event: Any) -> None:
        nonlocal handed_over
        handed_over += 1
        await original(self, event)

    monkeypatch.setattr(run_log.RunLog, "enqueue_event", counting)
    store = SpyingStore()
    runtime, queue = runtime_for("Burst", store)
    task_id = send(runtime, "burst 200")
    store.commits = []

    held = threading.Event()

    def hold_the_first(record: TaskRecord, events: Sequence[StreamResponse]) -> None:
        # (the first commit that carries events: a lease renewal commits none)
        if events and not held.is_set():
            held.set()
            deadline = time.monotonic() + 30
            while handed_over < 202 and time.monotonic() < deadline:  # WORKING, 200 chunks, COMPLETED
                time.sleep(0.005)

    store.before_commit = hold_the_first

    # When it runs
    process_work_item(runtime, queue.items[0])

    # Then the first commit carried WORKING alone, and all that came during it went out in the next
    assert handed_over == 202
    assert [n for n in store.commits if n] == [1, 201]
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert [p.text for p in record.task.artifacts[0].parts] == ["".join(f"c{n} " for n in range(200))]


# ------------------------------------------------------------------------------- deadline


def test_a_run_that_reaches_its_deadline_is_stopped_and_fails_with_a_clear_message() -> None:
    # Given a run whose invocation has 2 seconds left, and an agent that works for 30
    runtime, queue = runtime_for("Sleeper")
    Sleeper.stopped.clear()
    task_id = send(runtime)
    ends_at = time.monotonic() + 2.0

    # When it runs
    process_work_item(runtime, queue.items[0], remaining_ms=lambda: max(0, int((ends_at - time.monotonic()) * 1000)))

    # Then the worker stopped the agent at its own deadline (its coroutine cancelled: left alone it
    # would have COMPLETED after 30 s), and the task failed saying why: nothing left WORKING for
    # the redelivery to find
    assert Sleeper.stopped.is_set()
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == OUT_OF_TIME_TEXT
    assert (record.running_message_id, record.lease_until) == ("", 0)


# ------------------------------------------------------------------------------- lease and sweeper


def test_a_live_run_keeps_renewing_its_lease_and_the_sweeper_leaves_it_alone() -> None:
    # Given a run with a 3 s lease that works for about 4 s
    runtime, queue = runtime_for("Ticker", run_lease_seconds=3)
    task_id = send(runtime, "ticks 8 0.5")
    worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]))
    worker.start()
    seen: set[int] = set()
    swept = 0
    while worker.is_alive():
        head = runtime.store.get_head(SCOPE, task_id)
        if head is not None and head.lease_until:
            seen.add(head.lease_until)
            swept += sweep(runtime, now=int(time.time()))
        time.sleep(0.1)
    worker.join()

    # Then its lease moved forward while it ran, the sweeper found nothing to settle, and it completed
    assert len(seen) >= 2
    assert swept == 0
    assert record_of(runtime, task_id).state is TaskState.TASK_STATE_COMPLETED


def test_the_sweeper_fails_a_run_whose_worker_died_and_its_redelivery_does_nothing() -> None:
    # Given a task claimed by a worker that then died (its lease was never renewed)
    runtime, queue = runtime_for("Recorder")
    Recorder.runs = []
    task_id = send(runtime)
    now = int(time.time())
    rule = partial(claim, message_id="m1", receive_count=1, now=now - 120, lease_seconds=60, max_history=200)
    assert mutate(runtime.store, SCOPE, task_id, rule).result.value == "claimed"
    # and another task that still runs with a live lease
    live_id = send(runtime, message_id="m2")
    live = partial(claim, message_id="m2", receive_count=1, now=now, lease_seconds=60, max_history=200)
    mutate(runtime.store, SCOPE, live_id, live)

    # When the sweeper runs
    assert sweep(runtime, now=now) == 1

    # Then the dead run's task failed with a clear message, the live one was left alone
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == LEASE_LOST_TEXT
    assert (record.running_message_id, record.lease_until) == ("", 0)
    assert record_of(runtime, live_id).running_message_id == "m2"
    # And when SQS redelivers the dead run's item, nothing runs and nothing changes
    process_work_item(runtime, queue.items[0], receive_count=2)
    assert Recorder.runs == []
    assert record_of(runtime, task_id).version == record.version
    assert sweep(runtime, now=now) == 0


class UnreachableStore(SpyingStore):
    """The memory store whose head reads fail while ``down`` is set (the store unreachable)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = threading.Event()

    def get_head(self, scope: Scope, task_id: str) -> Any:
        if self.down.is_set():
            raise ConnectionError("store unreachable")
        return super().get_head(scope, task_id)


def test_a_run_that_cannot_reach_its_store_for_longer_than_its_lease_stops_and_the_sweeper_settles_it() -> None:
    # Given a run with a 3 s lease whose store becomes unreachable once it is WORKING
    store = UnreachableStore()
    runtime, queue = runtime_for("Sleeper", store=store, run_lease_seconds=3)
    Sleeper.stopped.clear()
    task_id = send(runtime)
    worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]), daemon=True)
    worker.start()
    while not record_of(runtime, task_id).running_message_id:
        time.sleep(0.02)
    store.down.set()

    # When the lease lapses unrenewed, the run stops (it does not retry forever: a run without its
    # store would otherwise keep its worker, and a process, alive)
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert Sleeper.stopped.is_set()

    # Then, the store back, the task is still the run's, and the sweeper settles it as a lost run
    store.down.clear()
    assert record_of(runtime, task_id).running_message_id == "m1"
    assert sweep(runtime, now=int(time.time()) + 4) == 1
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == LEASE_LOST_TEXT
