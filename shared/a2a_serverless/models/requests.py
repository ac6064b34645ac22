"""Request and response messages of the A2A service (proto ``service A2AService``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..json_types import Json
from ._base import Int32, NonEmptyStr, ProtoModel, Timestamp
from .core import Message, Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SubscribeToTaskRequest",
]

NonNegativeInt32 = Field(default=None, ge=0, le=2**31 - 1)


class SendMessageConfiguration(ProtoModel):
    accepted_output_modes: list[str] = []
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: Int32 | None = NonNegativeInt32
    return_immediately: bool = False


class SendMessageRequest(ProtoModel):
    tenant: str = ""
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: Json | None = None


class GetTaskRequest(ProtoModel):
    tenant: str = ""
    id: NonEmptyStr
    history_length: Int32 | None = NonNegativeInt32


class ListTasksRequest(ProtoModel):
    tenant: str = ""
    context_id: str = ""
    status: TaskState = TaskState.TASK_STATE_UNSPECIFIED
    page_size: Int32 | None = Field(default=None, ge=1, le=100)
    page_token: str = ""
    history_length: Int32 | None = NonNegativeInt32
    status_timestamp_after: Timestamp | None = None
    include_artifacts: bool | None = None


class ListTasksResponse(ProtoModel):
    _always_emit = frozenset({"tasks", "next_page_token", "page_size", "total_size"})

    tasks: list[Task] = []
    next_page_token: str = ""
    page_size: Int32 = 0
    total_size: Int32 = 0


class CancelTaskRequest(ProtoModel):
    tenant: str = ""
    id: NonEmptyStr
    metadata: Json | None = None


class GetTaskPushNotificationConfigRequest(ProtoModel):
    tenant: str = ""
    task_id: NonEmptyStr
    id: NonEmptyStr


class DeleteTaskPushNotificationConfigRequest(ProtoModel):
    tenant: str = ""
    task_id: NonEmptyStr
    id: NonEmptyStr


class SubscribeToTaskRequest(ProtoModel):
    tenant: str = ""
    id: NonEmptyStr


class ListTaskPushNotificationConfigsRequest(ProtoModel):
    tenant: str = ""
    task_id: NonEmptyStr
    # The bounds go in an outer Annotated: as field constraints they would be overridden by Int32's own.
    page_size: Annotated[Int32, Field(ge=0, le=100)] = 0
    page_token: str = ""


class ListTaskPushNotificationConfigsResponse(ProtoModel):
    configs: list[TaskPushNotificationConfig] = []
    next_page_token: str = ""


class GetExtendedAgentCardRequest(ProtoModel):
    tenant: str = ""
