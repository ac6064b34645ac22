"""Runs one work item: claim the task, run the executor, make sure the task ends settled.

The rules are :mod:`a2a_serverless.transitions`; this module drives them:

1. **Claim.** Only the work item whose message is the task's ``pending_message_id`` may start a run
   (a duplicate delivery finds nothing pending and does nothing, so the executor runs once per
   message). The claim records the run and a lease. A redelivered item whose run was claimed and
   never settled (its worker died) fails the task with a clear message.
2. **Run.** The executor's events go to a :class:`~.run_log.RunLog` (validated at once, committed
   in groups, never re-read). A monitor thread reads the task's small head every quarter second:
   CancelTask's mark makes the worker call the executor's ``cancel`` and stop it; a task another
   writer ended stops it too. The monitor also renews the run's lease (``run_lease_seconds``, every
   third of it) while the function has time left: a worker that dies (killed, out of memory) stops renewing,
   and the sweeper (:mod:`.sweeper`) fails its task once the lease has lapsed.
3. **Deadline.** The Lambda context says how long the invocation may still run. Before the end (a
   quarter of the function's time, at most ``DEADLINE_MARGIN_SECONDS``) the executor is stopped and
   the task fails with a message saying it ran out of time, rather than being cut off silently.
4. **Settle.** Whatever happened, the task leaves the run terminal or interrupted: an exception
   fails it with a generic message; returning early completes it; a cancel ends it CANCELED.
5. **Stopping.** A stopped executor (canceled, out of time, its task taken) gets a grace to end
   (:mod:`._supervisor`): ``cancel`` gets ``CANCEL_GRACE_SECONDS``, then ``execute``'s coroutine
   is cancelled and gets as long again (out of time: at most half the deadline's margin). One
   that will not stop (it swallows ``CancelledError``, or blocks its event loop) does not keep the
   invocation: the run has a loop and a thread of its own (:mod:`._own_loop`), and the calling
   thread, which the executor cannot block, ends the run without it once the graces and
   ``ABANDON_MARGIN_SECONDS`` have passed. It settles the task as the run would have
   (:func:`~a2a_serverless.transitions.settle`, conditional on the run's message, so a late event
   of the executor is refused), logs one WARNING with the task id, and returns. :mod:`._own_loop`
   says what becomes of the executor.

The steps are the same in every execution mode; one :class:`~.run_mode.RunMode` says what differs
(how the run is claimed, where the executor's events and steps go, how a cancel reaches it): the
queue's by default, a durable turn's in durable mode (:mod:`a2a_serverless.durable.turns`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from functools import partial

from .. import telemetry
from ..blobs import has_references
from ..models import Message, SendMessageConfiguration, Task
from ..ports import Scope, TaskRecord, WorkItem
from ..runtime import Runtime
from ..transitions import (
    DEAD_LETTER_TEXT,
    INTERRUPTED_TEXT,
    LEASE_LOST_TEXT,
    OUT_OF_TIME_TEXT,
    RunEnd,
    RunLost,
    settle,
)
from ._monitor import CANCEL_POLL_SECONDS, RunMonitor
from ._own_loop import RunGuard, run_on_own_loop
from ._supervisor import Deadline, RemainingMillis, deadline_of, end_by, supervise
from .agent_state import AgentState
from .api import RequestContext
from .run_log import RunLog, RunWriter
from .run_mode import QUEUED, RunMode
from .run_report import RUN_LOST, RunReport, Written, report_run

__all__ = [
    "CANCEL_POLL_SECONDS",
    "DEAD_LETTER_TEXT",
    "INTERRUPTED_TEXT",
    "LEASE_LOST_TEXT",
    "OUT_OF_TIME_TEXT",
    "process_work_item",
    "run_work_item",
]

logger = logging.getLogger(__name__)

MAX_RELATED_TASKS = 20


def process_work_item(
    runtime: Runtime,
    item: WorkItem,
    *,
    receive_count: int = 1,
    remaining_ms: RemainingMillis | None = None,
    mode: RunMode = QUEUED,
) -> RunReport | None:
    """Synchronous entry point (the SQS handler calls this once per record): what the run did, or
    None when the item started no run (a duplicate, a task that is gone or was interrupted). It
    returns once the run is over, or has been stopped and its executor would not end (step 5).
    ``mode`` says how the run is claimed and driven (:mod:`.run_mode`: the queue's by default)."""
    guard: RunGuard[RunReport | None] = RunGuard(item.task_id)
    run = run_work_item(runtime, item, receive_count=receive_count, remaining_ms=remaining_ms, mode=mode, guard=guard)
    return run_on_own_loop(run, guard)


@telemetry.traced_run
async def run_work_item(
    runtime: Runtime,
    item: WorkItem,
    *,
    receive_count: int = 1,
    remaining_ms: RemainingMillis | None = None,
    mode: RunMode = QUEUED,
    guard: RunGuard[RunReport | None] | None = None,
) -> RunReport | None:
    started = time.monotonic()
    guard = guard if guard is not None else RunGuard(item.task_id)
    settings = runtime.settings
    # Load the executor before claiming: a bad import path raises ConfigError here, the item goes
    # back to SQS untouched, and after maxReceiveCount the dead-letter handler fails the task.
    executor = runtime.executor
    record = await mode.claim(runtime, item, receive_count)
    if record is None:
        return None
    context, deadline = await _request_context(runtime, item, record, remaining_ms)
    writer = RunWriter(runtime.store, record)
    log = RunLog(writer, message_id=item.message_id, settings=settings, offloader=runtime.offloader)
    canceled, lost = asyncio.Event(), asyncio.Event()
    monitor = _monitor(runtime, writer, item.message_id, guard, partial(mode.stop, canceled), lost, remaining_ms)
    guard.arm(partial(_end_without_it, writer, monitor, item.message_id, settings.max_history, started, log.written))
    if deadline is not None:
        guard.stop(RunEnd.OUT_OF_TIME, at=deadline.at, by=deadline.abandon_by)
    monitor.start()
    try:
        async with log:
            context.steps = mode.steps(log)
            ran = await supervise(
                executor, context, log, mode.events(log), canceled, lost, deadline, guard, mode.suspend
            )
            end = await _flushed(log, ran, guard)
            if end is None:
                return report_run(RUN_LOST, started, None, log.written)
        settled = await _settled(writer, item.message_id, end, settings.max_history)
    finally:
        monitor.stop()
    return report_run(end, started, settled, log.written)


async def _request_context(
    runtime: Runtime, item: WorkItem, record: TaskRecord, remaining_ms: RemainingMillis | None
) -> tuple[RequestContext, Deadline | None]:
    """What the executor is asked to do (``record`` as the run claimed it), and the run's deadline."""
    scope = Scope(item.tenant, item.owner)
    # The executor gets every part as it was sent, stored ones read back whatever their size.
    current = record.task
    if has_references(current):
        current = await asyncio.to_thread(runtime.parts.present, current, scope, current.id, None)
    message = next((m for m in reversed(current.history) if m.message_id == item.message_id), None)
    configuration = SendMessageConfiguration.model_validate_json(item.configuration) if item.configuration else None
    metadata = json.loads(item.metadata) if item.metadata else {}
    related = await asyncio.to_thread(_related_tasks, runtime, scope, record.task, item.message_id)
    state = _agent_state(runtime, scope)
    deadline = deadline_of(remaining_ms)
    context = RequestContext(
        task_id=record.task.id,
        context_id=record.task.context_id,
        message=message,
        current_task=current,
        configuration=configuration,
        metadata=metadata,
        tenant=scope.tenant,
        caller=scope.owner,
        requested_extensions=item.extensions,
        related_tasks=related,
        state=state,
        deadline=deadline.at if deadline is not None else None,
    )
    return context, deadline


def _monitor(
    runtime: Runtime,
    writer: RunWriter,
    message_id: str,
    guard: RunGuard[RunReport | None],
    stop: Callable[[], None],
    lost: asyncio.Event,
    remaining_ms: RemainingMillis | None,
) -> RunMonitor:
    """The run's monitor (step 2), not yet started: CancelTask's mark calls ``stop`` on the run's
    loop (as the run's mode says), a task another writer ended sets ``lost``; either gives the
    guard the time the run then has to end (step 5)."""
    loop = asyncio.get_running_loop()

    def on_cancel() -> None:
        now = time.monotonic()
        guard.stop(RunEnd.CANCELED, at=now, by=end_by(RunEnd.CANCELED, now))
        _call_soon(loop, stop)

    def on_lost() -> None:
        now = time.monotonic()
        guard.stop(None, at=now, by=end_by(None, now))
        _call_soon(loop, lost.set)

    return RunMonitor(
        runtime.store,
        writer,
        message_id,
        lease_seconds=runtime.settings.run_lease_seconds,
        on_cancel=on_cancel,
        on_lost=on_lost,
        alive=(lambda: remaining_ms() > 0) if remaining_ms is not None else (lambda: True),
    )


async def _flushed(log: RunLog, end: RunEnd | None, guard: RunGuard[RunReport | None]) -> RunEnd | None:
    """How the run ended once what it emitted is committed (step 4): None when it lost its task."""
    if end is None:
        _note_lost(guard, "the run lost its task to another writer; stopped")
        return None
    try:
        await log.flush()
    except RunLost:
        _note_lost(guard, "the run lost its task to another writer")
        return None
    except Exception:
        return RunEnd.FAILED  # (logged by the log's committer)
    return end


async def _settled(writer: RunWriter, message_id: str, end: RunEnd, max_history: int) -> TaskRecord | None:
    """Settle the task as the run ended (step 4): the record as committed, None if that failed."""
    rule = partial(settle, message_id=message_id, end=end, max_history=max_history)
    try:
        return (await asyncio.to_thread(writer.transact, rule)).record
    except Exception:
        logger.exception("could not settle task", extra={"task_id": writer.record.task_id})
        return None


def _end_without_it(
    writer: RunWriter,
    monitor: RunMonitor,
    message_id: str,
    max_history: int,
    started: float,
    written: Written,
    reason: RunEnd | None,
) -> RunReport:
    """End a stopped run whose executor would not stop (step 5), from the thread that waited for
    it: settle the task as the run would have, conditional on the run's message."""
    monitor.stop()
    if reason is None:
        logger.warning("the run lost its task to another writer; stopped", extra={"task_id": writer.record.task_id})
        return report_run(RUN_LOST, started, None, written)
    rule = partial(settle, message_id=message_id, end=reason, max_history=max_history)
    try:
        settled = writer.transact(rule).record
    except RunLost:
        return report_run(RUN_LOST, started, None, written)
    except Exception:
        logger.exception("could not settle task", extra={"task_id": writer.record.task_id})
        settled = None
    return report_run(reason, started, settled, written)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """Run ``callback`` on the run's loop (from the monitor's thread); nothing once it is closed."""
    with contextlib.suppress(RuntimeError):  # the run ended (or was ended without its executor)
        loop.call_soon_threadsafe(callback)


def _note_lost(guard: RunGuard[RunReport | None], message: str) -> None:
    """A run that lost its task says so at WARNING; once the worker ended it (step 5), at INFO: the
    worker settled its task, and this is only the abandoned run catching up."""
    level = logging.INFO if guard.abandoned else logging.WARNING
    logger.log(level, message, extra={"task_id": guard.task_id})


def _related_tasks(runtime: Runtime, scope: Scope, task: Task, message_id: str) -> list[Task]:
    """The caller's tasks the message refers to (``referenceTaskIds``); unknown ones are skipped.
    Their stored parts come as a client would get them (inline within a response's budget, else
    as URLs): up to ten tasks, each with files of any size, are not all read into memory."""
    message: Message | None = next((m for m in reversed(task.history) if m.message_id == message_id), None)
    if message is None:
        return []
    store, budget = runtime.store, runtime.settings.inline_response_bytes
    records = (store.get_task(scope, task_id) for task_id in message.reference_task_ids[:MAX_RELATED_TASKS])
    return [runtime.parts.present(record.task, scope, record.task_id, budget) for record in records if record]


def _agent_state(runtime: Runtime, scope: Scope) -> AgentState | None:
    """The state of ``scope``'s runs in ``runtime`` (None when it keeps no agent state)."""
    if runtime.agent_state is None:
        return None
    return AgentState(runtime.agent_state, runtime.offloader.blobs if runtime.offloader else None, scope)
