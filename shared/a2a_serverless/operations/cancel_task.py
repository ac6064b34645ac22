"""CancelTask (A2A specification, section 3.1.5 Cancel Task).

A task nobody is running (SUBMITTED and not yet claimed, or waiting for input) is canceled at once
(in durable mode, the execution waiting for its input is woken to end).
A running task is marked ``cancel_requested``; its worker, on whatever instance, observes the mark,
calls the executor's ``cancel`` and ends the task CANCELED. This call waits up to
``cancel_wait_seconds`` for that (polling the task's small head) and returns the task as it then
is. A terminal task (including an already canceled one) is TaskNotCancelable. Conditional writes
decide races with a completing run: the task ends in exactly one terminal state.
"""

from __future__ import annotations

import time
from functools import partial

from ..errors import TaskNotFoundError
from ..lifecycle import with_history_length
from ..models import CancelTaskRequest, Task
from ..mutation import mutate
from ..ports import Scope, TaskHead, TaskRecord
from ..runtime import Runtime
from ..transitions import request_cancel
from ._context import CallContext, resolve_scope

__all__ = ["cancel_task"]


def cancel_task(request: CancelTaskRequest, ctx: CallContext, runtime: Runtime) -> Task:
    scope = resolve_scope(ctx, runtime, task_id=request.id)
    rule = partial(request_cancel, max_history=runtime.settings.max_history)
    # Durable mode: an execution may wait (for input, or in a run's sleep) with no function
    # running; the callback it waits on is on the head (the cancel clears it when it ends the task).
    waiting = runtime.store.get_head(scope, request.id)
    record = _marked(runtime, scope, waiting) or mutate(runtime.store, scope, request.id, rule).record
    if runtime.durable is not None and waiting is not None and waiting.waiting_callback:
        # Wake it: to end (the task is over), or for its run to see the cancel mark.
        runtime.durable.abandon(waiting.waiting_callback, "the task was canceled")
    head = record.head
    deadline = time.monotonic() + runtime.settings.cancel_wait_seconds
    while not head.state.is_terminal and time.monotonic() < deadline:
        wait = min(runtime.settings.poll_interval_seconds, max(0.0, deadline - time.monotonic()))
        runtime.store.wait_for_change(scope, request.id, head.version, wait)
        latest = runtime.store.get_head(scope, request.id)
        if latest is None:
            break
        head = latest
    if head.version != record.version:
        latest_record = runtime.store.get_task(scope, request.id)
        if latest_record is None:
            raise TaskNotFoundError(metadata={"taskId": request.id})
        record = latest_record
    task = with_history_length(record.task, None)
    return runtime.parts.present(task, scope, task.id, runtime.settings.inline_response_bytes)


def _marked(runtime: Runtime, scope: Scope, head: TaskHead | None) -> TaskRecord | None:
    """A running task (``head`` as just read): its cancel mark, set on the head alone (a commit
    conditioned on a full read keeps losing to the group commits of a run that streams), and the
    task as read after it. None when the task does not run (any more), or is marked already: the
    rule decides from a read."""
    if head is None or not head.running_message_id or head.state.is_terminal or head.cancel_requested:
        return None
    if not runtime.store.mark_cancel(scope, head.task_id, head.running_message_id):
        return None
    return runtime.store.get_task(scope, head.task_id)
