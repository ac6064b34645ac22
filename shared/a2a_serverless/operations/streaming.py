"""SendStreamingMessage and SubscribeToTask (A2A specification, sections 3.1.2 Send Streaming Message and 3.1.6
Subscribe to Task).

Both are served from the task's event log in the store, never from process memory, so any number
of subscribers on any instances see the same ordered sequence. Each event carries its sequence
number (the SSE ``id``); a client that reconnects with ``Last-Event-ID: n`` gets exactly the events
after ``n``: no gap, no duplicate. An ``n`` beyond the task's log is InvalidParams; an ``n`` after
which the stream had already ended gives an empty stream. Last-Event-ID is ignored on a
SendStreamingMessage that the call itself accepted (the client cannot have seen any of its events).

* The stream starts with the Task snapshot (its id is the sequence number of the newest event it
  includes), or is exactly one Message when the agent answers a new task's first message with a
  Message alone (its id is that of the COMPLETED status logged with the reply, so resuming after
  it finds nothing).
* It ends at a terminal state; SendStreamingMessage also ends at an interrupted state (the caller
  continues with a new message, on a new stream); SubscribeToTask stays through interrupted states.
* Polling is strongly consistent and adaptive: every ``stream_poll_seconds`` while events flow,
  backing off to ``stream_idle_poll_seconds`` when the task is quiet.
* A stream ends cleanly, with no error, after ``stream_max_seconds`` (below the Lambda timeout); the
  client resumes with ``Last-Event-ID`` on SubscribeToTask. Keep-alive comments are the transport's.

Everything that can fail (validation, capability, unknown or terminal task, submission) fails in
``open_*`` before the first byte, so errors are ordinary JSON responses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ..blobs import has_references
from ..errors import FieldViolation, InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from ..lifecycle import with_history_length
from ..models import (
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from ..ports import Scope, TaskRecord
from ..runtime import Runtime
from ._context import CallContext, resolve_scope
from .send_message import is_settled, submit_message

__all__ = ["EventStream", "open_message_stream", "open_subscription"]

StreamItem = tuple[int, StreamResponse]
FIRST_EVENT_HOLD_SECONDS = 1.0
_READ_LIMIT = 100
STREAM_INLINE_BYTES = 64 * 1024 * 1024
"""Stored content one stream carries inline in all: a streamed Lambda response is at most 200 MB
(and past its first 6 MB flows at 2 MB/s); beyond this a stream's large parts are URLs."""


def _require_streaming(runtime: Runtime) -> None:
    if not runtime.settings.streaming:
        raise UnsupportedOperationError("Streaming is not supported by this agent")


@dataclass
class EventStream:
    """A prepared stream: iterate :meth:`events` for ``(seq, StreamResponse)`` pairs."""

    runtime: Runtime
    scope: Scope
    record: TaskRecord
    after_seq: int | None
    """Resume point (``Last-Event-ID``, at most ``record.last_seq``): start after it, with no
    snapshot. None: snapshot first."""
    close_on_interrupted: bool
    message_id: str = ""
    """For SendStreamingMessage: the message whose run this stream follows."""
    history_length: int | None = None

    async def events(self) -> AsyncIterator[StreamItem]:
        """The stream's events, each with its stored parts as a client gets them (inline within
        ``inline_stream_bytes`` per event and :data:`STREAM_INLINE_BYTES` per stream, else as URLs)."""
        parts, per_event = self.runtime.parts, self.runtime.settings.inline_stream_bytes
        task_id = self.record.task.id
        left = STREAM_INLINE_BYTES
        async for seq, event in self._events():
            if has_references(event):
                budget = min(per_event, left)
                event, spent = await asyncio.to_thread(parts.present_within, event, self.scope, task_id, budget)
                left = max(0, left - spent)
            yield seq, event

    async def _events(self) -> AsyncIterator[StreamItem]:
        start = time.monotonic()
        deadline = start + self.runtime.settings.stream_max_seconds
        record = self.record
        snapshot = (record.last_seq, StreamResponse(task=with_history_length(record.task, self.history_length)))
        cursor = record.last_seq if self.after_seq is None else self.after_seq
        # A new task's first run may answer with a Message alone, and then the stream must be just
        # that Message: hold the snapshot back until the run's first event tells, for at most
        # FIRST_EVENT_HOLD_SECONDS (then it is sent, and a late reply is an ordinary event).
        held = self.after_seq is None and bool(self.message_id) and _is_fresh_run(record)
        if self.after_seq == record.last_seq and self._ends_at_snapshot(record):
            return  # the client already has the event that ended this stream: nothing will follow
        if self.after_seq is None and not held:
            if record.reply is not None and is_settled(record.head, self.message_id):
                yield record.last_seq, StreamResponse(message=record.reply)
                return
            yield snapshot
            if self._ends_at_snapshot(record):
                return
        async for item in self._follow(cursor, snapshot, held, start, deadline):
            yield item

    async def _follow(
        self, cursor: int, snapshot: StreamItem, held: bool, start: float, deadline: float
    ) -> AsyncIterator[StreamItem]:
        """The task's log after ``cursor``, polled until the stream ends or ``deadline``; ``held``:
        the ``snapshot`` was held back at ``start``, and the run's first events say what comes first."""
        settings = self.runtime.settings
        store = self.runtime.store
        task_id = self.record.task.id
        delay = settings.stream_poll_seconds
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            batch = await asyncio.to_thread(store.read_events, self.scope, task_id, cursor, _READ_LIMIT)
            if held:
                if not batch and time.monotonic() - start < FIRST_EVENT_HOLD_SECONDS:
                    wait = min(
                        settings.stream_poll_seconds,
                        FIRST_EVENT_HOLD_SECONDS - (time.monotonic() - start),
                        deadline - time.monotonic(),
                    )
                    await store.wait_for_events(self.scope, task_id, cursor, max(0.0, wait))
                    continue
                held = False
                if batch and batch[0].event.message is not None:
                    # The Message stands for the whole reply (it and the COMPLETED status logged
                    # with it): its id is the newest, so a resume after it is an empty stream.
                    reply = batch[0].event
                    ending = next((e for e in batch if e.event.status_update is not None), None)
                    yield (ending or batch[0]).seq, reply
                    return
                yield snapshot
            if not batch:
                if time.monotonic() - quiet_since > 2.0:
                    delay = min(delay * 1.5, settings.stream_idle_poll_seconds)
                await store.wait_for_events(
                    self.scope, task_id, cursor, min(delay, max(0.0, deadline - time.monotonic()))
                )
                continue
            delay, quiet_since = settings.stream_poll_seconds, time.monotonic()
            cursor = batch[-1].seq
            for stored in batch:
                yield stored.seq, stored.event
                if self._ends_at(stored.event):
                    return
            if len(batch) < _READ_LIMIT:
                # Caught up: the next read would most likely find nothing. Wait (the memory store
                # returns at once when more was logged meanwhile); a full batch reads on at once.
                await store.wait_for_events(self.scope, task_id, cursor, delay)
        if held:
            # The deadline came within the hold, before the run's first event: the stream still
            # starts with the Task (an empty stream would leave the client without the task's id).
            yield snapshot

    def _ends_at(self, event: StreamResponse) -> bool:
        update = event.status_update
        if update is None:
            return False
        state = update.status.state
        return state.is_terminal or (state.is_interrupted and self.close_on_interrupted)

    def _ends_at_snapshot(self, record: TaskRecord) -> bool:
        state = record.task.status.state
        if state.is_terminal:
            return True
        # Already interrupted: the end only if this message's run is over (a re-sent message).
        return state.is_interrupted and self.close_on_interrupted and is_settled(record.head, self.message_id)


