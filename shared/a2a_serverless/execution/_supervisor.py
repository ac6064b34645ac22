"""The executor's supervision during a run (:mod:`.worker`, steps 2, 3 and 5): run ``execute``
until it returns, raises, is canceled, runs out of time or the run is lost; stop it with a grace;
and the deadline, with the time each stop may take before the worker ends the run without its
executor (:mod:`._own_loop`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import telemetry
from ..errors import InvalidAgentResponseError
from ..transitions import RunEnd, RunLost
from ._own_loop import RunGuard
from .api import AgentExecutor, EventQueue, RequestContext
from .run_log import RunLog

__all__ = [
    "ABANDON_MARGIN_SECONDS",
    "CANCEL_GRACE_SECONDS",
    "DEADLINE_MARGIN_SECONDS",
    "Deadline",
    "deadline_of",
    "end_by",
    "supervise",
]

logger = logging.getLogger("a2a_serverless.execution.worker")

CANCEL_GRACE_SECONDS = 5.0
"""How long the executor's ``cancel`` (or, out of time, the executor itself) gets to wind down."""
DEADLINE_MARGIN_SECONDS = 10.0
ABANDON_MARGIN_SECONDS = 2.0
"""How long after the graces a stopped run may take to settle before the worker settles it without
its executor (out of time: at most a quarter of the deadline's margin)."""

RemainingMillis = Callable[[], int]
"""The Lambda context's ``get_remaining_time_in_millis``."""


def end_by(reason: RunEnd | None, now: float) -> float:
    """By when a run asked to stop at ``now`` (canceled, or its task lost: None) must have ended:
    the graces it gets, and the margin to settle."""
    if reason is RunEnd.CANCELED:  # ``cancel``'s grace, then ``execute``'s
        return now + 2 * CANCEL_GRACE_SECONDS + ABANDON_MARGIN_SECONDS
    return now + CANCEL_GRACE_SECONDS + ABANDON_MARGIN_SECONDS


@dataclass(frozen=True)
class Deadline:
    at: float
    """When (monotonic) to stop the executor: a margin before the invocation's end."""
    grace: float
    """How long the stopped executor then gets to end."""
    abandon_by: float
    """When the worker settles the task without an executor that did not end (step 5)."""


def deadline_of(remaining_ms: RemainingMillis | None) -> Deadline | None:
    """The run's deadline: a quarter of the invocation's time before its end (at most
    ``DEADLINE_MARGIN_SECONDS``); the executor's grace and the settle fit in that margin."""
    if remaining_ms is None:
        return None
    remaining = remaining_ms() / 1000
    margin = min(DEADLINE_MARGIN_SECONDS, remaining / 4)
    at = time.monotonic() + remaining - margin
    grace = min(CANCEL_GRACE_SECONDS, margin / 2)
    return Deadline(at, grace, at + grace + min(ABANDON_MARGIN_SECONDS, margin / 4))


