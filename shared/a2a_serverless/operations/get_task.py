"""GetTask (spec 3.1.3): the task as stored, with ``historyLength`` applied."""

from __future__ import annotations

from ..errors import TaskNotFoundError
from ..lifecycle import with_history_length
from ..models import GetTaskRequest, Task
from ..runtime import Runtime
from ._context import CallContext, resolve_scope

__all__ = ["get_task"]


def get_task(request: GetTaskRequest, ctx: CallContext, runtime: Runtime) -> Task:
    scope = resolve_scope(ctx, runtime, task_id=request.id)
    record = runtime.store.get_task(scope, request.id)
    if record is None:
        raise TaskNotFoundError(metadata={"taskId": request.id})
    task = with_history_length(record.task, request.history_length)
    return runtime.parts.present(task, scope, task.id, runtime.settings.inline_response_bytes)
