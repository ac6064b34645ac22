"""Delivering a task's events to one push config: in sequence order, from the config's cursor.

A :class:`DeliveryItem` says "config C of task T must have received every event up to seq N". The
delivery function handles one item at a time per (task, config): the delivery queue is SQS FIFO with
that pair as the message group, so deliveries to one webhook never run concurrently and never
overtake each other, while every other webhook's deliveries go on.

:func:`deliver` reads the config and its cursor (``deliveredSeq``) from the store, POSTs each event
after the cursor up to N, and moves the cursor past the events answered 2xx: once when the item
stops (and every :data:`CURSOR_EVERY` events of a long one), not after each POST, so a task's
notifications cost one cursor write per item rather than one each. Hence:

* a duplicate item (a stream record processed twice, a redelivered message) finds the cursor
  already past N and sends nothing; events whose trigger came out of order are sent in order anyway;
  a delivery function that dies before it stores the cursor sends those events again (at most
  :data:`CURSOR_EVERY`), which receivers drop by their ``X-A2A-Event-Id``;
* a deleted config has no cursor: its pending items are dropped, and nothing more is sent to it;
* a retryable failure (timeout, connection error, 408, 429, 5xx) stops the item at that event, to
  be retried with backoff (:func:`backoff_seconds`) while later events of the same webhook wait,
  and marks that event tried (``tried_seq``: a blocking SendMessage waits for its answer's push to
  be delivered *or held back by a failed attempt*, :mod:`a2a_serverless.operations._push_wait`); once
  the attempts are spent, the undelivered range is dead-lettered and the cursor moves past it, so
  one dead receiver cannot hold back the deliveries that come after it forever;
* a final failure (another 4xx, a refused address, a redirect to another host) dead-letters that one
  event and goes on with the next.

Dead-lettered items name the range they did not deliver (``from_seq``..``up_to_seq``) and the last
error; :mod:`.redrive` puts them back on the queue, and an item with ``from_seq`` is delivered
whatever the cursor says. Every POST carries ``X-A2A-Event-Id`` (``<taskId>:<seq>``, the same on
every retry and redrive) so receivers can drop the duplicates at-least-once delivery implies.

A config takes the shape of the A2A version that created it (v1.0: A2A specification, section 4.3.3 Push Notification
Payload): v1.0 configs get each event as a ``StreamResponse`` (``application/a2a+json``); v0.3 configs get what v0.3
receivers expect, the whole Task in the v0.3 JSON shape (``application/json``) as it stood after each event,
rebuilt by folding the task's log from its first event (:class:`_LegacyTaskBodies`).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from .. import telemetry
from ..blobs import PartPresenter
from ..errors import ContentUnavailableError, InvalidAgentResponseError
from ..lifecycle import apply_event
from ..models import StreamResponse, Task, TaskPushNotificationConfig
from ..ports import DeliveryItem, PushTarget, Scope, StoredEvent, TaskStore
from ..v03.json_shapes import task_out
from ..versions import ProtocolVersion
from . import SIGNATURE_HEADER, TOKEN_HEADER
from .attempts import Attempt, AttemptLog

if TYPE_CHECKING:
    from .sender import SendResult

__all__ = [
    "CONTENT_TYPE",
    "CURSOR_EVERY",
    "EVENT_ID_HEADER",
    "EVENT_SEQUENCE_HEADER",
    "TOKEN_HEADER",
    "DeliveryItem",
    "DeliveryOutcome",
    "DeliveryResult",
    "Sender",
    "Signer",
    "backoff_seconds",
    "deliver",
    "notification_headers",
]

logger = logging.getLogger(__name__)

CONTENT_TYPE = "application/a2a+json"
LEGACY_CONTENT_TYPE = "application/json"
EVENT_ID_HEADER = "X-A2A-Event-Id"
EVENT_SEQUENCE_HEADER = "X-A2A-Event-Sequence"
USER_AGENT = "a2a-serverless"

_READ_PAGE = 100
_SAFETY_SECONDS = 5.0
"""Stop starting POSTs when less than one timeout plus this is left of the invocation."""


class DeliveryOutcome(StrEnum):
    DONE = "done"
    """Everything the item asked for was delivered or dead-lettered (``dead_letters``)."""
    RETRY = "retry"
    """Stopped at ``next_seq`` on a retryable failure: try the item again later."""
    CONTINUE = "continue"
    """Out of invocation time at ``next_seq``: a fresh item should carry on from there."""


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    outcome: DeliveryOutcome
    delivered: int = 0
    next_seq: int = 0
    reason: str = ""
    retry_after: float | None = None
    dead_letters: tuple[DeliveryItem, ...] = ()


class Sender(Protocol):
    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult: ...


class Signer(Protocol):
    def sign(self, *, audience: str, task_id: str, event_id: str, body: bytes) -> str: ...


def notification_headers(
    config: TaskPushNotificationConfig,
    task_id: str,
    seq: int,
    body: bytes,
    signer: Signer | None,
    content_type: str = CONTENT_TYPE,
) -> dict[str, str]:
    """The headers of one notification (A2A specification, section 4.3.3 Push Notification Payload, and the token
    header v0.3 defined and the SDKs send): ``Authorization`` from the config's authentication, the config's token,
    the stable event id, and the signed JWT when signing is on (also as ``Authorization: Bearer`` when the config has
    no authentication of its own, as the A2A push topic's JWT flow describes)."""
    event_id = f"{task_id}:{seq}"
    headers = {
        "Content-Type": content_type,
        "User-Agent": USER_AGENT,
        EVENT_ID_HEADER: event_id,
        EVENT_SEQUENCE_HEADER: str(seq),
    }
    auth = config.authentication
    if auth is not None and auth.scheme:
        headers["Authorization"] = f"{auth.scheme} {auth.credentials}".rstrip()
    if config.token:
        headers[TOKEN_HEADER] = config.token
    if signer is not None:
        jwt = signer.sign(audience=config.url, task_id=task_id, event_id=event_id, body=body)
        headers[SIGNATURE_HEADER] = jwt
        headers.setdefault("Authorization", f"Bearer {jwt}")
    return headers


def backoff_seconds(
    attempt: int,
    *,
    base: float,
    cap: float,
    retry_after: float | None = None,
    rand: Callable[[], float] = random.random,
) -> int:
    """Seconds to wait before attempt ``attempt + 1``: exponential (``base * 2**(attempt-1)``,
    capped) with "equal jitter" (half fixed, half random), so retries of many deliveries that failed
    together spread out. A receiver's ``Retry-After`` is honoured when longer (within the cap).
    Whole seconds: that is SQS's visibility-timeout granularity."""
    exponential = min(cap, base * 2.0 ** max(0, attempt - 1))
    delay = exponential / 2 + rand() * exponential / 2
    if retry_after is not None:
        delay = max(delay, min(cap, retry_after))
    return max(0, min(int(cap), round(delay)))


@telemetry.traced_delivery
def deliver(
    item: DeliveryItem,
    *,
    store: TaskStore,
    sender: Sender,
    signer: Signer | None,
    attempt: int,
    max_attempts: int,
    timeout_seconds: float,
    remaining_seconds: Callable[[], float] = lambda: float("inf"),
    parts: PartPresenter | None = None,
    inline_bytes: int = 0,
    attempt_log: AttemptLog | None = None,
    on_sent: Callable[[SendResult, float], object] = lambda result, latency_ms: None,
) -> DeliveryResult:
    """Deliver what ``item`` asks for (module docstring). ``attempt`` counts from 1 (SQS's
    receive count); ``remaining_seconds`` is what is left of the invocation. ``parts`` turns the
    log's references to stored parts into what a webhook gets: inline up to ``inline_bytes`` per
    notification, else presigned URLs; a stored part that cannot be read is retried like a failed
    send. Every attempt is recorded in ``attempt_log`` when one is given (the local stack's
    ``A2A_PUSH_ATTEMPT_LOG``: :mod:`.attempts`); ``on_sent`` hears each POST's result and latency."""
    scope = item.scope
    target = store.get_push_target(scope, item.task_id, item.config_id)
    if target is None:
        logger.info("push config gone; dropping its delivery", extra=_log_keys(item))
        return DeliveryResult(DeliveryOutcome.DONE)
    start = item.from_seq or target.delivered_seq + 1
    delivered = 0
    dead: list[DeliveryItem] = []
    render = _renderer(store, item, target, start, parts, inline_bytes)
    cursor = _Cursor(store, item)
    with cursor:
        for stored in _events(store, scope, item.task_id, start, item.up_to_seq):
            if remaining_seconds() < timeout_seconds + _SAFETY_SECONDS:
                return DeliveryResult(DeliveryOutcome.CONTINUE, delivered, stored.seq, dead_letters=tuple(dead))
            result, latency_ms = _notify(stored, item.task_id, target, render, sender, signer, on_sent)
            if attempt_log is not None:
                attempt_log.record(Attempt.of(item, stored.seq, attempt, max_attempts, result, latency_ms))
            if result.outcome == "delivered":
                cursor.delivered(stored.seq)
                delivered += 1
                continue
            cursor.store()  # what went out is recorded before the failure is
            extra = {**_log_keys(item), "seq": stored.seq, "status": result.status, "reason": result.reason}
            if result.outcome == "retry" and attempt < max_attempts:
                logger.warning("webhook delivery failed; will retry", extra={**extra, "attempt": attempt})
                if stored.seq > target.tried_seq:
                    _mark_tried(store, item, stored.seq)
                return DeliveryResult(
                    DeliveryOutcome.RETRY, delivered, stored.seq, result.reason, result.retry_after, tuple(dead)
                )
            if result.outcome == "retry":
                # The budget is spent: park everything this item still owed, and let later items through.
                logger.error("webhook delivery gave up after %d attempts", attempt, extra=extra)
                reason = f"gave up after {attempt} attempts: {result.reason}"
                dead.append(_park(store, item, stored.seq, item.up_to_seq, reason))
                return DeliveryResult(DeliveryOutcome.DONE, delivered, reason=result.reason, dead_letters=tuple(dead))
            logger.error("webhook refused the notification; dead-lettered", extra=extra)
            dead.append(_park(store, item, stored.seq, stored.seq, f"refused: {result.reason}"))
    return DeliveryResult(DeliveryOutcome.DONE, delivered, dead_letters=tuple(dead))


CURSOR_EVERY = 50
"""A long item stores its cursor every this many delivered events (and when it stops)."""


class _Cursor:
    """The config's delivery cursor as an item moves it: each delivered event is noted, and the cursor
    is stored when the item stops (an exception included), before a failure is recorded, and every
    :data:`CURSOR_EVERY` events."""

    def __init__(self, store: TaskStore, item: DeliveryItem) -> None:
        self._store = store
        self._item = item
        self._seq = 0
        self._noted = 0

    def delivered(self, seq: int) -> None:
        self._seq = seq
        self._noted += 1
        if self._noted % CURSOR_EVERY == 0:
            self.store()

    def store(self) -> None:
        if self._seq:
            item = self._item
            self._store.advance_push_cursor(item.scope, item.task_id, item.config_id, self._seq)
            self._seq = 0

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.store()


def _renderer(
    store: TaskStore, item: DeliveryItem, target: PushTarget, start: int, parts: PartPresenter | None, inline_bytes: int
) -> Callable[[StreamResponse], tuple[bytes, str]]:
    """Event -> the body and content type of its notification, in the shape of the config's A2A
    version (module docstring), from event ``start`` on; it raises ``ContentUnavailableError`` when a
    stored part cannot be read."""
    show = _presenter(parts, item.scope, item.task_id, inline_bytes)
    if not _is_legacy(target):
        return lambda event: (show(event).to_json().encode(), CONTENT_TYPE)
    legacy = _LegacyTaskBodies(store, item.scope, item.task_id, start)
    return lambda event: (legacy.body_after(event, show), LEGACY_CONTENT_TYPE)


def _notify(
    stored: StoredEvent,
    task_id: str,
    target: PushTarget,
    render: Callable[[StreamResponse], tuple[bytes, str]],
    sender: Sender,
    signer: Signer | None,
    on_sent: Callable[[SendResult, float], object],
) -> tuple[SendResult, float]:
    """POST the notification of ``stored`` to the config's webhook: the result and its latency (ms).
    A stored part that cannot be read comes to a ``retry`` that sent nothing."""
    try:
        body, content_type = render(stored.event)
    except ContentUnavailableError:
        from .sender import SendResult

        return SendResult("retry", None, "a stored part of the task could not be read"), 0.0
    headers = notification_headers(target.config, task_id, stored.seq, body, signer, content_type)
    began = time.monotonic()
    result = sender.send(target.config.url, body, headers)
    on_sent(result, latency_ms := (time.monotonic() - began) * 1000.0)
    return result, latency_ms


def _park(store: TaskStore, item: DeliveryItem, from_seq: int, up_to_seq: int, reason: str) -> DeliveryItem:
    """Dead-letter events ``from_seq``..``up_to_seq`` of ``item`` and move the config's cursor past them."""
    parked = DeliveryItem(
        tenant=item.tenant,
        owner=item.owner,
        task_id=item.task_id,
        config_id=item.config_id,
        up_to_seq=up_to_seq,
        from_seq=from_seq,
        last_error=reason[:500],
        redrive=item.redrive,
    )
    store.advance_push_cursor(item.scope, item.task_id, item.config_id, up_to_seq)
    return parked


def _mark_tried(store: TaskStore, item: DeliveryItem, seq: int) -> None:
    """Mark event ``seq`` tried: an attempt failed on it, and it (with every later event of the
    config, in order behind it) waits for the retry. For blocking callers that wait for their
    answer's push. Best effort: the mark must not change what is delivered (a failure here would
    have the item retried at once, without its backoff), and a caller that misses it waits its bound."""
    try:
        store.mark_push_tried(item.scope, item.task_id, item.config_id, seq)
    except Exception:
        logger.warning("could not mark the failed attempt", extra={**_log_keys(item), "seq": seq}, exc_info=True)


_Shown = TypeVar("_Shown", StreamResponse, Task)


def _presenter(parts: PartPresenter | None, scope: Scope, task_id: str, budget: int) -> Callable[[_Shown], _Shown]:
    if parts is None:
        return lambda obj: obj
    return partial(parts.present, scope=scope, task_id=task_id, budget=budget)


def _is_legacy(target: PushTarget) -> bool:
    return target.protocol_version == ProtocolVersion.V0_3


class _LegacyTaskBodies:
    """v0.3 notification bodies: the Task as it stood after each event (the v0.3 reference server
    posted its task after every update). The log starts with the task's snapshot; the events before
    the first one to deliver are folded in first. Should the beginning of the log be gone (expired),
    the stored task stands in for the state."""

    def __init__(self, store: TaskStore, scope: Scope, task_id: str, start: int) -> None:
        self._store, self._scope, self._task_id = store, scope, task_id
        self._task: Task | None = None
        for stored in _events(store, scope, task_id, 1, start - 1):
            self._apply(stored.event)

    def _apply(self, event: StreamResponse) -> None:
        if event.task is not None and (self._task is None or event.task.id == self._task.id):
            self._task = event.task
        elif self._task is not None:
            try:
                self._task = apply_event(self._task, event)
            except InvalidAgentResponseError:  # not a continuation of what we folded: start over
                self._task = None

    def body_after(self, event: StreamResponse, show: Callable[[Task], Task]) -> bytes:
        self._apply(event)
        task = self._task
        if task is None:
            record = self._store.get_task(self._scope, self._task_id)
            if record is None:  # the task expired with its log: there is no Task left to send
                raise InvalidAgentResponseError(f"task {self._task_id} is gone; no v0.3 Task to send")
            task = record.task
        return json.dumps(task_out(show(task)), separators=(",", ":")).encode()


def _events(store: TaskStore, scope: Scope, task_id: str, start: int, up_to: int) -> list[StoredEvent]:
    """Events ``start``..``up_to`` that exist (expired ones are simply absent), in order."""
    events: list[StoredEvent] = []
    after = start - 1
    while after < up_to:
        page = store.read_events(scope, task_id, after_seq=after, limit=min(_READ_PAGE, up_to - after))
        events.extend(e for e in page if e.seq <= up_to)
        if len(page) < min(_READ_PAGE, up_to - after):
            break
        after = page[-1].seq
    return events


def _log_keys(item: DeliveryItem) -> dict[str, object]:
    # Never the URL's query, the token or the credentials: ids only.
    return {"task_id": item.task_id, "config_id": item.config_id, "up_to_seq": item.up_to_seq}
