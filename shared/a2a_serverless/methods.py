"""The method table: one row per A2A operation (digest section 1.1).

JSON-RPC dispatch, the REST routes, the Lambda entry points in ``functions/`` and the template's
API events are all derived from (or checked against) these rows. A method name is written here
once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import operations as ops
from .models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    ProtoModel,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)

__all__ = ["METHODS", "METHODS_BY_NAME", "Method", "RestRoute"]


@dataclass(frozen=True, slots=True)
class RestRoute:
    """An HTTP+JSON binding of a method. ``path`` uses ``{name}`` placeholders for single segments
    (proto field names in snake_case); every route also exists under a ``/{tenant}`` prefix."""

    verb: str
    path: str


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    """Exact JSON-RPC method name (v1.0)."""
    request: type[ProtoModel]
    routes: tuple[RestRoute, ...]
    function: str
    """The module in ``functions/`` (and the template's function ``<CamelCase>Function``), or
    ``gateway``: the whole app under the Lambda Web Adapter (``GatewayFunction``)."""
    operation: Callable[..., Any]
    """The core function ``(request, CallContext, Runtime)``. For streaming methods it prepares an
    ``EventStream`` (and takes ``last_event_id=``); the transport frames it as SSE."""
    streaming: bool = False
    """Responds with an SSE stream."""


METHODS: tuple[Method, ...] = (
    Method("SendMessage", SendMessageRequest, (RestRoute("POST", "/message:send"),), "send_message", ops.send_message),
    Method(
        "SendStreamingMessage",
        SendMessageRequest,
        (RestRoute("POST", "/message:stream"),),
        "gateway",
        ops.open_message_stream,
        streaming=True,
    ),
    # GetTask and CancelTask share API Gateway's "/tasks/{id}" resource with SubscribeToTask
    # (path parts are whole segments), so the streaming gateway serves them (template.yaml).
    Method("GetTask", GetTaskRequest, (RestRoute("GET", "/tasks/{id}"),), "gateway", ops.get_task),
    Method("ListTasks", ListTasksRequest, (RestRoute("GET", "/tasks"),), "list_tasks", ops.list_tasks),
    Method("CancelTask", CancelTaskRequest, (RestRoute("POST", "/tasks/{id}:cancel"),), "gateway", ops.cancel_task),
    Method(
        "SubscribeToTask",
        SubscribeToTaskRequest,
        (RestRoute("GET", "/tasks/{id}:subscribe"), RestRoute("POST", "/tasks/{id}:subscribe")),
        "gateway",
        ops.open_subscription,
        streaming=True,
    ),
    Method(
        "CreateTaskPushNotificationConfig",
        TaskPushNotificationConfig,
        (RestRoute("POST", "/tasks/{task_id}/pushNotificationConfigs"),),
        "create_push_config",
        ops.create_push_config,
    ),
    Method(
        "GetTaskPushNotificationConfig",
        GetTaskPushNotificationConfigRequest,
        (RestRoute("GET", "/tasks/{task_id}/pushNotificationConfigs/{id}"),),
        "get_push_config",
        ops.get_push_config,
    ),
    Method(
        "ListTaskPushNotificationConfigs",
        ListTaskPushNotificationConfigsRequest,
        (RestRoute("GET", "/tasks/{task_id}/pushNotificationConfigs"),),
        "list_push_configs",
        ops.list_push_configs,
    ),
    Method(
        "DeleteTaskPushNotificationConfig",
        DeleteTaskPushNotificationConfigRequest,
        (RestRoute("DELETE", "/tasks/{task_id}/pushNotificationConfigs/{id}"),),
        "delete_push_config",
        ops.delete_push_config,
    ),
    Method(
        "GetExtendedAgentCard",
        GetExtendedAgentCardRequest,
        (RestRoute("GET", "/extendedAgentCard"),),
        "get_extended_card",
        ops.get_extended_card,
    ),
)

METHODS_BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}
