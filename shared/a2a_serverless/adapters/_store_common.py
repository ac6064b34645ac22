"""What both ``TaskStore`` adapters share, so the in-memory fake cannot drift from DynamoDB: the
sequence of their public writes (:class:`TaskStoreBase`), listing sort keys, page tokens,
transaction limits and argument checks.

:class:`TaskStoreBase` writes each public write once, over a few primitives each store provides:
store the large parts apart (the offloader), plan the write (:func:`plan_create`,
:func:`plan_commit`: sizes checked, the checkpoint decided, the stored record worked out), then
write it (``_write_create``, ``_write_commit``: one DynamoDB transaction, or one step under the
memory store's lock). Pure Python (no boto3): the memory store imports it too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..models import StreamResponse, Task, TaskPushNotificationConfig, format_timestamp
from ..ports.store import (
    MAX_ITEM_PAYLOAD_BYTES,
    Checkpoint,
    InvalidPageToken,
    ItemTooLarge,
    PushTarget,
    Scope,
    SendKey,
    TaskQuery,
    TaskRecord,
)

if TYPE_CHECKING:
    from ..blobs import PartOffloader

__all__ = [
    "LOG_ITEM_BYTES",
    "MAX_COMMIT_BYTES",
    "MAX_ITEM_PAYLOAD_BYTES",
    "MAX_TRANSACTION_ITEMS",
    "SNAPSHOT_MIN_TAIL_BYTES",
    "ListingPosition",
    "Planned",
    "TaskStoreBase",
    "check_listing_position",
    "check_page_size",
    "check_payload_size",
    "checkpoint_due",
    "commit_listing_key",
    "decode_page_token",
    "encode_page_token",
    "listing_fingerprint",
    "listing_key",
    "listing_position",
    "pack_events",
    "parse_timestamp",
    "plan_commit",
    "plan_create",
    "push_config_for",
    "push_fingerprint",
    "status_floor",
    "to_millis",
]

MAX_TRANSACTION_ITEMS = 100
"""DynamoDB's TransactWriteItems limit. The fake enforces it too, so code that passes against the
fake cannot fail on AWS for writing too many events at once."""

_TIMESTAMP_WIDTH = len("2025-01-01T00:00:00.000Z")


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


def to_millis(value: datetime) -> datetime:
    """``value`` in UTC at the millisecond precision the store keeps."""
    return parse_timestamp(format_timestamp(value))


def listing_key(task: Task, created_at: datetime) -> str:
    """ListTasks sort key: the status timestamp (``created_at`` when the status has none), fixed
    width so it sorts as text, then the task id as the tie-break."""
    return f"{format_timestamp(task.status.timestamp or created_at)}#{task.id}"


def commit_listing_key(task: Task, created_at: datetime | None) -> str:
    """The listing key a commit writes, or '' to keep the stored one: without a status timestamp
    the key needs the creation time, and a commit only knows it if the caller's record carries it."""
    stamp = task.status.timestamp or created_at
    return f"{format_timestamp(stamp)}#{task.id}" if stamp is not None else ""


def status_floor(query: TaskQuery) -> str:
    """The lowest listing key ``status_after`` admits ('' when unset): inclusive, because
    ``"<ts>#<id>" >= "<ts>"``."""
    return format_timestamp(query.status_after) if query.status_after is not None else ""


def listing_fingerprint(scope: Scope, query: TaskQuery) -> str:
    state = query.state.value if query.state is not None else ""
    return _fingerprint("tasks", scope.tenant, scope.owner, query.context_id, state, status_floor(query))


