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
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from .. import telemetry
from ..blobs import has_references
from ..errors import InvalidAgentResponseError, TaskNotFoundError
from ..models import Message, SendMessageConfiguration, Task
from ..mutation import Committed, mutate
from ..ports import Scope, TaskRecord, WorkItem
from ..runtime import Runtime
from ..transitions import (
    DEAD_LETTER_TEXT,
    INTERRUPTED_TEXT,
    LEASE_LOST_TEXT,
    OUT_OF_TIME_TEXT,
    Claim,
    RunEnd,
    RunLost,
    claim,
    settle,
)
from ._monitor import CANCEL_POLL_SECONDS, RunMonitor
from .agent_state import agent_state_of
from .api import AgentExecutor, Event, EventQueue, RequestContext, Steps
from .run_log import RunLog, RunWriter
from .run_report import RUN_LOST, RunReport, report_run

__all__ = [
    "CANCEL_POLL_SECONDS",
    "DEAD_LETTER_TEXT",
    "INTERRUPTED_TEXT",
    "LEASE_LOST_TEXT",
    "OUT_OF_TIME_TEXT",
    "Resumable",
    "claim_run",
    "process_work_item",
    "run_work_item",
]

logger = logging.getLogger(__name__)

CANCEL_GRACE_SECONDS = 5.0
"""How long the executor's ``cancel`` (or, out of time, the executor itself) gets to wind down."""
DEADLINE_MARGIN_SECONDS = 10.0
MAX_RELATED_TASKS = 20

RemainingMillis = Callable[[], int]
"""The Lambda context's ``get_remaining_time_in_millis``."""


def process_work_item(
    runtime: Runtime,
    item: WorkItem,
    *,
    receive_count: int = 1,
    remaining_ms: RemainingMillis | None = None,
    resumable: Resumable | None = None,
) -> RunReport | None:
    """Synchronous entry point (the SQS handler calls this once per record): what the run did, or
    None when the item started no run (a duplicate, a task that is gone or was interrupted)."""
    return asyncio.run(
        run_work_item(runtime, item, receive_count=receive_count, remaining_ms=remaining_ms, resumable=resumable)
    )


@dataclass(frozen=True)
class Resumable:
    """How a durable execution runs a turn across invocations (:mod:`.durable`): the run was
    claimed by an earlier step (``record`` is the task as read now), the executor's
    ``context.steps`` come from ``steps``, events the executor emits while ``replaying()`` were
    stored by an earlier invocation and are dropped, and ``suspend`` are the exceptions that end
    this invocation without settling (the execution goes on in the next one)."""

    record: TaskRecord
    steps: Callable[[RunLog], Steps]
    replaying: Callable[[], bool]
    suspend: tuple[type[BaseException], ...]


def claim_run(runtime: Runtime, item: WorkItem, receive_count: int) -> Committed[Claim] | None:
    """Claim the run of ``item`` (:func:`~a2a_serverless.transitions.claim`); None when its task
    no longer exists."""
    settings = runtime.settings
    rule = partial(
        claim,
        message_id=item.message_id,
        receive_count=receive_count,
        now=int(time.time()),
        lease_seconds=settings.run_lease_seconds,
        max_history=settings.max_history,
    )
    try:
        return mutate(runtime.store, Scope(item.tenant, item.owner), item.task_id, rule)
    except TaskNotFoundError:
        return None


