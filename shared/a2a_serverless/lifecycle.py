"""How events make a task: the pure fold every writer and every reader shares.

``apply_event`` folds one ``StreamResponse`` into a ``Task`` (digest 3.4, 3.9): status updates move
the previous status message into history; artifact updates add, replace or append by
``artifactId``. Anything after a terminal state, or an append to an unknown artifact, is an
``InvalidAgentResponseError``. ``fold`` applies a sequence of them: the stores assemble a task from
its snapshot and the events logged after it with it, and the worker validates each executor event
with it before the event is written, so what is read is exactly what was validated.

The run's rules (claim, settle, cancel, recovery) are in :mod:`a2a_serverless.transitions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import InvalidAgentResponseError
from .models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = [
    "DEFAULT_MAX_HISTORY",
    "agent_message",
    "apply_event",
    "fold",
    "status_event",
    "with_history_length",
    "without_artifacts",
]

DEFAULT_MAX_HISTORY = 200
"""Messages kept in a task's history (``Settings.max_history``'s default)."""


def apply_event(task: Task, event: StreamResponse, *, max_history: int = DEFAULT_MAX_HISTORY) -> Task:
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


def fold(task: Task | None, events: Iterable[StreamResponse], *, max_history: int = DEFAULT_MAX_HISTORY) -> Task | None:
    """``task`` with ``events`` applied in order. With no task yet, the first event must be the
    ``Task`` a log starts with; None when there is nothing at all."""
    for event in events:
        if task is None:
            if event.task is None:
                raise InvalidAgentResponseError("a task's log must start with the Task")
            task = event.task
            continue
        task = apply_event(task, event, max_history=max_history)
    return task


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
