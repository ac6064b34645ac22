"""Tasks put straight into a store, for the suites that start from a task's event log (the push
deliveries read it)."""

from __future__ import annotations

from a2a_serverless.models import (
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_serverless.ports import Scope, TaskRecord, TaskStore

__all__ = ["a_task_with_events"]


def a_task_with_events(
    store: TaskStore,
    scope: Scope,
    count: int,
    *,
    task_id: str = "t1",
    push_config: TaskPushNotificationConfig | None = None,
) -> TaskRecord:
    """A task of context ``c1`` whose log holds ``count`` events: its snapshot (SUBMITTED), then
    WORKING status updates (``metadata.n``: the event's number); ``push_config`` is created with it."""
    task = Task(id=task_id, context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    record = store.create_task(TaskRecord(scope=scope, task=task), [StreamResponse(task=task)], push_config=push_config)
    for n in range(2, count + 1):
        status = TaskStatus(state=TaskState.TASK_STATE_WORKING)
        update = TaskStatusUpdateEvent(task_id=task_id, context_id="c1", status=status, metadata={"n": n})
        record = store.commit(record, [StreamResponse(status_update=update)])
    return record
