"""Task lifecycle rules as pure functions, and the one read-modify-write loop over the store.

``apply_event`` folds a ``StreamResponse`` into a ``Task`` (digest 3.4, 3.9): status updates move
the previous status message into history; artifact updates add, replace or append by
``artifactId``. Anything after a terminal state, or an append to an unknown artifact, is an
``InvalidAgentResponseError``. ``mutate`` applies a change under the store's optimistic
concurrency: it re-reads and re-applies on ``VersionConflict``, so no update is ever lost.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from .errors import InvalidAgentResponseError, TaskNotFoundError
from .models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    utc_now,
)
from .ports import Scope, TaskRecord, TaskStore, VersionConflict

__all__ = [
    "CANCELED_TEXT",
    "agent_message",
    "apply_event",
    "end_task",
    "mutate",
    "status_event",
    "with_history_length",
    "without_artifacts",
]

T = TypeVar("T")
Change = tuple[TaskRecord, Sequence[StreamResponse]]


def apply_event(task: Task, event: StreamResponse, *, max_history: int = 200) -> Task:
    """The task after ``event``. Raises ``InvalidAgentResponseError`` for an event the task cannot
    take (anything after a terminal state, a foreign task id, an append to an unknown artifact)."""
    if task.status.state.is_terminal:
        raise InvalidAgentResponseError(f"task {task.id} is already {task.status.state.value}; no further events")
    if event.status_update is not None:
        upd = event.status_update
        _check_ids(task, upd.task_id, upd.context_id)
        history = list(task.history)
        if task.status.message is not None:
            history.append(task.status.message)
        return task.model_copy(update={"status": upd.status, "history": history[-max_history:]})
    if event.artifact_update is not None:
        art = event.artifact_update
        _check_ids(task, art.task_id, art.context_id)
        return task.model_copy(update={"artifacts": _merge_artifact(task.artifacts, art.artifact, art.append)})
    if event.message is not None:
        history = [*task.history, event.message]
        return task.model_copy(update={"history": history[-max_history:]})
    if event.task is not None:
        if event.task.id != task.id:
            raise InvalidAgentResponseError("a Task event must describe the task being executed")
        return event.task
    raise InvalidAgentResponseError("empty event")


def _check_ids(task: Task, task_id: str, context_id: str) -> None:
    if task_id != task.id or (task.context_id and context_id != task.context_id):
        raise InvalidAgentResponseError("event names another task or context")


def _merge_artifact(current: Sequence[Artifact], artifact: Artifact, append: bool) -> list[Artifact]:
    out = list(current)
    for i, existing in enumerate(out):
        if existing.artifact_id == artifact.artifact_id:
            if append:
                metadata = {**(existing.metadata or {}), **(artifact.metadata or {})} or None
                out[i] = existing.model_copy(update={"parts": [*existing.parts, *artifact.parts], "metadata": metadata})
            else:
                out[i] = artifact
            return out
    if append:
        raise InvalidAgentResponseError(f"append to unknown artifact {artifact.artifact_id!r}")
    out.append(artifact)
    return out


def with_history_length(task: Task, history_length: int | None) -> Task:
    """Apply ``historyLength`` (digest 3.4): None = all, 0 = omitted, n = the n newest."""
    if history_length is None:
        return task
    if history_length == 0:
        return task.model_copy(update={"history": []})
    return task.model_copy(update={"history": task.history[-history_length:]})


def without_artifacts(task: Task) -> Task:
    return task.model_copy(update={"artifacts": []})


def status_event(task: Task, status: TaskStatus) -> StreamResponse:
    """A status-update event for ``task``."""
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id or task.id, status=status)
    )


def agent_message(task: Task, text: str, message_id: str) -> Message:
    """A one-part text message from the agent about ``task``."""
    return Message(
        message_id=message_id,
        role=Role.ROLE_AGENT,
        parts=[Part(text=text)],
        task_id=task.id,
        context_id=task.context_id,
    )


CANCELED_TEXT = "Canceled at the caller's request."
"""The status message of a task canceled by CancelTask (by the operation or by its worker)."""


def end_task(record: TaskRecord, state: TaskState, text: str = "", *, max_history: int = 200) -> Change:
    """The record moved to ``state`` by the server itself (cancel, failure, dead letter), with
    ``text`` as the agent's status message, and nothing left pending, running or to cancel."""
    task = record.task
    message = agent_message(task, text, str(uuid.uuid4())) if text else None
    event = status_event(task, TaskStatus(state=state, message=message, timestamp=utc_now()))
    new_task = apply_event(task, event, max_history=max_history)
    ended = replace(record, task=new_task, pending_message_id="", running_message_id="", cancel_requested=False)
    return ended, [event]


def mutate(
    store: TaskStore,
    scope: Scope,
    task_id: str,
    change: Callable[[TaskRecord], Change | None],
    *,
    attempts: int = 20,
) -> TaskRecord:
    """Read the task, compute ``change(record)`` and commit it, retrying on ``VersionConflict``.

    ``change`` returns the new record and its events, or None for "nothing to do" (then the current
    record is returned). It may raise an ``A2AError`` to abort; it must be a pure function of the
    record because it can run several times.
    """
    for _ in range(attempts):
        record = store.get_task(scope, task_id)
        if record is None:
            raise TaskNotFoundError(metadata={"taskId": task_id})
        outcome = change(record)
        if outcome is None:
            return record
        new_record, events = outcome
        try:
            return store.commit(replace(new_record, version=record.version, last_seq=record.last_seq), events)
        except VersionConflict:
            continue
    raise VersionConflict(f"task {task_id} kept changing; gave up after {attempts} attempts")
