"""``delegate``: hand a message to a remote agent and relay what it does into our task.

Queue mode (here): the worker holds our run while the remote works, so the delegation is bounded by
the run's deadline (``context.deadline``) as well as its own ``limit``, and costs the worker's time
throughout (``docs/executors.md``, "Calling other agents"). Durable mode, for an executor with
``durable_steps``: :mod:`a2a_serverless.durable.delegation`, where nothing runs while the remote works.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator

from ..execution.api import RequestContext
from ..execution.updater import TaskUpdater
from ..models import Message, Part, Role, StreamResponse, Task
from ._common import OF_STATE, Delegation, Outcome, Relay, cancel_quietly, cancel_remote, detail, finish_shielded
from .remote import ENDED, RemoteAgent, RemoteAgentError, track

__all__ = ["Delegation", "Outcome", "delegate"]

logger = logging.getLogger(__name__)

DEADLINE_MARGIN_SECONDS = 1.0
"""Kept before the run's deadline beyond ``cancel_timeout``: for the executor to report the outcome."""
_READ_AHEAD = 16
"""Events the stream's reader may hold before ``delegate`` relays them (so a fast remote waits)."""
_NAMESPACE = uuid.UUID("0f6f3c4e-9b1f-4b7e-8f53-2a8f9f7c1d20")


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
      and a second, the remote task is canceled (best effort, within ``cancel_timeout`` in all: if
      the remote has not yet told its task's id, its stream is read on for it) and the outcome is
      TIMED_OUT.
    * When our run is canceled (CancelTask: the worker calls the executor's ``cancel``, then cancels
      ``execute``), the remote task is canceled the same way and the exception goes on up
      (``asyncio.CancelledError``, or the queue's refusal once ``cancel`` reported CANCELED).
    * ``key``: the call's idempotency key; by default our task's id, this run's message id and the
      call's ordinal in the run, so a re-run makes the same call and the remote recognises it.
    """
    run = f"{context.task_id}/{context.message.message_id if context.message else ''}"
    key = key or remote.call_key(run)
    outbound = _outbound(message, key)
    prefix = artifact_prefix if artifact_prefix is not None else f"{key[-8:]}:"
    relay = Relay(updater, prefix, artifacts=relay_artifacts, status=relay_status)
    if context.steps.durable:  # no function runs while the remote works (a2a_serverless.durable)
        from ..durable.delegation import delegate_durably

        return await delegate_durably(context, remote, outbound, key, relay, limit=limit, cancel_timeout=cancel_timeout)
    return await _relayed(remote, outbound, key, relay, _budget(context, limit, cancel_timeout), cancel_timeout)


async def _relayed(
    remote: RemoteAgent, outbound: Message, key: str, relay: Relay, budget: float | None, cancel_timeout: float
) -> Delegation:
    """Queue mode: send ``outbound`` and relay the remote's stream into our task for at most
    ``budget`` seconds (None: no bound), until the remote task ends, waits for input or replies;
    the outcome as :func:`delegate` tells it."""
    feed = _Feed(remote.stream(outbound, idempotency_key=key))
    last: Task | None = None
    try:
        async with asyncio.timeout(budget) as window:
            while (event := await feed.next()) is not None:
                last = track(last, event)
                if event.message is not None:
                    return Delegation(remote.name, Outcome.REPLIED, f"{remote.name!r} replied.", reply=event.message)
                await relay.event(event)
                if last is not None and last.status.state in ENDED:
                    break
    except TimeoutError:
        if not window.expired():
            raise
        last = await _cancel(remote, feed, last, cancel_timeout)
        return Delegation.timed_out(remote.name, f"{budget:.0f} s" if budget else "no time", last)
    except RemoteAgentError as exc:
        await cancel_quietly(remote, last, cancel_timeout)
        return Delegation(remote.name, Outcome.UNREACHABLE, str(exc), task=last)
    except BaseException:
        # Our run was canceled (the worker cancels ``execute``), or our task stopped taking events
        # (the executor's ``cancel`` already reported CANCELED): the remote's work is wasted now.
        await _cancel(remote, feed, last, cancel_timeout)
        raise
    finally:
        await feed.aclose()
    if last is None or last.status.state not in ENDED:
        return Delegation(remote.name, Outcome.UNREACHABLE, f"The remote agent {remote.name!r} stopped answering.")
    final = await _final(remote, last, cancel_timeout)
    return Delegation(remote.name, OF_STATE[final.status.state], detail(remote.name, final), task=final)


class _Feed:
    """The remote's events, read by a task of their own: a cancel of ours leaves the stream open,
    so a remote task whose id it has not told yet can still be learnt of, and canceled."""

    def __init__(self, events: AsyncIterator[StreamResponse]) -> None:
        self._queue: asyncio.Queue[StreamResponse | Exception | None] = asyncio.Queue(_READ_AHEAD)
        self._ended = False
        self._reader = asyncio.ensure_future(self._read(events))

    async def _read(self, events: AsyncIterator[StreamResponse]) -> None:
        end: Exception | None = None
        try:
            async with contextlib.aclosing(events):  # type: ignore[type-var]
                async for event in events:
                    await self._queue.put(event)
        except Exception as exc:  # raised by next() where it is read, as if read from the stream
            end = exc
        await self._queue.put(end)

    async def next(self) -> StreamResponse | None:
        """The next event; None once the stream has ended (or what made it fail, raised)."""
        if self._ended:
            return None
        item = await self._queue.get()
        if isinstance(item, StreamResponse):
            return item
        self._ended = True
        if item is not None:
            raise item
        return None

    async def task(self, last: Task | None, within: float) -> Task | None:
        """``last``, or the remote task once an event tells it: read on (relaying nothing) for at
        most ``within`` seconds; None if the stream ends, fails or takes longer."""
        with contextlib.suppress(TimeoutError, RemoteAgentError):
            async with asyncio.timeout(within):
                while last is None and (event := await self.next()) is not None:
                    last = track(last, event)
        return last

    async def aclose(self) -> None:
        self._reader.cancel()
        await asyncio.wait({self._reader})


async def _cancel(remote: RemoteAgent, feed: _Feed, last: Task | None, within: float) -> Task | None:
    """Cancel the remote task (best effort, ``within`` seconds in all), learning it from the stream
    first if no event told it yet (a cancel of ours may land between the remote's creating it and
    its first event). Finished even if canceled meanwhile; returns the remote task as last known."""

    async def learn_and_cancel() -> Task | None:
        ends = asyncio.get_running_loop().time() + within
        task = await feed.task(last, within)
        if task is not None and task.status.state not in ENDED:
            await cancel_remote(remote, task.id, max(0.0, ends - asyncio.get_running_loop().time()))
        return task

    return await finish_shielded(learn_and_cancel())


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


async def _final(remote: RemoteAgent, last: Task, within: float) -> Task:
    """The ended task whole (a stream's events tell its state, not all of it); ``last`` if unreadable."""
    try:
        task = await asyncio.wait_for(remote.get_task(last.id), within)
    except (RemoteAgentError, TimeoutError):
        return last
    return task if task.status.state in ENDED else last
