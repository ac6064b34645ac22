"""The sweeper: settles runs whose worker stopped renewing their lease.

A run's worker renews its lease while it is alive (:mod:`.worker`). A worker that dies (killed,
out of memory, its environment shut down after a timeout) stops renewing; SQS would only redeliver
its work item after the queue's visibility timeout (six times the worker's timeout: 90 minutes),
and the task would show WORKING all that time. The sweeper runs on a schedule (every minute, an
EventBridge rule in ``template.yaml``), finds the running tasks whose lease ended, and fails them
with a clear message: a dead run is noticed within about two minutes.
"""

from __future__ import annotations

import logging
import time
from functools import partial

from ..errors import TaskNotFoundError
from ..mutation import mutate
from ..runtime import Runtime
from ..transitions import expire_lease

__all__ = ["SWEEP_LIMIT", "sweep"]

logger = logging.getLogger(__name__)

SWEEP_LIMIT = 500
"""Runs settled per sweep at most (the rest wait for the next one, a minute later)."""


def sweep(runtime: Runtime, *, now: int | None = None, limit: int = SWEEP_LIMIT) -> int:
    """Fail the tasks whose run's lease ended before ``now`` (epoch seconds); returns how many."""
    now = int(time.time()) if now is None else now
    swept = 0
    for scope, task_id in runtime.store.expired_runs(now, limit):
        rule = partial(expire_lease, now=now, max_history=runtime.settings.max_history)
        try:
            committed = mutate(runtime.store, scope, task_id, rule)
        except TaskNotFoundError:
            continue
        if committed.result:
            swept += 1
            logger.error("a run stopped renewing its lease; task failed", extra={"task_id": task_id})
    return swept
