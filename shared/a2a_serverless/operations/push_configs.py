"""The four push-notification config operations (spec 3.1.7-3.1.10).

All are gated by ``capabilities.pushNotifications`` and scoped to the caller: the task must be the
caller's (else TaskNotFound), and configs are keyed under it. Create assigns an id when none is
given and replaces a config with the same id. Get of a missing config is TaskNotFound. Delete is
idempotent. A created config receives the task's events from the next one on (an inline config on
SendMessage gets every event). Delivery is :mod:`a2a_serverless.push`'s job.
"""

from __future__ import annotations

from ..errors import FieldViolation, InvalidParamsError, TaskNotFoundError
from ..models import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from ..ports import InvalidPageToken, Scope, TaskHead
from ..runtime import Runtime
from ._context import CallContext, check_id_length, id_too_long, resolve_scope
from ._push import prepare_config, require_push_capability

__all__ = [
    "create_push_config",
    "delete_push_config",
    "get_push_config",
    "list_push_configs",
]

DEFAULT_PAGE_SIZE = 100


def _task(ctx: CallContext, runtime: Runtime, task_id: str) -> TaskHead:
    require_push_capability(runtime)
    scope = resolve_scope(ctx, runtime, task_id=task_id)
    head = runtime.store.get_head(scope, task_id)
    if head is None:
        raise TaskNotFoundError(metadata={"taskId": task_id})
    return head


def _task_scope(ctx: CallContext, runtime: Runtime, task_id: str) -> Scope:
    return _task(ctx, runtime, task_id).scope


def create_push_config(
    request: TaskPushNotificationConfig, ctx: CallContext, runtime: Runtime
) -> TaskPushNotificationConfig:
    if not request.task_id:
        raise InvalidParamsError(violations=[FieldViolation("taskId", "Field required")])
    record = _task(ctx, runtime, request.task_id)
    check_id_length("id", request.id)
    config = prepare_config(request, record.scope, request.task_id, runtime)
    # Notifications start with the task's next event; the dispatcher, seeing the config appear,
    # also delivers any event that was logged between this read and the write.
    # Its notifications take the shape of the version that asked for them (a v0.3 client's webhook
    # gets a v0.3 Task).
    return runtime.store.put_push_config(
        record.scope, config, start_after_seq=record.last_seq, protocol_version=ctx.version
    )


def get_push_config(
    request: GetTaskPushNotificationConfigRequest, ctx: CallContext, runtime: Runtime
) -> TaskPushNotificationConfig:
    scope = _task_scope(ctx, runtime, request.task_id)
    config = None if id_too_long(request.id) else runtime.store.get_push_config(scope, request.task_id, request.id)
    if config is None:
        raise TaskNotFoundError(
            "The push notification configuration does not exist",
            metadata={"taskId": request.task_id, "configId": request.id},
        )
    return config


def list_push_configs(
    request: ListTaskPushNotificationConfigsRequest, ctx: CallContext, runtime: Runtime
) -> ListTaskPushNotificationConfigsResponse:
    scope = _task_scope(ctx, runtime, request.task_id)
    try:
        configs, token = runtime.store.list_push_configs(
            scope, request.task_id, request.page_size or DEFAULT_PAGE_SIZE, request.page_token
        )
    except InvalidPageToken:
        raise InvalidParamsError(
            violations=[FieldViolation("pageToken", "not a page token issued for this task")]
        ) from None
    return ListTaskPushNotificationConfigsResponse(configs=configs, next_page_token=token)


def delete_push_config(request: DeleteTaskPushNotificationConfigRequest, ctx: CallContext, runtime: Runtime) -> None:
    scope = _task_scope(ctx, runtime, request.task_id)
    if not id_too_long(request.id):
        runtime.store.delete_push_config(scope, request.task_id, request.id)
