"""The method table: one typed row per A2A operation (A2A specification, section 5.3 Method Mapping Reference).

Each row names the method once and says what it takes, what it returns and which core function
serves it, in types a reader and mypy can follow: ``SEND_MESSAGE`` is a
``Method[SendMessageRequest, SendMessageResponse]`` served by ``operations.send_message``. JSON-RPC
dispatch, the REST routes (:mod:`.transport.rows`, v1.0 and v0.3 alike), the Lambda entry points in
``functions/`` (each names its row) and the template's API events are derived from or checked
against these rows.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from . import operations as ops
from .models import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    ProtoModel,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from .operations import CallContext, EventStream
from .runtime import Runtime

__all__ = [
    "CANCEL_TASK",
    "CREATE_PUSH_CONFIG",
    "DELETE_PUSH_CONFIG",
    "GET_EXTENDED_CARD",
    "GET_PUSH_CONFIG",
    "GET_TASK",
    "LIST_PUSH_CONFIGS",
    "LIST_TASKS",
    "METHODS",
    "METHODS_BY_NAME",
    "SEND_MESSAGE",
    "SEND_STREAMING_MESSAGE",
    "SUBSCRIBE_TO_TASK",
    "Binder",
    "Method",
    "MethodInfo",
    "Operation",
    "RestRoute",
]

Req = TypeVar("Req", bound=ProtoModel)
Res = TypeVar("Res", bound=ProtoModel | None)
T = TypeVar("T")
Out = TypeVar("Out")
T_co = TypeVar("T_co", covariant=True)
Res_co = TypeVar("Res_co", bound=ProtoModel | None, covariant=True)

Operation = Callable[[Req, CallContext, Runtime], Out]
"""A core function: the request message, who calls and how, the runtime -> the result."""


@dataclass(frozen=True, slots=True)
class RestRoute:
    """An HTTP+JSON binding of a method. ``path`` uses ``{name}`` placeholders for single segments
    (proto field names in snake_case); every route also exists under a ``/{tenant}`` prefix."""

    verb: str
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Method(Generic[Req, Res_co]):
    """An A2A method: ``Req`` is its request message, ``Res_co`` what it answers (for a streaming
    method, each event of its stream)."""

    name: str
    """Exact JSON-RPC method name (v1.0)."""
    request: type[Req]
    routes: tuple[RestRoute, ...]
    function: str
    """The module in ``functions/`` (and the template's function ``<CamelCase>Function``), or
    ``gateway``: the whole app under the Lambda Web Adapter (``GatewayFunction``)."""
    call: Operation[Req, Res_co] | None = None
    """The core function of a unary method."""
    stream: Operation[Req, EventStream] | None = None
    """The core function of a streaming method: it prepares the ``EventStream`` (resuming after
    ``CallContext.last_event_id``) that the transport frames as Server-Sent Events."""

    def __post_init__(self) -> None:
        if (self.call is None) == (self.stream is None):
            raise TypeError(f"{self.name}: a method has exactly one of call= and stream=")

    @property
    def streaming(self) -> bool:
        """Responds with an SSE stream."""
        return self.stream is not None

    def bind(self, binder: Binder[T]) -> T:
        """``binder(self)``, with this row's request and response types (how a binding builds its
        typed row for every method of the table)."""
        return binder(self)

    @property
    def response(self) -> type[ProtoModel] | None:
        """The response message (a streaming method's: each event's), None for an empty answer,
        read off the operation's annotation (the OpenAPI document's schemas)."""
        if self.stream is not None:
            return StreamResponse
        result = typing.get_type_hints(self.call)["return"]
        return result if isinstance(result, type) and issubclass(result, ProtoModel) else None


class MethodInfo(Protocol):
    """What code that handles every row reads of it (the table mixes request and response types;
    only the row itself, or a binding built from it, calls its operation with them)."""

    @property
    def name(self) -> str: ...
    @property
    def request(self) -> type[ProtoModel]: ...
    @property
    def routes(self) -> tuple[RestRoute, ...]: ...
    @property
    def function(self) -> str: ...
    @property
    def streaming(self) -> bool: ...
    @property
    def response(self) -> type[ProtoModel] | None: ...
    def bind(self, binder: Binder[T]) -> T: ...


class Binder(Protocol[T_co]):
    """Builds something typed from any row: called with each row's own ``Method[Req, Res]``."""

    def __call__(self, method: Method[Req, Res], /) -> T_co: ...


