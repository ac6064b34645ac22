"""How events make a task: the pure fold every writer and every reader shares.

``apply_event`` folds one ``StreamResponse`` into a ``Task`` (A2A specification, sections 4.1 and
4.2): status updates move the previous status message into history; artifact updates add, replace
or append by ``artifactId``. Anything after a terminal state, or an append to an unknown artifact,
is an ``InvalidAgentResponseError``.

An answer streamed token by token is stored as one text, not one part per token
(:func:`append_parts`): an appended update whose first part is text continues the artifact's last
part when that is text too, of the same ``mediaType``, ``filename`` and ``metadata``. Nothing else
is joined: not across artifacts, not file, url or data parts, not the parts of one update with each
other, not an update that replaces (``append`` false). The stream still carries each chunk as it
came; a client that applies the updates to the task a stream starts with, joining the same way,
holds the task as stored. ``fold`` applies a sequence of them: the stores assemble a task from
its snapshot and the events logged after it with it, and the worker validates each executor event
with it before the event is written, so what is read is exactly what was validated.

The run's rules (claim, settle, cancel, recovery) are in :mod:`a2a_serverless.transitions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import InvalidAgentResponseError
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

__all__ = [
    "DEFAULT_MAX_HISTORY",
    "Step",
    "agent_message",
    "append_parts",
    "apply_event",
    "executor_event",
    "fold",
    "joined_parts",
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
                parts = append_parts(existing.parts, artifact.parts)
                out[i] = existing.model_copy(update={"parts": parts, "metadata": metadata})
            else:
                out[i] = artifact
            return out
    if append:
        raise InvalidAgentResponseError(f"append to unknown artifact {artifact.artifact_id!r}")
    out.append(artifact)
    return out


def append_parts(parts: Sequence[Part], more: Sequence[Part]) -> list[Part]:
    """An artifact's ``parts`` with an appended update's ``more`` after them: ``more``'s first part
    continues the last of ``parts`` when both are text parts (a stored part's reference is a ``url``
    part, never joined) with the same ``mediaType``, ``filename`` and ``metadata`` (absent and
    empty metadata are the same), so an answer streamed in chunks is one text part. Nothing the
    two parts say is lost by joining them; any other part is kept as it came."""
    if parts and more and _continues(parts[-1], more[0]):
        last = parts[-1]
        joined = last.model_copy(update={"text": f"{last.text}{more[0].text}"})
        return [*parts[:-1], joined, *more[1:]]
    return [*parts, *more]


def joined_parts(parts: Sequence[Part]) -> list[Part]:
    """``parts`` with every neighbour :func:`append_parts` would join joined: what an artifact
    built from them one update each would hold (to compare a relayed artifact with another
    server's, which may keep its chunks apart)."""
    out: list[Part] = []
    for part in parts:
        if out and _continues(out[-1], part):
            out[-1] = out[-1].model_copy(update={"text": f"{out[-1].text}{part.text}"})
        else:
            out.append(part)
    return out


def _continues(last: Part, first: Part) -> bool:
    return (
        last.text is not None
        and first.text is not None
        and last.media_type == first.media_type
        and last.filename == first.filename
        and (last.metadata or None) == (first.metadata or None)
    )


def with_history_length(task: Task, history_length: int | None) -> Task:
    """Apply ``historyLength`` (A2A specification, section 3.2.4 History Length Semantics): None = all,
    0 = omitted, n = the n newest."""
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


# ------------------------------------------------------------------------------- a run's events


@dataclass(frozen=True, slots=True)
class Step:
    """One executor event as it will be stored: ``task`` after it, the ``events`` to log (the event,
    sometimes with WORKING before it, or a message-only reply's two), whether ``task`` needs a
    snapshot (it is not the fold of the events), and whether it is a message-only reply."""

    task: Task
    events: tuple[StreamResponse, ...]
    snapshot: bool = False
    replied: bool = False

    @property
    def settles(self) -> bool:
        state = self.task.status.state
        return state.is_terminal or state.is_interrupted


def executor_event(task: Task, event: StreamResponse, *, first: bool, max_history: int) -> Step | None:
    """Validate ``event`` against ``task`` (the run's view, with what the run emitted so far) and
    say how it is stored; None for an event that changes nothing. ``first``: no event of this run
    was accepted yet. Raises ``InvalidAgentResponseError`` for an event the task cannot take.

    * A ``Task`` (SDK-style executors emit one first) may only add metadata.
    * A ``Message`` as the first answer to a new task's first message is a message-only reply
      (spec 3.1.1 "MAY return a direct Message"): the task is completed with it as its status
      message, and the log gets the Message and the COMPLETED status (streams that already sent
      the snapshot, subscribers and push receivers then see the task end). Any other Message is
      added to the history.
    * The run's first artifact or message, when the executor did not report WORKING before, is
      preceded by WORKING: one WORKING per run, whoever says it.
    """
    if task.status.state.is_terminal:
        raise InvalidAgentResponseError(f"task {task.id} is already {task.status.state.value}; no further events")
    if event.task is not None:
        if event.task.id != task.id:
            raise InvalidAgentResponseError("a Task event must describe the task being executed")
        if not event.task.metadata:
            return None
        merged = {**(task.metadata or {}), **event.task.metadata}
        return Step(task.model_copy(update={"metadata": merged}), (), snapshot=True)
    if event.message is not None and first and _is_fresh(task):
        return _message_only(task, event.message)
    events: tuple[StreamResponse, ...] = (event,)
    if event.status_update is None and task.status.state is not TaskState.TASK_STATE_WORKING:
        working = status_event(task, TaskStatus(state=TaskState.TASK_STATE_WORKING, timestamp=utc_now()))
        events = (working, event)
    return Step(_folded(task, events, max_history), events)


def _folded(task: Task, events: Sequence[StreamResponse], max_history: int) -> Task:
    folded = fold(task, events, max_history=max_history)
    assert folded is not None  # folding onto a task yields a task
    return folded


def _is_fresh(task: Task) -> bool:
    """A new task in its first run: only the sender's message, nothing produced yet."""
    return len(task.history) == 1 and not task.artifacts and task.status.message is None


def _message_only(task: Task, message: Message) -> Step:
    reply = message.model_copy(update={"context_id": task.context_id, "task_id": ""})
    status = TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=reply, timestamp=utc_now())
    completed = task.model_copy(update={"status": status})
    events = (StreamResponse(message=reply), status_event(task, status))
    return Step(completed, events, snapshot=True, replied=True)
