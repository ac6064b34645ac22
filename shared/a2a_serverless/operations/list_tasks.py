"""ListTasks (spec 3.1.4): the caller's tasks, newest status first, cursor-paginated."""

from __future__ import annotations

from ..errors import FieldViolation, InvalidParamsError
from ..lifecycle import with_history_length, without_artifacts
from ..models import ListTasksRequest, ListTasksResponse, TaskState
from ..ports import InvalidPageToken, TaskQuery
from ..runtime import Runtime
from ._context import CallContext, check_id_length, resolve_scope

__all__ = ["DEFAULT_PAGE_SIZE", "list_tasks"]

DEFAULT_PAGE_SIZE = 50


def list_tasks(request: ListTasksRequest, ctx: CallContext, runtime: Runtime) -> ListTasksResponse:
    check_id_length("contextId", request.context_id)
    page_size = request.page_size if request.page_size is not None else DEFAULT_PAGE_SIZE
    query = TaskQuery(
        context_id=request.context_id,
        state=None if request.status is TaskState.TASK_STATE_UNSPECIFIED else request.status,
        status_after=request.status_timestamp_after,
        page_size=page_size,
        page_token=request.page_token,
    )
    scope = resolve_scope(ctx, runtime)
    try:
        page = runtime.store.list_tasks(scope, query)
    except InvalidPageToken:
        raise InvalidParamsError(
            violations=[FieldViolation("pageToken", "not a page token issued for this query")]
        ) from None
    tasks = []
    budget = runtime.settings.inline_response_bytes
    for task in page.tasks:
        task = with_history_length(task, request.history_length)
        task = task if request.include_artifacts else without_artifacts(task)
        # One budget for the page: what the first tasks take inline, the later ones get as URLs.
        shown, spent = runtime.parts.present_within(task, scope, task.id, budget)
        budget = max(0, budget - spent)
        tasks.append(shown)
    return ListTasksResponse(
        tasks=tasks, next_page_token=page.next_page_token, page_size=page_size, total_size=page.total_size
    )
