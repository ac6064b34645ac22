"""The event queue handed to executors: every event is validated and appended to the task's log."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from ..errors import InvalidAgentResponseError
from ..lifecycle import apply_event, mutate, status_event
from ..models import (
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    utc_now,
)
from ..ports import Scope, TaskRecord
from ..runtime import Runtime
from .api import Event

__all__ = ["StoreEventQueue", "to_stream_response"]


def to_stream_response(event: Event) -> StreamResponse:
    if isinstance(event, Task):
        return StreamResponse(task=event)
    if isinstance(event, Message):
        return StreamResponse(message=event)
    if isinstance(event, TaskStatusUpdateEvent):
        return StreamResponse(status_update=event)
    if isinstance(event, TaskArtifactUpdateEvent):
        return StreamResponse(artifact_update=event)
    raise InvalidAgentResponseError(f"unsupported event type {type(event).__name__}")


class StoreEventQueue:
    """Writes each event in one conditional transaction with the task head (no lost updates, a
    gap-free log). Once the run's task is terminal or interrupted the queue is closed: a further
    event is an ``InvalidAgentResponseError``.

    A ``Message`` as the first event of a new task's first run is a message-only reply (spec
    3.1.1 "MAY return a direct Message"): it is stored as the record's ``reply``, the task is
    completed with it and hidden from listings, and the blocking sender receives the message. The
    log gets the Message and then the COMPLETED status update, so that readers who already follow
    the task (a stream that sent its snapshot, subscribers, push receivers) see it end. Any other
    Message is added to the task's history.
    """

    def __init__(self, runtime: Runtime, scope: Scope, task_id: str, message_id: str) -> None:
        self._runtime = runtime
        self._scope = scope
        self._task_id = task_id
        self._message_id = message_id
        self._accepted = 0
        self.closed = False

    async def enqueue_event(self, event: Event) -> None:
        if self.closed:
            raise InvalidAgentResponseError("the task already settled; no further events")
        record = await asyncio.to_thread(mutate, self._runtime.store, self._scope, self._task_id, self._change(event))
        self._accepted += 1
        state = record.task.status.state
        if state.is_terminal or state.is_interrupted:
            self.closed = True

    def _change(self, event: Event) -> Callable[[TaskRecord], tuple[TaskRecord, list[StreamResponse]] | None]:
        wire = to_stream_response(event)
        max_history = self._runtime.settings.max_history

        def change(record: TaskRecord) -> tuple[TaskRecord, list[StreamResponse]] | None:
            if record.running_message_id != self._message_id:
                raise InvalidAgentResponseError("this run no longer owns the task")
            if wire.task is not None:
                # A Task snapshot from an SDK-style executor: it may only add metadata.
                if wire.task.id != record.task.id:
                    raise InvalidAgentResponseError("a Task event must describe the task being executed")
                if not wire.task.metadata:
                    return None
                merged = {**(record.task.metadata or {}), **wire.task.metadata}
                return replace(record, task=record.task.model_copy(update={"metadata": merged})), []
            if wire.message is not None and self._accepted == 0 and _is_fresh(record.task):
                return _message_only(record, wire.message)
            task = apply_event(record.task, wire, max_history=max_history)
            settled = task.status.state.is_terminal or task.status.state.is_interrupted
            return replace(record, task=task, running_message_id="" if settled else record.running_message_id), [wire]

        return change


def _is_fresh(task: Task) -> bool:
    """A new task in its first run: only the sender's message, nothing produced yet."""
    return len(task.history) == 1 and not task.artifacts


def _message_only(record: TaskRecord, message: Message) -> tuple[TaskRecord, list[StreamResponse]]:
    """The task completed by a message-only reply, and its events: the Message, then COMPLETED.

    A stream still holding the snapshot answers with the Message alone (digest 4.2); every other
    reader of the log needs the terminal status update to know the task ended."""
    task = record.task
    reply = message.model_copy(update={"context_id": task.context_id, "task_id": ""})
    status = TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=reply, timestamp=utc_now())
    completed = task.model_copy(update={"status": status})
    events = [StreamResponse(message=reply), status_event(task, status)]
    return replace(record, task=completed, reply=reply, running_message_id=""), events