@telemetry.traced_run
async def run_work_item(
    runtime: Runtime,
    item: WorkItem,
    *,
    receive_count: int = 1,
    remaining_ms: RemainingMillis | None = None,
    resumable: Resumable | None = None,
) -> RunReport | None:
    started = time.monotonic()
    scope = Scope(item.tenant, item.owner)
    settings = runtime.settings
    # Load the executor before claiming: a bad import path raises ConfigError here, the item goes
    # back to SQS untouched, and after maxReceiveCount the dead-letter handler fails the task.
    executor = runtime.executor
    if resumable is not None:
        record = resumable.record
    else:
        claimed = await asyncio.to_thread(claim_run, runtime, item, receive_count)
        if claimed is None:
            logger.warning("work item for a task that no longer exists", extra={"task_id": item.task_id})
            return None
        if claimed.result is Claim.INTERRUPTED:
            logger.error("run was interrupted; task failed", extra={"task_id": item.task_id})
            return None
        if claimed.result is Claim.SKIPPED:
            logger.info("duplicate or stale work item skipped", extra={"task_id": item.task_id})
            return None
        record = claimed.record
    # The executor gets every part as it was sent, stored ones read back whatever their size.
    current = record.task
    if has_references(current):
        current = await asyncio.to_thread(runtime.parts.present, current, scope, current.id, None)
    context = RequestContext(
        task_id=record.task.id,
        context_id=record.task.context_id,
        message=next((m for m in reversed(current.history) if m.message_id == item.message_id), None),
        current_task=current,
        configuration=SendMessageConfiguration.model_validate_json(item.configuration) if item.configuration else None,
        metadata=json.loads(item.metadata) if item.metadata else {},
        tenant=scope.tenant,
        caller=scope.owner,
        requested_extensions=item.extensions,
        related_tasks=await asyncio.to_thread(_related_tasks, runtime, scope, record.task, item.message_id),
        state=agent_state_of(runtime, scope),
        deadline=(deadline := _deadline(remaining_ms)),
    )
    writer = RunWriter(runtime.store, record)
    loop = asyncio.get_running_loop()
    canceled, lost = asyncio.Event(), asyncio.Event()
    cancel = canceled.set
    if resumable is not None:
        # A durable run that replays is stopped where it left off (in the wait CancelTask woke, or
        # the step it was in), not part-way through the replay: there its code handles the cancel
        # (a delegation cancels its remote task).
        cancel = partial(_once_replayed, resumable.replaying, canceled)
    monitor = RunMonitor(
        runtime.store,
        writer,
        item.message_id,
        lease_seconds=settings.run_lease_seconds,
        on_cancel=lambda: loop.call_soon_threadsafe(cancel),
        on_lost=lambda: loop.call_soon_threadsafe(lost.set),
        alive=(lambda: remaining_ms() > 0) if remaining_ms is not None else (lambda: True),
    )
    monitor.start()
    try:
        async with RunLog(writer, message_id=item.message_id, settings=settings, offloader=runtime.offloader) as log:
            events: EventQueue = log
            suspend: tuple[type[BaseException], ...] = ()
            if resumable is not None:
                context.steps = resumable.steps(log)
                events = _Replayed(log, resumable.replaying)
                suspend = resumable.suspend
            end = await _supervise(executor, context, log, events, canceled, lost, deadline, suspend)
            if end is None:
                logger.warning("the run lost its task to another writer; stopped", extra={"task_id": record.task.id})
                return report_run(RUN_LOST, started, None, log.written)
            try:
                await log.flush()
            except RunLost:
                logger.warning("the run lost its task to another writer", extra={"task_id": record.task.id})
                return report_run(RUN_LOST, started, None, log.written)
            except Exception:
                end = RunEnd.FAILED  # (logged by the log's committer)
        rule_end = partial(settle, message_id=item.message_id, end=end, max_history=settings.max_history)
        try:
            settled = (await asyncio.to_thread(writer.transact, rule_end)).record
        except Exception:
            logger.exception("could not settle task", extra={"task_id": record.task.id})
            settled = None
    finally:
        monitor.stop()
    return report_run(end, started, settled, log.written)


def _once_replayed(replaying: Callable[[], bool], canceled: asyncio.Event) -> None:
    """Set ``canceled`` once the run no longer replays (checked on the run's loop)."""
    if not replaying():
        canceled.set()
    else:
        asyncio.get_running_loop().call_later(0.01, _once_replayed, replaying, canceled)


class _Replayed:
    """The event queue of a resumed durable turn: what the executor emits while the execution
    replays was stored by an earlier invocation, and is dropped."""

    def __init__(self, log: RunLog, replaying: Callable[[], bool]) -> None:
        self._log = log
        self._replaying = replaying

    async def enqueue_event(self, event: Event) -> None:
        if not self._replaying():
            await self._log.enqueue_event(event)