async def supervise(
    executor: AgentExecutor,
    context: RequestContext,
    log: RunLog,
    events: EventQueue,
    canceled: asyncio.Event,
    lost: asyncio.Event,
    deadline: Deadline | None,
    guard: RunGuard[Any],
    suspend: tuple[type[BaseException], ...] = (),
) -> RunEnd | None:
    """Run the executor until it returns, raises, is canceled, runs out of time or the run is lost
    (None). Whatever it emitted on the way (to ``events``) is queued in ``log``. An exception of
    ``suspend`` (a durable execution ending this invocation) is raised as it is."""
    execution = guard.create_task(telemetry.invoke_agent(executor, context, events))
    signals: dict[asyncio.Task[object], RunEnd | None] = {
        asyncio.create_task(canceled.wait()): RunEnd.CANCELED,
        asyncio.create_task(lost.wait()): None,
        asyncio.create_task(log.failed.wait()): RunEnd.FAILED,
    }
    timeout = max(0.0, deadline.at - time.monotonic()) if deadline is not None else None
    try:
        done, _ = await asyncio.wait({execution, *signals}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in signals:
            waiter.cancel()
    if execution in done:
        raised = None if execution.cancelled() else execution.exception()
        if suspend and isinstance(raised, suspend):
            raise raised
        return _outcome(execution, guard)
    if not done:
        assert deadline is not None
        level = logging.INFO if guard.abandoned else logging.ERROR
        logger.log(level, "the run reached its deadline; stopping it", extra={"task_id": context.task_id})
        await _stop(execution, deadline.grace, log, guard)
        return RunEnd.OUT_OF_TIME
    end = signals[next(waiter for waiter in signals if waiter in done)]
    if end is RunEnd.CANCELED:
        # Let the executor react (it usually reports CANCELED), then stop it whatever it does. A
        # ``cancel`` past its grace is cancelled and not waited for (``wait_for`` would wait).
        canceling = asyncio.ensure_future(executor.cancel(context, events))
        await asyncio.wait({canceling}, timeout=CANCEL_GRACE_SECONDS)
        exc: BaseException | None = None
        if not canceling.done():
            canceling.cancel()
            exc = TimeoutError(f"the executor's cancel did not return within {CANCEL_GRACE_SECONDS} s")
        elif not canceling.cancelled():
            exc = canceling.exception()
        if exc is not None and not isinstance(exc, Exception):
            raise exc
        if exc is not None:
            if _refused_as_ended(exc, log):  # execute settled the task (or lost it) as the cancel came
                logger.info("the cancel came after the run ended: %s", exc, extra={"task_id": context.task_id})
            else:
                _log_failure(exc, guard)
    await _stop(execution, CANCEL_GRACE_SECONDS, log, guard)
    if end is RunEnd.FAILED and isinstance(log.failure, RunLost):
        return None
    return end


def _outcome(execution: asyncio.Task[None], guard: RunGuard[Any]) -> RunEnd | None:
    if execution.cancelled():
        return RunEnd.FAILED
    exc = execution.exception()
    if exc is None:
        return RunEnd.RETURNED
    if isinstance(exc, RunLost):
        return None
    _log_failure(exc, guard)
    return RunEnd.INVALID if isinstance(exc, InvalidAgentResponseError) else RunEnd.FAILED


async def _stop(execution: asyncio.Task[None], grace: float, log: RunLog, guard: RunGuard[Any]) -> None:
    """Cancel the executor's coroutine and wait for it to wind down, at most ``grace`` seconds
    (it may catch the cancellation to clean up; what it emits meanwhile is still stored). One still
    running then is left behind: the run settles without it (step 5)."""
    task_id = guard.task_id
    execution.cancel()
    await asyncio.wait({execution}, timeout=grace)
    if not execution.done():
        guard.warn_once(
            "the executor did not stop within %.1f s of being cancelled (it swallows asyncio.CancelledError, "
            "or keeps working): the worker ends the run without it",
            grace,
        )
    if execution.done() and not execution.cancelled() and (exc := execution.exception()) is not None:
        if _refused_as_ended(exc, log):
            # The executor's ``cancel`` reported CANCELED while ``execute`` still worked: its next
            # event was refused, which stops it as the cancellation would have. Not its failure.
            logger.info("the run stopped on an event after it ended: %s", exc, extra={"task_id": task_id})
        elif guard.abandoned:
            _log_failure(exc, guard)
        else:
            logger.warning("executor raised while stopping", exc_info=exc, extra={"task_id": task_id})


def _refused_as_ended(exc: BaseException, log: RunLog) -> bool:
    """``exc`` is the run log refusing an event because the run already ended: an event settled the
    task, or another writer took it. A cancel races ``execute`` (both may report); the loser's
    refusal is how it stops, as a ``CancelledError`` is."""
    return isinstance(exc, RunLost) or (isinstance(exc, InvalidAgentResponseError) and log.closed)


def _log_failure(exc: BaseException, guard: RunGuard[Any]) -> None:
    if guard.abandoned:  # the run was ended without it: what it does now changes nothing
        logger.info("the executor raised after its run was ended without it: %r", exc, extra={"task_id": guard.task_id})
    else:
        logger.error("executor failed", exc_info=exc, extra={"task_id": guard.task_id})
