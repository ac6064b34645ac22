"""Run an unmodified a2a-sdk executor in the worker.

The official A2A Python SDK (``pip install 'a2a-serverless[a2a-sdk]'``, module ``a2a``) has its own
``a2a.server.agent_execution.AgentExecutor``, whose ``execute(context, event_queue)`` receives the
SDK's ``RequestContext`` and ``EventQueue`` and emits protobuf events (``a2a.types.Task``,
``Message``, ``TaskStatusUpdateEvent``, ``TaskArtifactUpdateEvent``), usually through the SDK's own
``a2a.server.tasks.TaskUpdater``. :class:`SdkExecutorAdapter` wraps such an executor so the worker
can run it as is::

    # my_agent.py
    from a2a_serverless.execution.sdk_adapter import SdkExecutorAdapter
    from my_sdk_agent import MySdkExecutor  # subclasses a2a.server.agent_execution.AgentExecutor

    agent = SdkExecutorAdapter(MySdkExecutor())

and ``A2A_EXECUTOR=my_agent:agent`` (the import path may name an instance as well as a class).

For each call the adapter builds a real SDK ``RequestContext`` from ours (the user's message, the
task as it was when the run was claimed, the tenant, the caller and the requested extensions in a
``ServerCallContext``) and hands the executor an SDK ``EventQueue`` that converts each protobuf
event to our model (through its ProtoJSON form) and writes it to the task's log. Everything else —
validation, the closed queue after a final state, settling the task after an exception, an early
return or a cancel — is the worker's usual behaviour (see :mod:`.worker`).

This module imports ``a2a``; nothing else in ``a2a_serverless`` does, so the SDK stays optional.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import ValidationError

from ..auth import ANONYMOUS
from ..errors import InvalidAgentResponseError
from ..json_types import Json
from ..models import Message, ProtoModel, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from .api import AgentExecutor, Event, EventQueue, RequestContext

INSTALL_HINT = (
    "a2a_serverless.execution.sdk_adapter runs executors written for the a2a-sdk package, which is "
    "not installed: pip install 'a2a-serverless[a2a-sdk]'"
)

try:
    from a2a.auth.user import User as SdkUser
    from a2a.server.agent_execution import AgentExecutor as SdkAgentExecutor
    from a2a.server.agent_execution import RequestContext as SdkRequestContext
    from a2a.server.context import ServerCallContext
    from a2a.server.events import Event as SdkEvent
    from a2a.server.events import EventQueue as SdkEventQueue
    from a2a.types import Message as SdkMessage
    from a2a.types import SendMessageRequest as SdkSendMessageRequest
    from a2a.types import Task as SdkTask
    from a2a.types import TaskArtifactUpdateEvent as SdkTaskArtifactUpdateEvent
    from a2a.types import TaskStatusUpdateEvent as SdkTaskStatusUpdateEvent

    # protobuf ships no type hints (and types-protobuf is not a dependency): its names are Any here.
    from google.protobuf import json_format  # type: ignore[import-untyped]
    from google.protobuf.message import Message as ProtoMessage  # type: ignore[import-untyped]
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

__all__ = [
    "CONTEXT_STATE_KEY",
    "INSTALL_HINT",
    "CallerUser",
    "SdkEventQueueBridge",
    "SdkExecutorAdapter",
    "from_sdk_event",
    "to_sdk_request_context",
]

CONTEXT_STATE_KEY = "a2a_serverless.request_context"
"""Key of ``call_context.state`` holding our own :class:`RequestContext`, for executors that want it."""

_M = TypeVar("_M", bound=ProtoModel)
_P = TypeVar("_P", bound=ProtoMessage)


class SdkExecutorAdapter(AgentExecutor):
    """Our :class:`AgentExecutor` around an instance of the SDK's ``AgentExecutor``."""

    def __init__(self, executor: SdkAgentExecutor) -> None:
        if not isinstance(executor, SdkAgentExecutor):
            hint = (
                f"; pass an instance: SdkExecutorAdapter({executor.__name__}())" if isinstance(executor, type) else ""
            )
            raise TypeError(
                f"SdkExecutorAdapter wraps an a2a.server.agent_execution.AgentExecutor instance, "
                f"not {type(executor).__name__}{hint}"
            )
        self.executor = executor

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self.executor.execute(to_sdk_request_context(context), SdkEventQueueBridge(event_queue))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # Like the SDK's own request handlers: the cancel context carries the task, not a message.
        await self.executor.cancel(
            to_sdk_request_context(context, with_message=False), SdkEventQueueBridge(event_queue)
        )

    def __repr__(self) -> str:
        return f"SdkExecutorAdapter({self.executor!r})"