async def _supervise(
    executor: AgentExecutor,
    context: RequestContext,
    log: RunLog,
    events: EventQueue,
    canceled: asyncio.Event,
    lost: asyncio.Event,
    deadline: float | None,
    suspend: tuple[type[BaseException], ...] = (),
) -> RunEnd | None:
    """Run the executor until it returns, raises, is canceled, runs out of time or the run is lost
    (None). Whatever it emitted on the way (to ``events``) is queued in ``log``. An exception of
    ``suspend`` (a durable execution ending this invocation) is raised as it is."""
    execution = asyncio.create_task(telemetry.invoke_agent(executor, context, events))
    signals: dict[asyncio.Task[object], RunEnd | None] = {
        asyncio.create_task(canceled.wait()): RunEnd.CANCELED,
        asyncio.create_task(lost.wait()): None,
        asyncio.create_task(log.failed.wait()): RunEnd.FAILED,
    }
    timeout = max(0.0, deadline - time.monotonic()) if deadline is not None else None
    try:
        done, _ = await asyncio.wait({execution, *signals}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in signals:
            waiter.cancel()
    if execution in done:
        raised = None if execution.cancelled() else execution.exception()
        if suspend and isinstance(raised, suspend):
            raise raised
        return _outcome(execution, context.task_id)
    if not done:
        logger.error("the run reached its deadline; stopping it", extra={"task_id": context.task_id})
        await _stop(execution, CANCEL_GRACE_SECONDS, log, context.task_id)
        return RunEnd.OUT_OF_TIME
    end = signals[next(waiter for waiter in signals if waiter in done)]
    if end is RunEnd.CANCELED:
        # Let the executor react (it usually reports CANCELED), then stop it whatever it does.
        try:
            await asyncio.wait_for(executor.cancel(context, events), CANCEL_GRACE_SECONDS)
        except (Exception, TimeoutError) as exc:
            if _refused_as_ended(exc, log):  # execute settled the task (or lost it) as the cancel came
                logger.info("the cancel came after the run ended: %s", exc, extra={"task_id": context.task_id})
            else:
                _log_failure(exc, context.task_id)
    await _stop(execution, CANCEL_GRACE_SECONDS, log, context.task_id)
    if end is RunEnd.FAILED and isinstance(log.failure, RunLost):
        return None
    return end


def _outcome(execution: asyncio.Task[None], task_id: str) -> RunEnd | None:
    if execution.cancelled():
        return RunEnd.FAILED
    exc = execution.exception()
    if exc is None:
        return RunEnd.RETURNED
    if isinstance(exc, RunLost):
        return None
    _log_failure(exc, task_id)
    return RunEnd.INVALID if isinstance(exc, InvalidAgentResponseError) else RunEnd.FAILED


async def _stop(execution: asyncio.Task[None], grace: float, log: RunLog, task_id: str) -> None:
    """Cancel the executor's coroutine and wait for it to wind down, at most ``grace`` seconds
    (it may catch the cancellation to clean up; what it emits meanwhile is still stored)."""
    execution.cancel()
    await asyncio.wait({execution}, timeout=grace)
    if execution.done() and not execution.cancelled() and (exc := execution.exception()) is not None:
        if _refused_as_ended(exc, log):
            # The executor's ``cancel`` reported CANCELED while ``execute`` still worked: its next
            # event was refused, which stops it as the cancellation would have. Not its failure.
            logger.info("the run stopped on an event after it ended: %s", exc, extra={"task_id": task_id})
        else:
            logger.warning("executor raised while stopping", exc_info=exc, extra={"task_id": task_id})


def _refused_as_ended(exc: BaseException, log: RunLog) -> bool:
    """``exc`` is the run log refusing an event because the run already ended: an event settled the
    task, or another writer took it. A cancel races ``execute`` (both may report); the loser's
    refusal is how it stops, as a ``CancelledError`` is."""
    return isinstance(exc, RunLost) or (isinstance(exc, InvalidAgentResponseError) and log.closed)


def _deadline(remaining_ms: RemainingMillis | None) -> float | None:
    """When (monotonic) to stop the executor: a margin before the invocation's end."""
    if remaining_ms is None:
        return None
    remaining = remaining_ms() / 1000
    return time.monotonic() + remaining - min(DEADLINE_MARGIN_SECONDS, remaining / 4)


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


def _log_failure(exc: BaseException, task_id: str) -> None:
    logger.error("executor failed", exc_info=exc, extra={"task_id": task_id})
