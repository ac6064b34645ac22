"""Work items that SQS gave up on (moved to the dead-letter queue after ``maxReceiveCount``
failed deliveries): fail their task with a clear message, so no task waits forever."""

from __future__ import annotations

import logging

from ..errors import TaskNotFoundError
from ..lifecycle import end_task, mutate
from ..models import StreamResponse, TaskState
from ..ports import Scope, TaskRecord, WorkItem
from ..runtime import Runtime

__all__ = ["DEAD_LETTER_TEXT", "fail_dead_work_item"]

logger = logging.getLogger(__name__)

DEAD_LETTER_TEXT = "The agent could not process this message after several attempts."


def fail_dead_work_item(runtime: Runtime, item: WorkItem) -> bool:
    """Fail the task if this item's message is still pending or running. Returns whether it did;
    an item whose task already moved on (or is gone) is acknowledged and ignored."""
    failed = False

    def change(record: TaskRecord) -> tuple[TaskRecord, list[StreamResponse]] | None:
        nonlocal failed
        failed = False
        task = record.task
        mine = item.message_id in (record.pending_message_id, record.running_message_id)
        if task.status.state.is_terminal or not mine:
            return None
        failed = True
        ended, events = end_task(
            record, TaskState.TASK_STATE_FAILED, DEAD_LETTER_TEXT, max_history=runtime.settings.max_history
        )
        return ended, list(events)

    try:
        mutate(runtime.store, Scope(item.tenant, item.owner), item.task_id, change)
    except TaskNotFoundError:
        logger.warning("dead-lettered work item for a missing task", extra={"task_id": item.task_id})
        return False
    if failed:
        logger.error("task failed after its work item was dead-lettered", extra={"task_id": item.task_id})
    return failed