def _is_fresh_run(record: TaskRecord) -> bool:
    """A new task whose first run has not produced anything yet: its first executor event may be a
    message-only reply, so the snapshot is held back until that is known."""
    return record.last_seq <= 1 and len(record.task.history) == 1 and not record.replied


def open_message_stream(request: SendMessageRequest, ctx: CallContext, runtime: Runtime) -> EventStream:
    """Validate, create or continue the task (as SendMessage does), and prepare its stream."""
    _require_streaming(runtime)
    submitted = submit_message(request, ctx, runtime)
    record = submitted.record
    # Last-Event-ID resumes the stream of a message sent before (an idempotent re-send). A message
    # this call just accepted has no stream to resume: the client gets it from the snapshot.
    after_seq = None if submitted.accepted else _resume_point(record, ctx.last_event_id)
    config = request.configuration or SendMessageConfiguration()
    return EventStream(
        runtime=runtime,
        scope=record.scope,
        record=record,
        after_seq=after_seq,
        close_on_interrupted=True,
        message_id=request.message.message_id,
        history_length=config.history_length,
    )


def open_subscription(request: SubscribeToTaskRequest, ctx: CallContext, runtime: Runtime) -> EventStream:
    """Subscribe to an existing task. A terminal task is UnsupportedOperation (spec 3.1.6) unless
    the caller is resuming (``Last-Event-ID``): it gets the events it has not seen, and none when it
    has seen the last one (an empty stream, which ends a client's iteration without an error; every
    A2A client, GET or POST, treats anything but ``text/event-stream`` as a failure)."""
    _require_streaming(runtime)
    scope = resolve_scope(ctx, runtime, task_id=request.id)
    record = runtime.store.get_task(scope, request.id)
    if record is None:
        raise TaskNotFoundError(metadata={"taskId": request.id})
    after_seq = _resume_point(record, ctx.last_event_id)
    if record.task.status.state.is_terminal and after_seq is None:
        raise UnsupportedOperationError(
            f"Task {request.id} is already {record.task.status.state.value}", metadata={"taskId": request.id}
        )
    return EventStream(runtime=runtime, scope=scope, record=record, after_seq=after_seq, close_on_interrupted=False)


def _resume_point(record: TaskRecord, last_event_id: int | None) -> int | None:
    """``Last-Event-ID`` checked against the task's log. An id the task has not reached was never
    sent by any stream of it: waiting for it would hang, and events before it would be skipped."""
    if last_event_id is not None and last_event_id > record.last_seq:
        raise InvalidParamsError(
            violations=[FieldViolation("Last-Event-ID", f"is beyond the task's last event id ({record.last_seq})")]
        )
    return last_event_id
