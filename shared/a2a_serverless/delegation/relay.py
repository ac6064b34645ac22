"""``delegate``: hand a message to a remote agent and relay what it does into our task.

Queue mode (the only one built so far): the worker holds our run while the remote works, so the
delegation is bounded by the run's deadline (``context.deadline``) as well as its own ``limit``,
and costs the worker's time throughout (``docs/executors.md``, "Calling other agents").
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
import uuid
from dataclasses import dataclass

from ..execution.api import RequestContext
from ..execution.updater import TaskUpdater
from ..models import Artifact, Message, Part, Role, StreamResponse, Task, TaskState
from .remote import ENDED, RemoteAgent, RemoteAgentError, track

__all__ = ["Delegation", "Outcome", "delegate"]

logger = logging.getLogger(__name__)

DEADLINE_MARGIN_SECONDS = 1.0
"""Kept before the run's deadline beyond ``cancel_timeout``: for the executor to report the outcome."""
_NAMESPACE = uuid.UUID("0f6f3c4e-9b1f-4b7e-8f53-2a8f9f7c1d20")
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


_OF_STATE = {
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


async def delegate(
    context: RequestContext,
    updater: TaskUpdater,
    remote: RemoteAgent,
    message: Message | str,
    *,
    relay_artifacts: bool = True,
    relay_status: bool = True,
    limit: float | None = 600.0,
    cancel_timeout: float = 3.0,
    artifact_prefix: str | None = None,
    key: str | None = None,
) -> Delegation:
    """Send ``message`` (text, or a user ``Message``; its id is set by this call) to ``remote`` and
    relay its events into our task until the remote task ends or waits for input.

    * ``relay_artifacts``: each remote artifact update becomes ours, chunk by chunk (``append``
      and ``lastChunk`` kept), its id prefixed by ``artifact_prefix`` (default: unique to this call)
      so two remotes never write the same artifact. ``relay_status``: the remote's WORKING status
      messages become our WORKING updates.
    * Returns a :class:`Delegation`; the executor reports our final state (``await result.report(updater)``
      does the usual thing). Nothing is reported by ``delegate`` itself.
    * ``limit`` (seconds, None for none): past it, or past the run's deadline less ``cancel_timeout``
      and a second, the remote task is canceled (best effort, within ``cancel_timeout``) and the
      outcome is TIMED_OUT.
    * When our run is canceled (CancelTask: the worker calls the executor's ``cancel``, then cancels
      ``execute``), the remote task is canceled the same way and the exception goes on up
      (``asyncio.CancelledError``, or the queue's refusal once ``cancel`` reported CANCELED).
    * ``key``: the call's idempotency key; by default our task's id, this run's message id and the
      call's ordinal in the run, so a re-run makes the same call and the remote recognises it.
    """
    run = f"{context.task_id}/{context.message.message_id if context.message else ''}"
    key = key or remote.call_key(run)
    outbound = _outbound(message, key)
    relay = _Relay(updater, artifact_prefix if artifact_prefix is not None else f"{key[-8:]}:", relay_artifacts)
    relay.status = relay_status
    budget = _budget(context, limit, cancel_timeout)
    last: Task | None = None
    try:
        async with asyncio.timeout(budget) as window:
            async with contextlib.aclosing(remote.stream(outbound, idempotency_key=key)) as events:  # type: ignore[type-var]
                async for event in events:
                    last = track(last, event)
                    if event.message is not None:
                        return Delegation(
                            remote.name, Outcome.REPLIED, f"{remote.name!r} replied.", reply=event.message
                        )
                    await relay.event(event)
                    if last is not None and last.status.state in ENDED:
                        break
    except TimeoutError:
        if not window.expired():
            raise
        await _cancel(remote, last, cancel_timeout)
        seconds = f"{budget:.0f} s" if budget else "no time"
        text = f"The remote agent {remote.name!r} did not finish within the time it was given ({seconds})."
        return Delegation(remote.name, Outcome.TIMED_OUT, text, task=last)
    except RemoteAgentError as exc:
        await _cancel(remote, last, cancel_timeout)
        return Delegation(remote.name, Outcome.UNREACHABLE, str(exc), task=last)
    except BaseException:
        # Our run was canceled (the worker cancels ``execute``), or our task stopped taking events
        # (the executor's ``cancel`` already reported CANCELED): the remote's work is wasted now.
        await _cancel(remote, last, cancel_timeout)
        raise
    if last is None or last.status.state not in ENDED:
        return Delegation(remote.name, Outcome.UNREACHABLE, f"The remote agent {remote.name!r} stopped answering.")
    final = await _final(remote, last, cancel_timeout)
    return Delegation(remote.name, _OF_STATE[final.status.state], _detail(remote.name, final), task=final)


def _budget(context: RequestContext, limit: float | None, cancel_timeout: float) -> float | None:
    """Seconds the delegation may take: its ``limit``, and the run's deadline less a margin."""
    budgets = [limit] if limit is not None else []
    if context.deadline is not None:
        budgets.append(context.deadline - time.monotonic() - cancel_timeout - DEADLINE_MARGIN_SECONDS)
    return max(0.0, min(budgets)) if budgets else None


def _outbound(message: Message | str, key: str) -> Message:
    message_id = str(uuid.uuid5(_NAMESPACE, key))
    if isinstance(message, str):
        return Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=message)])
    return message.model_copy(update={"message_id": message_id, "role": Role.ROLE_USER})


