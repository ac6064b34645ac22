"""Tasks, messages, parts, artifacts and the events that change them (proto ``lf.a2a.v1``)."""

from __future__ import annotations

from pydantic import Field

from ..json_types import Json, JsonValue
from ._base import (
    Bytes,
    FileName,
    HeaderText,
    MediaType,
    NonEmptyHeaderText,
    NonEmptyStr,
    ProtoEnum,
    ProtoModel,
    Specified,
    Timestamp,
    UrlText,
)

__all__ = [
    "INTERRUPTED_STATES",
    "TERMINAL_STATES",
    "Artifact",
    "AuthenticationInfo",
    "Message",
    "Part",
    "Role",
    "SendMessageResponse",
    "StreamResponse",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskPushNotificationConfig",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
]


class TaskState(ProtoEnum):
    TASK_STATE_UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    TASK_STATE_SUBMITTED = "TASK_STATE_SUBMITTED"
    TASK_STATE_WORKING = "TASK_STATE_WORKING"
    TASK_STATE_COMPLETED = "TASK_STATE_COMPLETED"
    TASK_STATE_FAILED = "TASK_STATE_FAILED"
    TASK_STATE_CANCELED = "TASK_STATE_CANCELED"
    TASK_STATE_INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    TASK_STATE_REJECTED = "TASK_STATE_REJECTED"
    TASK_STATE_AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        return self in INTERRUPTED_STATES


TERMINAL_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
INTERRUPTED_STATES = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})


class Role(ProtoEnum):
    ROLE_UNSPECIFIED = "ROLE_UNSPECIFIED"
    ROLE_USER = "ROLE_USER"
    ROLE_AGENT = "ROLE_AGENT"


class Part(ProtoModel):
    """Exactly one of ``text``, ``raw`` (base64), ``url`` or ``data`` (any JSON value)."""

    _oneofs = {"content": ("text", "raw", "url", "data")}
    _required_oneofs = frozenset({"content"})
    _value_fields = frozenset({"data"})

    text: str | None = None
    raw: Bytes | None = None
    url: str | None = None
    data: JsonValue = None
    metadata: Json | None = None
    filename: FileName = ""
    media_type: MediaType = ""


class Message(ProtoModel):
    message_id: NonEmptyStr
    context_id: str = ""
    task_id: str = ""
    role: Specified[Role]
    parts: list[Part] = Field(min_length=1)
    metadata: Json | None = None
    extensions: list[str] = []
    reference_task_ids: list[str] = []


class Artifact(ProtoModel):
    artifact_id: NonEmptyStr
    name: str = ""
    description: str = ""
    parts: list[Part] = Field(min_length=1)
    metadata: Json | None = None
    extensions: list[str] = []


class TaskStatus(ProtoModel):
    state: Specified[TaskState]
    message: Message | None = None
    timestamp: Timestamp | None = None


class Task(ProtoModel):
    id: NonEmptyStr
    context_id: str = ""
    status: TaskStatus
    artifacts: list[Artifact] = []
    history: list[Message] = []
    metadata: Json | None = None


class TaskStatusUpdateEvent(ProtoModel):
    task_id: NonEmptyStr
    context_id: NonEmptyStr
    status: TaskStatus
    metadata: Json | None = None


class TaskArtifactUpdateEvent(ProtoModel):
    task_id: NonEmptyStr
    context_id: NonEmptyStr
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: Json | None = None


class AuthenticationInfo(ProtoModel):
    """Sent as ``Authorization: <scheme> <credentials>`` with every notification."""

    scheme: NonEmptyHeaderText
    credentials: HeaderText = ""


class TaskPushNotificationConfig(ProtoModel):
    tenant: str = ""
    id: str = ""
    task_id: str = ""
    url: UrlText
    token: HeaderText = ""
    """Sent as ``X-A2A-Notification-Token`` with every notification."""
    authentication: AuthenticationInfo | None = None


class SendMessageResponse(ProtoModel):
    _oneofs = {"payload": ("task", "message")}
    _required_oneofs = frozenset({"payload"})

    task: Task | None = None
    message: Message | None = None


class StreamResponse(ProtoModel):
    _oneofs = {"payload": ("task", "message", "status_update", "artifact_update")}
    _required_oneofs = frozenset({"payload"})

    task: Task | None = None
    message: Message | None = None
    status_update: TaskStatusUpdateEvent | None = None
    artifact_update: TaskArtifactUpdateEvent | None = None
