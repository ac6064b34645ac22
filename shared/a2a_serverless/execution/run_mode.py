"""How the worker runs a work item (:mod:`.worker`): one :class:`RunMode` object says it.

The worker's steps are the same in every mode (claim, run under supervision, settle); a mode says
the four things that differ:

* :meth:`RunMode.claim`: the task as the run starts it. The queue's mode (inline and SQS, this
  module's :data:`QUEUED`) claims the item's message by the run rules
  (:func:`~a2a_serverless.transitions.claim`); a durable turn that goes on in a new invocation was
  claimed by an earlier step, and reads its task as it is now.
* :meth:`RunMode.events`: where the executor's events go (the run log; a resumed durable turn drops
  what the executor re-emits while it replays: an earlier invocation stored it).
* :meth:`RunMode.steps`: ``context.steps`` (plain calls here; checkpointed steps in durable mode).
* :meth:`RunMode.stop`: how a cancel reaches the run (at once here; a resumed durable turn is
  stopped once its replay is over, where it left off), and :attr:`RunMode.suspend`, the exceptions
  that end the invocation without settling the run (none here).

Durable mode's own is :class:`a2a_serverless.durable.turns.ResumedTurn`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import TYPE_CHECKING

from ..errors import TaskNotFoundError
from ..mutation import Committed, mutate
from ..ports import Scope, TaskRecord, WorkItem
from ..transitions import Claim, claim
from .api import EventQueue, Steps

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .run_log import RunLog

__all__ = ["QUEUED", "RunMode", "claim_run"]

logger = logging.getLogger("a2a_serverless.execution.worker")


class RunMode:
    """The queue's mode (inline and SQS): the run claims its message, the executor's events go to
    the run log, its steps are plain calls, a cancel stops it at once."""

    @property
    def suspend(self) -> tuple[type[BaseException], ...]:
        """Exceptions that end this invocation without settling the run (raised as they are)."""
        return ()

    async def claim(self, runtime: Runtime, item: WorkItem, receive_count: int) -> TaskRecord | None:
        """The task as the run starts it; None when the item starts no run (a duplicate, a task
        that is gone or was interrupted)."""
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
        return claimed.record

    def events(self, log: RunLog) -> EventQueue:
        """The event queue the executor gets."""
        return log

    def steps(self, log: RunLog) -> Steps:
        """The executor's ``context.steps``."""
        return Steps()

    def stop(self, canceled: asyncio.Event) -> None:
        """CancelTask's mark was seen (called on the run's loop): set ``canceled`` when the run
        should stop."""
        canceled.set()


QUEUED = RunMode()
"""The worker's default mode."""


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
