"""CancelTask (spec 3.1.5, digest 3.7).

A task nobody is running (SUBMITTED and not yet claimed, or waiting for input) is canceled at once.
A running task is marked ``cancel_requested``; its worker, on whatever instance, observes the mark,
calls the executor's ``cancel`` and ends the task CANCELED. This call waits up to
``cancel_wait_seconds`` for that and returns the task as it then is. A terminal task (including an
already canceled one) is TaskNotCancelable. Conditional writes decide races with a completing run:
the task ends in exactly one terminal state.
"""

from __future__ import annotations

import time
from dataclasses import replace

from ..errors import TaskNotCancelableError
from ..lifecycle import CANCELED_TEXT, end_task, mutate, with_history_length
from ..models import CancelTaskRequest, StreamResponse, Task, TaskState
from ..ports import TaskRecord
from ..runtime import Runtime
from ._context import CallContext, resolve_scope

__all__ = ["cancel_task"]



def cancel_task(request: CancelTaskRequest, ctx: CallContext, runtime: Runtime) -> Task:
    scope = resolve_scope(ctx, runtime, task_id=request.id)

    def change(record: TaskRecord) -> tuple[TaskRecord, list[StreamResponse]] | None:
        task = record.task
        if task.status.state.is_terminal:
            raise TaskNotCancelableError(
                f"Task {task.id} is already {task.status.state.value}", metadata={"taskId": task.id}
            )
        if record.running_message_id:
            if record.cancel_requested:
                return None
            return replace(record, cancel_requested=True), []
        ended, events = end_task(record, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT)
        return ended, list(events)

    record = mutate(runtime.store, scope, request.id, change)
    deadline = time.monotonic() + runtime.settings.cancel_wait_seconds
    while not record.task.status.state.is_terminal and time.monotonic() < deadline:
        wait = min(runtime.settings.poll_interval_seconds, max(0.0, deadline - time.monotonic()))
        runtime.store.wait_for_change(scope, request.id, record.version, wait)
        latest = runtime.store.get_task(scope, request.id)
        if latest is None:
            break
        record = latest
    return with_history_length(record.task, None)
