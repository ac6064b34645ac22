"""Replay dead-lettered push deliveries: move them from the dead-letter queue back onto the
delivery queue (``a2a-serverless push-redrive``, the local console's Redrive), and see what became
of them.

A dead letter names its config and the range of events it did not deliver; redriven, it is delivered
again from the task's event log, with the config as it is now (a config deleted since is skipped;
fixed credentials are used), with the delivery function's usual attempts and backoff. Each message
is sent to the delivery queue before it is deleted from the dead-letter queue, so an interrupted
redrive duplicates at worst (receivers drop duplicates by ``X-A2A-Event-Id``) and never loses one.
A body that is not a delivery item is left where it is.

**Bounded.** A redrive moves at most as many dead letters as the queue held when it began (SQS's
count), and stamps each one it moves with its own id (``DeliveryItem.redrive``), which the delivery
carries onto whatever it dead-letters again. It never moves a message carrying its own id: an item
whose webhook still fails gets its attempts once and comes back to the dead-letter queue once, where
:func:`outcomes` finds it.

**Leaves the queue as it found it.** Reading the queue (a listing, a dry run, the messages a redrive
does not move) receives each batch with a visibility timeout, so that the next receive brings the
next messages, and makes every message it read visible again (visibility 0) as soon as the read
ends. Nothing stays hidden from the next reader. On a FIFO queue, SQS hands out no later message of
a group while an earlier one is held, so a read that does not delete sees at most the first ten of
each group: :attr:`DeadLetterRead.complete` says whether a read saw everything (by SQS's counts:
exact on the local stack's moto, approximate on SQS).

**Outcome.** A moved item *failed again* when a dead letter carrying the redrive's id and within
its range is back on the dead-letter queue; it was *delivered* when it is not back and the delivery
queue has drained (it also reads so when its config was deleted since, and nothing was sent); until
then it is *pending*.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import TracebackType
from typing import TYPE_CHECKING

from ..ports import DeliveryItem, Scope

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.literals import QueueAttributeNameType
    from mypy_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef, MessageTypeDef

__all__ = [
    "DeadLetter",
    "DeadLetterRead",
    "ItemOutcome",
    "Outcome",
    "RedriveReport",
    "deliveries_pending",
    "follow",
    "outcomes",
    "read_dead_letters",
    "redrive",
]

logger = logging.getLogger(__name__)

HIDE_SECONDS = 60
"""How long a read keeps the messages it received hidden, at most (it makes them visible again as
soon as it ends; this is only what a read that dies half-way leaves behind)."""
_BATCH = 10  # SQS's ReceiveMessage and ChangeMessageVisibilityBatch limit
_RECEIVE_COUNT_REASON = "dead-lettered by SQS (receive count)"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    message_id: str
    item: DeliveryItem | None
    """None: the body is not a delivery item."""


@dataclass(frozen=True, slots=True)
class DeadLetterRead:
    letters: tuple[DeadLetter, ...]
    complete: bool
    """Every message the queue held was read: none in flight elsewhere, none held back behind
    another of its FIFO group (SQS's counts: exact on moto, approximate on SQS)."""


@dataclass
class RedriveReport:
    redrive_id: str
    present: int
    """Messages on the dead-letter queue when the redrive began (SQS's count: approximate on SQS)."""
    moved: list[DeliveryItem] = field(default_factory=list)
    """The items moved, as sent (stamped with :attr:`redrive_id`); a dry run: the items it would move."""
    unreadable: list[str] = field(default_factory=list)
    """Message ids of bodies that are not delivery items (left on the dead-letter queue)."""
    reasons: dict[str, int] = field(default_factory=dict)
    """How many of the moved items had each last error."""
    complete: bool = True
    """The redrive read every message the queue held (see :attr:`DeadLetterRead.complete`)."""


class Outcome(StrEnum):
    DELIVERED = "delivered"
    FAILED_AGAIN = "failed again"
    PENDING = "pending"


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    item: DeliveryItem
    """The item as it was moved."""
    outcome: Outcome
    returned: tuple[DeliveryItem, ...] = ()
    """Its dead letters back on the queue: the events that failed again, each with its last error."""


def read_dead_letters(
    sqs: SQSClient, url: str, *, long_poll_seconds: int = 1, hide_seconds: int = HIDE_SECONDS
) -> DeadLetterRead:
    """Every dead letter that can be read now, leaving each one visible on the queue.
    ``long_poll_seconds`` 0 reads without waiting (moto answers exactly; SQS's short poll samples
    only some of its servers)."""
    with _Reader(sqs, url, hide_seconds, long_poll_seconds) as reader:
        letters: list[DeadLetter] = []
        while batch := reader.receive():
            letters.extend(DeadLetter(m["MessageId"], _item(m)) for m in batch)
        return DeadLetterRead(tuple(letters), reader.complete())


def redrive(
    sqs: SQSClient,
    dead_letter_url: str,
    queue_url: str,
    *,
    limit: int | None = None,
    dry_run: bool = False,
    scope: Scope | None = None,
    long_poll_seconds: int = 1,
    hide_seconds: int = HIDE_SECONDS,
) -> RedriveReport:
    """Move the dead letters (``scope`` given: that scope's only; ``limit``: at most that many)
    back to ``queue_url``, at most as many as the queue held when it began, none twice (module
    docstring). With ``dry_run``, only read and count them. Every message read and not moved is
    visible again when this returns."""
    report = RedriveReport(redrive_id=uuid.uuid4().hex, present=_queued(sqs, dead_letter_url))
    cap = report.present if limit is None else min(limit, report.present)
    seen: set[str] = set()
    with _Reader(sqs, dead_letter_url, hide_seconds, long_poll_seconds) as reader:
        while len(report.moved) < cap:
            # Messages seen before come round again only when a run outlives ``hide_seconds``.
            fresh = [m for m in reader.receive() if m["MessageId"] not in seen]
            if not fresh:
                break
            for message in fresh:
                seen.add(message["MessageId"])
                item = _item(message)
                if item is None:
                    report.unreadable.append(message["MessageId"])
                    continue
                if item.redrive == report.redrive_id or (scope is not None and item.scope != scope):
                    continue  # back already from this very redrive, or another caller's
                if len(report.moved) >= cap:
                    continue
                reason = item.last_error.split(":", 1)[0] or _RECEIVE_COUNT_REASON
                report.reasons[reason] = report.reasons.get(reason, 0) + 1
                if dry_run:
                    report.moved.append(item)
                    continue
                again = replace(item, last_error="", nonce=uuid.uuid4().hex, redrive=report.redrive_id)
                sqs.send_message(
                    QueueUrl=queue_url,
                    MessageBody=again.to_json(),
                    MessageGroupId=again.group_id,
                    MessageDeduplicationId=again.deduplication_id,
                )
                reader.delete(message)
                report.moved.append(again)
        report.complete = reader.complete()
    return report


def deliveries_pending(sqs: SQSClient, queue_url: str) -> int:
    """Messages on the delivery queue, in flight and delayed ones included (SQS's count)."""
    return _queued(sqs, queue_url, delayed=True)


def outcomes(
    sqs: SQSClient,
    dead_letter_url: str,
    queue_url: str,
    redrive_id: str,
    moved: Sequence[DeliveryItem],
    *,
    scope: Scope | None = None,
    long_poll_seconds: int = 1,
) -> list[ItemOutcome]:
    """What became of ``moved``, the items redrive ``redrive_id`` moved, so far (module docstring);
    ``scope`` given, only that scope's dead letters are looked at."""
    drained = deliveries_pending(sqs, queue_url) == 0
    back = [
        letter.item
        for letter in read_dead_letters(sqs, dead_letter_url, long_poll_seconds=long_poll_seconds).letters
        if letter.item is not None
        and letter.item.redrive == redrive_id
        and (scope is None or letter.item.scope == scope)
    ]
    found: list[ItemOutcome] = []
    for item in moved:
        returned = tuple(
            d
            for d in back
            if d.group_id == item.group_id and item.from_seq <= d.from_seq <= d.up_to_seq <= item.up_to_seq
        )
        if returned:
            found.append(ItemOutcome(item, Outcome.FAILED_AGAIN, returned))
        else:
            found.append(ItemOutcome(item, Outcome.DELIVERED if drained else Outcome.PENDING))
    return found


def follow(
    sqs: SQSClient,
    dead_letter_url: str,
    queue_url: str,
    report: RedriveReport,
    *,
    seconds: float,
    poll_seconds: float = 2.0,
    long_poll_seconds: int = 1,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[ItemOutcome]:
    """Wait up to ``seconds`` for the delivery queue to drain (a cheap count every
    ``poll_seconds``), then tell the :func:`outcomes` of what ``report`` moved."""
    deadline = clock() + seconds
    while deliveries_pending(sqs, queue_url) and clock() < deadline:
        sleep(poll_seconds)
    return outcomes(
        sqs, dead_letter_url, queue_url, report.redrive_id, report.moved, long_poll_seconds=long_poll_seconds
    )


def _item(message: MessageTypeDef) -> DeliveryItem | None:
    try:
        return DeliveryItem.from_json(message["Body"])
    except (ValueError, KeyError, TypeError):
        return None


_COUNTS: tuple[QueueAttributeNameType, ...] = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


def _counts(sqs: SQSClient, url: str) -> tuple[int, int, int]:
    """The queue's visible, in-flight and delayed messages (SQS's counts)."""
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(_COUNTS))["Attributes"]
    visible, in_flight, delayed = (int(attributes.get(name, "0")) for name in _COUNTS)
    return visible, in_flight, delayed


def _queued(sqs: SQSClient, url: str, *, delayed: bool = False) -> int:
    visible, in_flight, later = _counts(sqs, url)
    return visible + in_flight + (later if delayed else 0)


class _Reader:
    """Receives a queue's messages batch after batch, each batch hidden for ``hide_seconds`` so the
    next receive brings others, and on exit makes every message it still holds visible again."""

    def __init__(self, sqs: SQSClient, url: str, hide_seconds: int, long_poll_seconds: int) -> None:
        self._sqs, self._url = sqs, url
        self._hide, self._poll = hide_seconds, long_poll_seconds
        self._held: dict[str, str] = {}
        """Message id -> its latest receipt handle."""

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._release()

    def receive(self) -> list[MessageTypeDef]:
        answer = self._sqs.receive_message(
            QueueUrl=self._url,
            MaxNumberOfMessages=_BATCH,
            WaitTimeSeconds=self._poll,
            VisibilityTimeout=self._hide,
        )
        messages = answer.get("Messages", [])
        for message in messages:
            self._held[message["MessageId"]] = message["ReceiptHandle"]
        return messages

    def delete(self, message: MessageTypeDef) -> None:
        self._sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])
        self._held.pop(message["MessageId"], None)

    def complete(self) -> bool:
        """Nothing is left to read: every message the queue counts is one this reader holds."""
        visible, in_flight, _ = _counts(self._sqs, self._url)
        return visible == 0 and in_flight == len(self._held)

    def _release(self) -> None:
        held = list(self._held.items())
        self._held.clear()
        for start in range(0, len(held), _BATCH):
            entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                {"Id": str(n), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                for n, (_, handle) in enumerate(held[start : start + _BATCH])
            ]
            answer = self._sqs.change_message_visibility_batch(QueueUrl=self._url, Entries=entries)
            if answer.get("Failed"):
                # A handle that expired (the message was received again elsewhere) is not ours to show.
                logger.warning("%d dead letter(s) stay hidden until their visibility timeout", len(answer["Failed"]))