async def _cancel(remote: RemoteAgent, last: Task | None, within: float) -> None:
    """Ask the remote to cancel its task (if we know it and it is still working), ``within`` seconds.

    The worker cancels ``execute`` right after the executor's ``cancel`` returns, which may be while
    this runs: that cancellation waits for the request to finish (at most ``within``), then goes on."""
    if last is None or last.status.state in ENDED:
        return
    attempt = asyncio.ensure_future(_cancel_remote(remote, last.id, within))
    interrupted = False
    while not attempt.done():
        try:
            await asyncio.shield(attempt)
        except asyncio.CancelledError:
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError


async def _cancel_remote(remote: RemoteAgent, task_id: str, within: float) -> None:
    try:
        await asyncio.wait_for(remote.cancel_task(task_id), within)
    except (RemoteAgentError, TimeoutError):
        logger.warning("could not cancel the remote task", extra={"remote": remote.name, "remote_task": task_id})


async def _final(remote: RemoteAgent, last: Task, within: float) -> Task:
    """The ended task whole (a stream's events tell its state, not all of it); ``last`` if unreadable."""
    try:
        task = await asyncio.wait_for(remote.get_task(last.id), within)
    except (RemoteAgentError, TimeoutError):
        return last
    return task if task.status.state in ENDED else last


def _detail(name: str, task: Task) -> str:
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


class _Relay:
    """The remote's events as ours: artifacts under prefixed ids, WORKING messages as ours."""

    def __init__(self, updater: TaskUpdater, prefix: str, artifacts: bool) -> None:
        self._updater = updater
        self._prefix = prefix
        self._artifacts = artifacts
        self.status = True
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
                if self._relayed.get(artifact.artifact_id) != artifact.parts:
                    await self._artifact(artifact, append=False, last_chunk=ended)
            await self._working(event.task.status.state, event.task.status.message)

    async def _artifact(self, artifact: Artifact, append: bool, last_chunk: bool) -> None:
        if not self._artifacts:
            return
        known = self._relayed.get(artifact.artifact_id)
        append = append and known is not None  # our log refuses an append to an artifact it lacks
        self._relayed[artifact.artifact_id] = [*known, *artifact.parts] if append and known else list(artifact.parts)
        await self._updater.add_artifact(
            list(artifact.parts),
            artifact_id=self._prefix + artifact.artifact_id,
            name=artifact.name,
            metadata=artifact.metadata,
            append=append,
            last_chunk=last_chunk,
        )

    async def _working(self, state: TaskState, message: Message | None) -> None:
        if not self.status or state is not TaskState.TASK_STATE_WORKING or message is None or not message.parts:
            return
        if message.message_id in self._said:
            return
        self._said.add(message.message_id)
        await self._updater.update_status(state, self._updater.new_agent_message(list(message.parts)))
