"""Durable delegation: ``delegate`` in durable mode, where no function runs while the remote works.

For an executor with ``durable_steps`` in durable mode (``docs/durable-tasks.md``), ``delegate``:

1. sends the message as a checkpointed step (SendMessage, answered at once), with a push config
   (A2A specification, section 4.3.3) pointing at our push receiver under a fresh opaque reference,
   with a fresh token (:mod:`a2a_serverless.delegation.hook`), when the remote's card says it sends
   pushes and our public URL is known;
2. then, until the remote task ends or waits for input, opens a durable wait that a verified push
   ends early (the head keeps the token's digest and the wait's callback), reads the remote task
   (GetTask, a step) and, if it still works, suspends: the invocation ends, nothing runs;
3. a push that announces a state not yet announced (or the wait's end) starts a new invocation,
   which replays the steps so far and reads the task again. Without pushes the waits are polls, backing off from
   :data:`POLL_SECONDS`'s first value to its last; with them a read every
   :data:`PUSH_RECHECK_SECONDS` still covers a lost push.

Every read comes after the wait is recorded, so a push is never missed: one that came before the
wait finds nothing to wake, but the read that follows sees what it announced. The remote's
artifacts are relayed as each read finds them (whole, not chunk by chunk). When the delegation ends
(or our run is canceled) its reference is forgotten: a later push to it is answered 404. CancelTask fails the
wait's callback: the remote task is canceled (a step) and our run ends. Past ``limit`` the remote
task is canceled and the outcome is TIMED_OUT; after :data:`READ_FAILURES` failed reads in a row,
UNREACHABLE. A crash while waiting costs nothing: no invocation is running then, and one that dies
before it suspends is run again by Lambda, which replays the send (never sending twice).

What to do at each point is decided by the rules of :mod:`.delegation_wait` (pure functions of a
frozen wait state and what was read); this module is their shell: the send step, and the steps that
read, wait, relay and cancel as the rules answer.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from functools import partial
from typing import TYPE_CHECKING

from ..delegation._common import Delegation, Relay, cancel_quietly, cancel_remote, finish_shielded
from ..delegation.hook import hook_url, new_ref, token_digest
from ..delegation.remote import ENDED, RemoteAgent, RemoteAgentError
from ..json_types import Json, JsonValue
from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig
from . import delegation_wait as rules
from .delegation_wait import POLL_SECONDS, PUSH_RECHECK_SECONDS, READ_FAILURES

if TYPE_CHECKING:
    from ..execution.api import RequestContext, Steps

__all__ = ["POLL_SECONDS", "PUSH_RECHECK_SECONDS", "READ_FAILURES", "delegate_durably"]


async def delegate_durably(
    context: RequestContext,
    remote: RemoteAgent,
    outbound: Message,
    key: str,
    relay: Relay,
    *,
    limit: float | None,
    cancel_timeout: float,
) -> Delegation:
    steps = context.steps
    tag = f"delegate-{key[-8:]}"
    sending = asyncio.ensure_future(steps.run(f"{tag}-send", partial(_send, steps, remote, outbound, key)))
    try:
        sent = await asyncio.shield(sending)
    except asyncio.CancelledError:
        # Stopped while the message was on its way: the send goes on (within cancel_timeout), and
        # the remote task it made is canceled.
        await finish_shielded(_cancel_sent(sending, remote, cancel_timeout))
        raise
    assert isinstance(sent, dict)
    remote.name = str(sent["name"])
    ref = str(sent.get("ref") or "")
    try:
        ended = await _waited(context, remote, relay, sent, tag, limit, cancel_timeout)
    except asyncio.CancelledError:
        if ref:
            await finish_shielded(steps.forget_push(ref))
        raise
    if ref:  # (again on a replay of the run: an idempotent delete)
        await finish_shielded(steps.forget_push(ref))
    return ended


async def _send(steps: Steps, remote: RemoteAgent, outbound: Message, key: str) -> Json:
    """The send step: the message sent (with a push config when the remote sends pushes and our
    public URL is known), and what the remote answered, or why it could not be sent."""
    base = steps.public_url
    ref = ""
    try:
        card = await remote.card()
        token = secrets.token_urlsafe(32) if base and card.capabilities.push_notifications else ""
        ref = new_ref() if token else ""
        push = TaskPushNotificationConfig(url=hook_url(base, ref), token=token) if token else None
        if token:  # a push may come before the first wait is open: the receiver knows it then
            await steps.expect_push(token_digest(token), ref)
        try:
            reply = await remote.send(outbound, idempotency_key=key, push=push)
        except RemoteAgentError:
            if push is None:
                raise
            # Refused with the push config (our URL is not one it takes, say): send it without,
            # and poll. The same messageId and Idempotency-Key: a remote that made a task the
            # first time recognises the send.
            token, reply = "", await remote.send(outbound, idempotency_key=key)
    except RemoteAgentError as exc:
        return {"error": str(exc), "name": remote.name, "ref": ref, "at": time.time()}
    sent: Json = {"message": reply.to_wire()} if isinstance(reply, Message) else {"task": reply.to_wire()}
    return {**sent, "name": remote.name, "token": token, "ref": ref, "at": time.time()}


async def _waited(
    context: RequestContext,
    remote: RemoteAgent,
    relay: Relay,
    sent: dict[str, JsonValue],
    tag: str,
    limit: float | None,
    cancel_timeout: float,
) -> Delegation:
    """How the delegation whose send step answered ``sent`` ended: waits and reads until then."""
    begun = rules.begin(sent, remote=remote.name, limit=limit)
    if isinstance(begun, rules.Ended):
        return begun.delegation
    token = str(sent["token"])
    watch = _Watch(context.steps, remote, relay, tag, cancel_timeout, begun, token_digest(token) if token else "")
    try:
        return await watch.until_ended()
    except asyncio.CancelledError:
        if not watch.canceled:  # stopped while a step ran: ask the remote to stop too (best effort)
            await cancel_quietly(remote, watch.wait.task, cancel_timeout)
        raise


class _Watch:
    """The effects of a delegation's wait: its steps (reads of the remote task, durable waits, the
    remote's cancel) and its relay, each decided by a rule of :mod:`.delegation_wait` on
    :attr:`wait`, which each answer replaces."""

    def __init__(
        self,
        steps: Steps,
        remote: RemoteAgent,
        relay: Relay,
        tag: str,
        cancel_timeout: float,
        wait: rules.Wait,
        digest: str,
    ) -> None:
        self._steps = steps
        self._remote = remote
        self._relay = relay
        self._tag = tag
        self._cancel_timeout = cancel_timeout
        self._digest = digest
        self.wait = wait
        self.canceled = False
        """The remote task was asked to cancel (a step): a stop asks nothing more."""

    async def until_ended(self) -> Delegation:
        await self._relay.event(StreamResponse(task=self.wait.task))
        while True:
            if rules.looks_first(self.wait):
                ended = await self._look(f"{self._tag}-look-{self.wait.reads}")
                if ended is not None:
                    return ended
            self.wait, seconds = rules.opened(self.wait)
            # The wait is recorded before the read: a push from now on ends it, and what one sent
            # before announced, the read sees.
            name = f"{self._tag}-wait-{self.wait.reads}"
            pending = await self._steps.open_wait(seconds, name, token_digest=self._digest)
            ended = await self._look(f"{self._tag}-read-{self.wait.reads}")
            if ended is not None:
                return ended
            woke = rules.woken(self.wait, await pending.result(), seconds)
            if woke is None:  # CancelTask: the remote's work is wasted now
                await self._cancel_remote()
                await self._steps.until_stopped()
                raise asyncio.CancelledError
            self.wait = woke

    async def _look(self, name: str) -> Delegation | None:
        """Read the remote task (a step; what changed in it relayed into ours): how the delegation
        ended, if it did."""
        checked = await self._steps.run(name, self._read)
        assert isinstance(checked, dict)
        wait, ended = rules.read(self.wait, checked)
        if wait.task != self.wait.task:
            await self._relay.event(StreamResponse(task=wait.task))
        self.wait = wait
        if ended is None:
            return None
        if ended.cancel:
            await self._cancel_remote()
        return ended.delegation

    async def _cancel_remote(self) -> None:
        """Cancel the remote task (a step), not cut off by our own stop."""
        self.canceled = True
        await finish_shielded(self._steps.run(f"{self._tag}-cancel", self._cancel))

    async def _read(self) -> Json:
        try:
            task = await self._remote.get_task(self.wait.task.id)
        except RemoteAgentError as exc:
            return {"error": str(exc), "at": time.time()}
        return {"task": task.to_wire(), "at": time.time()}

    async def _cancel(self) -> Json:
        await cancel_remote(self._remote, self.wait.task.id, self._cancel_timeout)
        return {"canceled": self.wait.task.id}


async def _cancel_sent(sending: asyncio.Future[JsonValue], remote: RemoteAgent, within: float) -> None:
    """Cancel the remote task ``sending`` (the send step) makes, ``within`` seconds in all."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + within
    try:
        sent = await asyncio.wait_for(asyncio.shield(sending), within)
    except Exception:  # the send failed, or took too long: nothing known to cancel
        return
    if isinstance(sent, dict) and isinstance(sent.get("task"), dict):
        task = Task.model_validate(sent["task"])
        if task.status.state not in ENDED:
            await cancel_remote(remote, task.id, max(0.0, ends - loop.time()))
