"""What both ways of delegating share: how a delegation ended (:class:`Delegation`), the relay of
the remote's events into our task, and the best-effort cancel of the remote task."""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from ..execution.updater import TaskUpdater
from ..lifecycle import append_parts, joined_parts
from ..models import Artifact, Message, Part, StreamResponse, Task, TaskState
from .remote import ENDED, RemoteAgent, RemoteAgentError

__all__ = ["OF_STATE", "Delegation", "Outcome", "Relay", "cancel_quietly", "cancel_remote", "detail", "finish_shielded"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_DETAIL_LIMIT = 500


class Outcome(enum.StrEnum):
    """How a delegation ended."""

    COMPLETED = "completed"
    REPLIED = "replied"
    """The remote answered with a message only (no task): :attr:`Delegation.reply`."""
    FAILED = "failed"
    REJECTED = "rejected"
    CANCELED = "canceled"
    """The remote's task was canceled by someone else (our own cancel raises instead)."""
    INPUT_REQUIRED = "input-required"
    AUTH_REQUIRED = "auth-required"
    TIMED_OUT = "timed-out"
    """Our ``limit`` or the run's deadline came first; the remote task was asked to cancel."""
    UNREACHABLE = "unreachable"
    """A call failed for good (after its retries), or the remote cannot be called (its card, its URL)."""


OF_STATE = {
    TaskState.TASK_STATE_COMPLETED: Outcome.COMPLETED,
    TaskState.TASK_STATE_FAILED: Outcome.FAILED,
    TaskState.TASK_STATE_REJECTED: Outcome.REJECTED,
    TaskState.TASK_STATE_CANCELED: Outcome.CANCELED,
    TaskState.TASK_STATE_INPUT_REQUIRED: Outcome.INPUT_REQUIRED,
    TaskState.TASK_STATE_AUTH_REQUIRED: Outcome.AUTH_REQUIRED,
}


@dataclass(frozen=True)
class Delegation:
    """What came of a delegation. ``task``: the remote's task as it ended (with its artifacts and
    status; its ``id`` continues it), None without one. ``detail``: one sentence naming the remote
    and saying what happened, safe to show our caller: it quotes at most the remote's own status
    message, never an error body."""

    remote: str
    outcome: Outcome
    detail: str
    task: Task | None = None
    reply: Message | None = None

    @classmethod
    def timed_out(cls, remote: str, given: str, task: Task | None) -> Delegation:
        """The remote ran out of the time it was ``given`` (``"30 s"``); its task was asked to cancel."""
        text = f"The remote agent {remote!r} did not finish within the time it was given ({given})."
        return cls(remote, Outcome.TIMED_OUT, text, task=task)

    @property
    def ok(self) -> bool:
        return self.outcome in (Outcome.COMPLETED, Outcome.REPLIED)

    async def report(self, updater: TaskUpdater) -> None:
        """End our task by the outcome: COMPLETED (with the remote's final status message, or its
        message-only reply, as ours) when :attr:`ok`, else FAILED with :attr:`detail`. INPUT_REQUIRED
        and AUTH_REQUIRED fail too: check :attr:`outcome` first to pass the question on instead."""
        if self.ok:
            source = self.reply or (self.task.status.message if self.task else None)
            await updater.complete(updater.new_agent_message(list(source.parts)) if source and source.parts else None)
        else:
            await updater.failed(updater.new_agent_message([Part(text=self.detail)]))


async def cancel_quietly(remote: RemoteAgent, last: Task | None, within: float) -> None:
    """Ask the remote to cancel its task (if we know it and it is still working), ``within`` seconds,
    to the end even if canceled meanwhile (:func:`finish_shielded`)."""
    if last is None or last.status.state in ENDED:
        return
    await finish_shielded(cancel_remote(remote, last.id, within))


async def finish_shielded(work: Awaitable[T]) -> T:
    """``work``'s result, awaited to its end in a task of its own (bound it yourself).

    The worker cancels ``execute`` right after the executor's ``cancel`` returns, which may be while
    a cancel of the remote task is on its way: that cancellation waits for ``work``, then goes on."""
    attempt = asyncio.ensure_future(work)
    interrupted = False
    while not attempt.done():
        try:
            await asyncio.shield(attempt)
        except asyncio.CancelledError:
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError
    return attempt.result()


async def cancel_remote(remote: RemoteAgent, task_id: str, within: float) -> None:
    try:
        await asyncio.wait_for(remote.cancel_task(task_id), within)
    except (RemoteAgentError, TimeoutError):
        logger.warning("could not cancel the remote task", extra={"remote": remote.name, "remote_task": task_id})


def detail(name: str, task: Task) -> str:
    words = {
        TaskState.TASK_STATE_COMPLETED: "completed its task",
        TaskState.TASK_STATE_FAILED: "failed",
        TaskState.TASK_STATE_REJECTED: "rejected the task",
        TaskState.TASK_STATE_CANCELED: "canceled its task",
        TaskState.TASK_STATE_INPUT_REQUIRED: "needs more input",
        TaskState.TASK_STATE_AUTH_REQUIRED: "needs authorization",
    }[task.status.state]
    said = _text(task.status.message)
    return f"The remote agent {name!r} {words}" + (f": {said}" if said else ".")


def _text(message: Message | None) -> str:
    if message is None:
        return ""
    text = " ".join(p.text.strip() for p in message.parts if p.text and p.text.strip())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


class Relay:
    """The remote's events as ours: artifacts under prefixed ids, WORKING messages as ours."""

    def __init__(self, updater: TaskUpdater, prefix: str, *, artifacts: bool, status: bool) -> None:
        self._updater = updater
        self._prefix = prefix
        self._artifacts = artifacts
        self._status = status
        self._relayed: dict[str, list[Part]] = {}
        self._said: set[str] = set()

    async def event(self, event: StreamResponse) -> None:
        if event.artifact_update is not None:
            update = event.artifact_update
            await self._artifact(update.artifact, update.append, update.last_chunk)
        elif event.status_update is not None:
            await self._working(event.status_update.status.state, event.status_update.status.message)
        elif event.task is not None:  # a snapshot (the stream's first event, or a poll)
            ended = event.task.status.state in ENDED
            for artifact in event.task.artifacts:
                # Whether a remote joins its appended text as we do or keeps its chunks apart, the
                # same content compares equal (lifecycle.joined_parts).
                relayed = self._relayed.get(artifact.artifact_id)
                if relayed is None or joined_parts(relayed) != joined_parts(artifact.parts):
                    await self._artifact(artifact, append=False, last_chunk=ended)
            await self._working(event.task.status.state, event.task.status.message)

    async def _artifact(self, artifact: Artifact, append: bool, last_chunk: bool) -> None:
        if not self._artifacts:
            return
        known = self._relayed.get(artifact.artifact_id)
        append = append and known is not None  # our log refuses an append to an artifact it lacks
        # As our task holds it (lifecycle.append_parts).
        self._relayed[artifact.artifact_id] = (
            append_parts(known, artifact.parts) if append and known else list(artifact.parts)
        )
        await self._updater.add_artifact(
            list(artifact.parts),
            artifact_id=self._prefix + artifact.artifact_id,
            name=artifact.name,
            metadata=artifact.metadata,
            append=append,
            last_chunk=last_chunk,
        )

    async def _working(self, state: TaskState, message: Message | None) -> None:
        if not self._status or state is not TaskState.TASK_STATE_WORKING or message is None or not message.parts:
            return
        if message.message_id in self._said:
            return
        self._said.add(message.message_id)
        await self._updater.update_status(state, self._updater.new_agent_message(list(message.parts)))
