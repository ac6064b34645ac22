"""Durable delegation: ``delegate`` in durable mode, where no function runs while the remote works.

For an executor with ``durable_steps`` in durable mode (``docs/durable-tasks.md``), ``delegate``:

1. sends the message as a checkpointed step (SendMessage, answered at once), with a push config
   (A2A specification, section 4.3.3) pointing at our push receiver under a fresh opaque reference,
   with a fresh token (:mod:`.hook`), when the remote's card says it sends pushes and our public URL
   is known;
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
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import TYPE_CHECKING

from ..delegation._common import (
    OF_STATE,
    Delegation,
    Outcome,
    Relay,
    cancel_quietly,
    cancel_remote,
    detail,
    finish_shielded,
)
from ..delegation.hook import hook_url, new_ref, token_digest
from ..delegation.remote import ENDED, RemoteAgent, RemoteAgentError
from ..json_types import Json, JsonValue
from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig

if TYPE_CHECKING:
    from ..execution.api import RequestContext

__all__ = ["POLL_SECONDS", "PUSH_RECHECK_SECONDS", "READ_FAILURES", "delegate_durably"]

POLL_SECONDS = (2.0, 60.0)
"""The first and the longest durable wait between reads of a remote that sends no pushes."""
PUSH_RECHECK_SECONDS = 300.0
"""With pushes: the longest wait without one before the remote task is read anyway."""
READ_FAILURES = 3
"""Reads of the remote task that may fail in a row before the delegation gives up."""


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
    base = steps.public_url

    async def send() -> Json:
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

    sending = asyncio.ensure_future(steps.run(f"{tag}-send", send))
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
    steps = context.steps
    if "error" in sent:
        return Delegation(remote.name, Outcome.UNREACHABLE, str(sent["error"]))
    if "message" in sent:
        reply = Message.model_validate(sent["message"])
        return Delegation(remote.name, Outcome.REPLIED, f"{remote.name!r} replied.", reply=reply)
    last = Task.model_validate(sent["task"])
    token = str(sent["token"])
    digest = token_digest(token) if token else ""
    now = float(str(sent["at"]))
    end = None if limit is None else now + limit
    interval = PUSH_RECHECK_SECONDS if token else POLL_SECONDS[0]
    reads, failures, rang, canceled = 0, 0, False, False

    async def read() -> Json:
        try:
            task = await remote.get_task(last.id)
        except RemoteAgentError as exc:
            return {"error": str(exc), "at": time.time()}
        return {"task": task.to_wire(), "at": time.time()}

    async def cancel() -> Json:
        await cancel_remote(remote, last.id, cancel_timeout)
        return {"canceled": last.id}

    async def look(name: str) -> Delegation | None:
        """Read the remote task (a step): how the delegation ended, if it did."""
        nonlocal now, failures, last, canceled
        checked = await steps.run(name, read)
        assert isinstance(checked, dict)
        now = float(str(checked["at"]))
        if "error" in checked:
            failures += 1
        else:
            failures, last = 0, await _relayed(relay, last, Task.model_validate(checked["task"]))
        if last.status.state in ENDED:
            return Delegation(remote.name, OF_STATE[last.status.state], detail(remote.name, last), task=last)
        if end is not None and now >= end:
            ended = Delegation.timed_out(remote.name, f"{limit:.0f} s", last)
        elif failures >= READ_FAILURES:
            text = f"The remote agent {remote.name!r} could not be read {READ_FAILURES} times in a row."
            ended = Delegation(remote.name, Outcome.UNREACHABLE, text, task=last)
        else:
            return None
        canceled = True
        await finish_shielded(steps.run(f"{tag}-cancel", cancel))  # not cut off by our own stop
        return ended

    try:
        await relay.event(StreamResponse(task=last))
        while True:
            if rang or (end is not None and now >= end):  # a push said it ended, or time is up: look
                ended = await look(f"{tag}-look-{reads}")
                if ended is not None:
                    return ended
            reads += 1
            seconds = interval if end is None else max(1.0, min(interval, end - now))
            # The wait is recorded before the read: a push from now on ends it, and what one sent
            # before announced, the read sees.
            wait = await steps.open_wait(seconds, f"{tag}-wait-{reads}", token_digest=digest)
            ended = await look(f"{tag}-read-{reads}")
            if ended is not None:
                return ended
            how = await wait.result()
            if how == "canceled":  # CancelTask: the remote's work is wasted now
                canceled = True
                await finish_shielded(steps.run(f"{tag}-cancel", cancel))  # not cut off by our own stop
                await steps.until_stopped()
                raise asyncio.CancelledError
            rang = how == "push"
            if how == "timeout":
                now += seconds  # at least; the next read says exactly
                if not token:
                    interval = min(interval * 2, POLL_SECONDS[1])
    except asyncio.CancelledError:
        if not canceled:  # stopped while a step ran: ask the remote to stop too (best effort)
            await cancel_quietly(remote, last, cancel_timeout)
        raise


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


async def _relayed(relay: Relay, last: Task, task: Task) -> Task:
    """``task`` read anew: what changed in it relayed into ours."""
    if task != last:
        await relay.event(StreamResponse(task=task))
    return task