SEND_MESSAGE: Method[SendMessageRequest, SendMessageResponse] = Method(
    name="SendMessage",
    request=SendMessageRequest,
    routes=(RestRoute("POST", "/message:send"),),
    function="send_message",
    call=ops.send_message,
)
SEND_STREAMING_MESSAGE: Method[SendMessageRequest, StreamResponse] = Method(
    name="SendStreamingMessage",
    request=SendMessageRequest,
    routes=(RestRoute("POST", "/message:stream"),),
    function="gateway",
    stream=ops.open_message_stream,
)
# GetTask and CancelTask share API Gateway's "/tasks/{id}" resource with SubscribeToTask (path
# parts are whole segments), so the streaming gateway serves them (template.yaml).
GET_TASK: Method[GetTaskRequest, Task] = Method(
    name="GetTask",
    request=GetTaskRequest,
    routes=(RestRoute("GET", "/tasks/{id}"),),
    function="gateway",
    call=ops.get_task,
)
LIST_TASKS: Method[ListTasksRequest, ListTasksResponse] = Method(
    name="ListTasks",
    request=ListTasksRequest,
    routes=(RestRoute("GET", "/tasks"),),
    function="list_tasks",
    call=ops.list_tasks,
)
CANCEL_TASK: Method[CancelTaskRequest, Task] = Method(
    name="CancelTask",
    request=CancelTaskRequest,
    routes=(RestRoute("POST", "/tasks/{id}:cancel"),),
    function="gateway",
    call=ops.cancel_task,
)
SUBSCRIBE_TO_TASK: Method[SubscribeToTaskRequest, StreamResponse] = Method(
    name="SubscribeToTask",
    request=SubscribeToTaskRequest,
    routes=(RestRoute("GET", "/tasks/{id}:subscribe"), RestRoute("POST", "/tasks/{id}:subscribe")),
    function="gateway",
    stream=ops.open_subscription,
)
CREATE_PUSH_CONFIG: Method[TaskPushNotificationConfig, TaskPushNotificationConfig] = Method(
    name="CreateTaskPushNotificationConfig",
    request=TaskPushNotificationConfig,
    routes=(RestRoute("POST", "/tasks/{task_id}/pushNotificationConfigs"),),
    function="create_push_config",
    call=ops.create_push_config,
)
GET_PUSH_CONFIG: Method[GetTaskPushNotificationConfigRequest, TaskPushNotificationConfig] = Method(
    name="GetTaskPushNotificationConfig",
    request=GetTaskPushNotificationConfigRequest,
    routes=(RestRoute("GET", "/tasks/{task_id}/pushNotificationConfigs/{id}"),),
    function="get_push_config",
    call=ops.get_push_config,
)
LIST_PUSH_CONFIGS: Method[ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse] = Method(
    name="ListTaskPushNotificationConfigs",
    request=ListTaskPushNotificationConfigsRequest,
    routes=(RestRoute("GET", "/tasks/{task_id}/pushNotificationConfigs"),),
    function="list_push_configs",
    call=ops.list_push_configs,
)
DELETE_PUSH_CONFIG: Method[DeleteTaskPushNotificationConfigRequest, None] = Method(
    name="DeleteTaskPushNotificationConfig",
    request=DeleteTaskPushNotificationConfigRequest,
    routes=(RestRoute("DELETE", "/tasks/{task_id}/pushNotificationConfigs/{id}"),),
    function="delete_push_config",
    call=ops.delete_push_config,
)
GET_EXTENDED_CARD: Method[GetExtendedAgentCardRequest, AgentCard] = Method(
    name="GetExtendedAgentCard",
    request=GetExtendedAgentCardRequest,
    routes=(RestRoute("GET", "/extendedAgentCard"),),
    function="get_extended_card",
    call=ops.get_extended_card,
)

METHODS: tuple[MethodInfo, ...] = (
    SEND_MESSAGE,
    SEND_STREAMING_MESSAGE,
    GET_TASK,
    LIST_TASKS,
    CANCEL_TASK,
    SUBSCRIBE_TO_TASK,
    CREATE_PUSH_CONFIG,
    GET_PUSH_CONFIG,
    LIST_PUSH_CONFIGS,
    DELETE_PUSH_CONFIG,
    GET_EXTENDED_CARD,
)
METHODS_BY_NAME: dict[str, MethodInfo] = {m.name: m for m in METHODS}
