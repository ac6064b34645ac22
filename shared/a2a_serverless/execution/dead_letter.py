"""Work items that SQS gave up on (moved to the dead-letter queue after ``maxReceiveCount``
failed deliveries): fail their task with a clear message, so no task waits forever."""

from __future__ import annotations

import logging
from functools import partial

from ..errors import TaskNotFoundError
from ..mutation import mutate
from ..ports import Scope, WorkItem
from ..runtime import Runtime
from ..transitions import DEAD_LETTER_TEXT, dead_letter

__all__ = ["DEAD_LETTER_TEXT", "fail_dead_work_item"]

logger = logging.getLogger(__name__)


def fail_dead_work_item(runtime: Runtime, item: WorkItem) -> bool:
    """Fail the task if this item's message is still pending or running. Returns whether it did;
    an item whose task already moved on (or is gone) is acknowledged and ignored."""
    rule = partial(dead_letter, message_id=item.message_id, max_history=runtime.settings.max_history)
    try:
        committed = mutate(runtime.store, Scope(item.tenant, item.owner), item.task_id, rule)
    except TaskNotFoundError:
        logger.warning("dead-lettered work item for a missing task", extra={"task_id": item.task_id})
        return False
    if committed.result:
        logger.error("task failed after its work item was dead-lettered", extra={"task_id": item.task_id})
    return committed.result