def push_fingerprint(scope: Scope, task_id: str) -> str:
    return _fingerprint("push", scope.tenant, scope.owner, task_id)


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def encode_page_token(position: str, fingerprint: str) -> str:
    """An opaque token: the last returned sort position, bound to the scope and filters that
    produced it. Not a secret: positions only ever select within the caller's own scope."""
    raw = json.dumps({"p": position, "f": fingerprint}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


MAX_POSITION_BYTES = 1024
"""DynamoDB's limit on a sort key value: no position we issue comes near it."""
MAX_PAGE_TOKEN_CHARS = 4 * MAX_POSITION_BYTES
"""Generous for a base64 JSON object of a fingerprint and a position."""


def decode_page_token(token: str, fingerprint: str) -> str:
    """The position in ``token``; raises :class:`InvalidPageToken` unless this fingerprint issued it.
    The position becomes a DynamoDB key value (at most 1,024 bytes for a sort key), so a token
    holding a longer one is refused here rather than by DynamoDB."""
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise InvalidPageToken("malformed page token")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        raise InvalidPageToken("malformed page token") from exc
    if not isinstance(data, dict) or data.get("f") != fingerprint or not isinstance(data.get("p"), str):
        raise InvalidPageToken("page token was issued for another scope or query")
    position: str = data["p"]
    if not position or len(position.encode("utf-8", "surrogatepass")) > MAX_POSITION_BYTES:
        raise InvalidPageToken("malformed page token")
    return position


def check_listing_position(position: str, floor: str) -> None:
    if len(position) <= _TIMESTAMP_WIDTH or position[_TIMESTAMP_WIDTH] != "#" or position < floor:
        raise InvalidPageToken("malformed page token")


@dataclass(frozen=True, slots=True)
class ListingPosition:
    """Where a ListTasks page starts: the fingerprint its token is bound to, the lowest listing key
    ``status_after`` admits ('' when unset) and the position after which the page goes on ('': the
    first page)."""

    fingerprint: str
    floor: str
    cursor: str


def listing_position(scope: Scope, query: TaskQuery) -> ListingPosition:
    """The page size and token checked (ValueError, InvalidPageToken), and where the page starts."""
    check_page_size(query.page_size)
    fingerprint = listing_fingerprint(scope, query)
    floor = status_floor(query)
    cursor = ""
    if query.page_token:
        cursor = decode_page_token(query.page_token, fingerprint)
        check_listing_position(cursor, floor)
    return ListingPosition(fingerprint, floor, cursor)


def check_page_size(page_size: int) -> None:
    if page_size < 1:
        raise ValueError("page_size must be at least 1")


LOG_ITEM_BYTES = 256 * 1024
"""Events committed together share log items of at most this many bytes of event JSON (one item
holds at least one event, which alone may be up to ``MAX_ITEM_PAYLOAD_BYTES``)."""

MAX_COMMIT_BYTES = 3 * 1024 * 1024
"""What one commit may write in all (events and snapshot), below DynamoDB's 4 MB per transaction
with room for the head and the items' bookkeeping. Writers that batch (the worker) stay under it."""

SNAPSHOT_MIN_TAIL_BYTES = 64 * 1024
"""A checkpoint is due once the events logged after the snapshot reach this many bytes and at
least the snapshot's own size: so snapshots are rewritten a logarithmic number of times as a task
grows (their total stays within twice the task's size), and a read never folds more than this
plus the snapshot's size of events."""


def check_payload_size(*payloads: str) -> None:
    """Raise ItemTooLarge if the JSON payloads that share one item would not fit in it."""
    size = sum(len(p.encode("utf-8")) for p in payloads)
    if size > MAX_ITEM_PAYLOAD_BYTES:
        raise ItemTooLarge(f"{size} bytes of task data do not fit one item (at most {MAX_ITEM_PAYLOAD_BYTES})")


def checkpoint_due(task: Task, checkpoint: Checkpoint, new_last_seq: int, tail_bytes: int) -> bool:
    """Whether a commit that leaves the log at ``new_last_seq`` with ``tail_bytes`` of events
    after the snapshot should also write a new snapshot: when there is anything new to include and
    the task settled (so a finished or waiting task reads as one item), or the tail has grown."""
    if new_last_seq <= checkpoint.seq:
        return False
    state = task.status.state
    if state.is_terminal or state.is_interrupted:
        return True
    return tail_bytes >= max(SNAPSHOT_MIN_TAIL_BYTES, checkpoint.size)


def pack_events(payloads: Sequence[str]) -> list[list[str]]:
    """Consecutive event payloads grouped into log items of at most ``LOG_ITEM_BYTES``."""
    items: list[list[str]] = []
    size = 0
    for payload in payloads:
        length = len(payload.encode("utf-8"))
        if not items or size + length > LOG_ITEM_BYTES:
            items.append([])
            size = 0
        items[-1].append(payload)
        size += length
    return items


@dataclass(frozen=True, slots=True)
class Planned:
    """What a commit writes, worked out before anything is: the events' payloads, the snapshot's
    (None: no snapshot) and the checkpoint the head will record."""

    payloads: list[str]
    snapshot: str | None
    checkpoint: Checkpoint
    new_last_seq: int
    task: Task | None = None
    """The task as a commit wrote it (its large parts stored, when it wrote a snapshot); None: as given."""

    def written(self, record: TaskRecord) -> TaskRecord:
        """``record`` with its task as the commit wrote it."""
        return record if self.task is None else replace(record, task=self.task)


def plan_create(record: TaskRecord, events: Sequence[StreamResponse]) -> Planned:
    """What a new task's creation writes. A log that starts with the ``Task`` (SendMessage's) is
    its own snapshot: the task is the fold of it. Otherwise ``record.task`` is stored as the
    snapshot as of the last event, so the task reads back as given."""
    payloads = [event.to_json() for event in events]
    for payload in payloads:
        check_payload_size(payload)
    tail = sum(len(p.encode("utf-8")) for p in payloads)
    text: str | None = None
    if not events or events[0].task is None:
        text = record.task.to_json()
        check_payload_size(text)
    written = tail + (len(text.encode("utf-8")) if text is not None else 0)
    if written > MAX_COMMIT_BYTES:
        raise ValueError(f"create_task writes {written} bytes; at most {MAX_COMMIT_BYTES} fit one transaction")
    if text is not None:
        checkpoint = Checkpoint(seq=len(payloads), size=len(text.encode("utf-8")), tail=0)
    else:
        checkpoint = Checkpoint(tail=tail)
    return Planned(payloads, text, checkpoint, len(payloads))


def plan_commit(
    record: TaskRecord,
    events: Sequence[StreamResponse],
    *,
    snapshot: bool,
    offload: Callable[[Task], Task] | None = None,
) -> Planned:
    """Both stores' commit rules: sizes checked (ItemTooLarge, ValueError), the checkpoint decided.
    A snapshot that was asked for must fit; one that is merely due is skipped when it does not.
    The record must be one the store handed out (it carries the task's creation time).

    ``offload`` stores the task's large parts (:meth:`a2a_serverless.blobs.PartOffloader.offload_one`)
    and is called only when a snapshot is written: the task is stored nowhere else, and a text part
    that grows by appended chunks (:func:`a2a_serverless.lifecycle.append_parts`) is then stored once
    per snapshot, not once per commit."""
    if record.created_at is None:
        raise ValueError("commit a record read from the store (it carries the task's created_at)")
    payloads = [event.to_json() for event in events]
    for payload in payloads:
        check_payload_size(payload)
    new_last_seq = record.last_seq + len(payloads)
    added = sum(len(p.encode("utf-8")) for p in payloads)
    tail = record.checkpoint.tail + added
    text: str | None = None
    task: Task | None = None
    if snapshot or checkpoint_due(record.task, record.checkpoint, new_last_seq, tail):
        task = offload(record.task) if offload is not None else None
        text = (task or record.task).to_json()
        try:
            check_payload_size(text)
        except ItemTooLarge:
            if snapshot:
                raise
            text = None
            task = None
    written = added + (len(text.encode("utf-8")) if text is not None else 0)
    if written > MAX_COMMIT_BYTES or 1 + len(pack_events(payloads)) + (text is not None) > MAX_TRANSACTION_ITEMS:
        raise ValueError(f"commit writes {written} bytes in too many items for one transaction")
    if text is not None:
        checkpoint = Checkpoint(seq=new_last_seq, size=len(text.encode("utf-8")), tail=0)
    else:
        checkpoint = Checkpoint(seq=record.checkpoint.seq, size=record.checkpoint.size, tail=tail)
    return Planned(payloads, text, checkpoint, new_last_seq, task)


def push_config_for(config: TaskPushNotificationConfig, task_id: str = "") -> TaskPushNotificationConfig:
    """Validate a config before it is stored; with ``task_id`` (create), an empty task id is filled
    in and a different one rejected."""
    if task_id:
        if config.task_id and config.task_id != task_id:
            raise ValueError("push config names another task")
        config = config.model_copy(update={"task_id": task_id})
    if not config.id or not config.task_id:
        raise ValueError("push config needs both id and task_id")
    return config


class TaskStoreBase(ABC):
    """The public writes of a ``TaskStore``, written once: each store provides the primitives
    (:meth:`_write_create`, :meth:`_write_commit`, :meth:`get_push_target`, :meth:`_raise_push_mark`)
    and its ``_clock`` and ``_offloader``."""

    _clock: Callable[[], datetime]
    _offloader: PartOffloader | None

    def create_task(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse],
        *,
        key: SendKey | None = None,
        push_config: TaskPushNotificationConfig | None = None,
    ) -> TaskRecord:
        if self._offloader is not None:
            record, events = self._offloader.offload(record, events)
        plan = plan_create(record, events)
        push = push_config_for(push_config, record.task_id) if push_config is not None else None
        created_at = to_millis(record.created_at or self._clock())
        stored = replace(
            record, version=1, last_seq=plan.new_last_seq, created_at=created_at, checkpoint=plan.checkpoint
        )
        self._write_create(stored, plan, key, push)
        return stored

    def commit(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse] = (),
        *,
        snapshot: bool = False,
        key: SendKey | None = None,
    ) -> TaskRecord:
        events, offload = self._offloader.for_commit(record, events) if self._offloader else (events, None)
        plan = plan_commit(record, events, snapshot=snapshot, offload=offload)
        record = plan.written(record)
        stored = replace(record, version=record.version + 1, last_seq=plan.new_last_seq, checkpoint=plan.checkpoint)
        return self._write_commit(record, stored, plan, key)

    def get_push_config(self, scope: Scope, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        target = self.get_push_target(scope, task_id, config_id)
        return target.config if target is not None else None

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        return self._raise_push_mark(scope, task_id, config_id, seq, tried=False)

    def mark_push_tried(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        return self._raise_push_mark(scope, task_id, config_id, seq, tried=True)

    @abstractmethod
    def _write_create(
        self, stored: TaskRecord, plan: Planned, key: SendKey | None, push: TaskPushNotificationConfig | None
    ) -> None:
        """Write a new task as one atomic step: its head (``stored``), the send key, the planned
        events and snapshot, the push config. DuplicateMessage, VersionConflict as ``create_task``."""

    @abstractmethod
    def _write_commit(self, read: TaskRecord, stored: TaskRecord, plan: Planned, key: SendKey | None) -> TaskRecord:
        """Write ``stored`` over the head ``read`` was read at, with the planned events and snapshot
        and the send key, as one atomic step; returns the record as stored. Raises as ``commit``."""

    @abstractmethod
    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None: ...

    @abstractmethod
    def _raise_push_mark(self, scope: Scope, task_id: str, config_id: str, seq: int, *, tried: bool) -> bool:
        """Raise the config's delivery cursor (``tried``: its failed-attempt mark) to ``seq`` if the
        config exists and the mark is lower; whether it moved."""
