"""``TaskUpdater``: the helper executors use to report status and artifacts."""

from __future__ import annotations

import uuid

from ..json_types import Json
from ..models import (
    Artifact,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    utc_now,
)
from .api import EventQueue

__all__ = ["TaskUpdater"]


class TaskUpdater:
    def __init__(self, event_queue: EventQueue, task_id: str, context_id: str) -> None:
        self.event_queue = event_queue
        self.task_id = task_id
        self.context_id = context_id

    async def update_status(
        self, state: TaskState, message: Message | None = None, *, metadata: Json | None = None
    ) -> None:
        await self.event_queue.enqueue_event(
            TaskStatusUpdateEvent(
                task_id=self.task_id,
                context_id=self.context_id,
                status=TaskStatus(state=state, message=message, timestamp=utc_now()),
                metadata=metadata,
            )
        )

    async def add_artifact(
        self,
        parts: list[Part],
        artifact_id: str | None = None,
        name: str = "",
        metadata: Json | None = None,
        append: bool = False,
        last_chunk: bool = False,
    ) -> None:
        await self.event_queue.enqueue_event(
            TaskArtifactUpdateEvent(
                task_id=self.task_id,
                context_id=self.context_id,
                artifact=Artifact(
                    artifact_id=artifact_id or str(uuid.uuid4()), name=name, parts=parts, metadata=metadata
                ),
                append=append,
                last_chunk=last_chunk,
            )
        )

    async def submit(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_SUBMITTED, message)

    async def start_work(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_WORKING, message)

    async def complete(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_COMPLETED, message)

    async def failed(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_FAILED, message)

    async def reject(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_REJECTED, message)

    async def cancel(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_CANCELED, message)

    async def requires_input(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, message)

    async def requires_auth(self, message: Message | None = None) -> None:
        await self.update_status(TaskState.TASK_STATE_AUTH_REQUIRED, message)

    def new_agent_message(self, parts: list[Part], metadata: Json | None = None) -> Message:
        return Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_AGENT,
            parts=parts,
            task_id=self.task_id,
            context_id=self.context_id,
            metadata=metadata,
        )