class SdkEventQueueBridge(SdkEventQueue):
    """The SDK ``EventQueue`` an SDK executor (and the SDK's ``TaskUpdater``) writes to: each
    protobuf event is converted to our model and forwarded to our queue, which validates and stores
    it. Errors from our queue (``InvalidAgentResponseError``, e.g. an event after a final state)
    propagate to the executor, as they would for one of ours."""

    def __init__(self, target: EventQueue) -> None:
        self.target = target

    async def enqueue_event(self, event: SdkEvent) -> None:
        await self.target.enqueue_event(from_sdk_event(event))


class CallerUser(SdkUser):
    """The caller as the SDK's ``User`` (``call_context.user``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        # Our principal is "anonymous" exactly when the request carried no credentials.
        return bool(self._name) and self._name != ANONYMOUS

    @property
    def user_name(self) -> str:
        return self._name


def from_sdk_event(event: object) -> Event:
    """Our model of an SDK protobuf event. Raises ``InvalidAgentResponseError`` for anything that is
    not one of the four event types, or that does not make a valid event (e.g. a message without
    parts)."""
    if isinstance(event, SdkTask):
        return _from_proto(event, Task)
    if isinstance(event, SdkMessage):
        return _from_proto(event, Message)
    if isinstance(event, SdkTaskStatusUpdateEvent):
        return _from_proto(event, TaskStatusUpdateEvent)
    if isinstance(event, SdkTaskArtifactUpdateEvent):
        return _from_proto(event, TaskArtifactUpdateEvent)
    raise InvalidAgentResponseError(
        f"the a2a-sdk executor enqueued a {type(event).__name__}; expected a2a.types.Task, Message, "
        "TaskStatusUpdateEvent or TaskArtifactUpdateEvent"
    )


def to_sdk_request_context(context: RequestContext, *, with_message: bool = True) -> SdkRequestContext:
    """The SDK's ``RequestContext`` for ``context``: the user's message (as a ``SendMessageRequest``
    with the tenant, configuration and metadata), the current and related tasks, and a
    ``ServerCallContext`` with the tenant, the caller and the requested extensions."""
    call_context = ServerCallContext(
        user=CallerUser(context.caller),
        tenant=context.tenant,
        requested_extensions=set(context.requested_extensions),
        state={CONTEXT_STATE_KEY: context},
    )
    request: SdkSendMessageRequest | None = None
    if with_message and context.message is not None:
        request = SdkSendMessageRequest(tenant=context.tenant)
        _to_proto(context.message, request.message)
        if context.configuration is not None:
            _to_proto(context.configuration, request.configuration)
        if context.metadata:
            json_format.ParseDict(context.metadata, request.metadata)
    return SdkRequestContext(
        call_context=call_context,
        request=request,
        task_id=context.task_id,
        context_id=context.context_id,
        task=_to_proto(context.current_task, SdkTask()) if context.current_task is not None else None,
        related_tasks=[_to_proto(task, SdkTask()) for task in context.related_tasks],
    )


def _to_proto(model: ProtoModel, target: _P) -> _P:
    # Our ProtoJSON is the proto's JSON mapping; fields the SDK's proto lacks are dropped.
    json_format.ParseDict(model.to_wire(), target, ignore_unknown_fields=True)
    return target


def _from_proto(event: ProtoMessage, model: type[_M]) -> _M:
    wire: Json = json_format.MessageToDict(event, preserving_proto_field_name=False)
    try:
        return model.from_wire(wire)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False)
        )
        raise InvalidAgentResponseError(
            f"the a2a-sdk executor enqueued an invalid {type(event).__name__}: {problems}"
        ) from exc
