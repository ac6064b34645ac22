"""The ``TaskStore`` port: tasks, their event logs, push configs and send idempotency keys (the
configs' delivery marks: :mod:`.push_marks`).

Every method takes a :class:`~.scope.Scope` (tenant + owner). Implementations key every item by it, so a
caller can never read, list or change another caller's data: a task outside the scope simply does
not exist. Two implementations honour this contract (``tests/contract/test_task_store.py`` runs the
same cases against both): :mod:`a2a_serverless.adapters.memory_store` and
:mod:`a2a_serverless.adapters.dynamodb.store`.

**What is stored.** A task is a small *head* (its bookkeeping: version, state, the run it waits for
or runs, the cancel mark, the lease), an append-only *event log* (the source of truth), and a
*snapshot* of the whole task as of some event, refreshed at checkpoints. A read assembles the task
from the snapshot and the events after it (:func:`a2a_serverless.lifecycle.fold`), so what is
written on every event stays small and never grows with the task; see ``docs/architecture.md``.

**Concurrency.** The head carries a ``version``. :meth:`TaskStore.commit` writes the new head and
appends its events (and a snapshot when one is due) in one atomic step, only if the stored version
still equals the one the caller holds; otherwise it raises :class:`VersionConflict` and writes
nothing. Event sequence numbers are therefore gap-free and each is written exactly once.

**What every store shares** (the second half of this module): :class:`TaskStoreBase` writes each
public write once, over a few primitives each store provides: store the large parts apart (a
:class:`PartsOffloader`), plan the write (:func:`plan_create`, :func:`plan_commit`: sizes checked,
the checkpoint decided, the stored record worked out), then write it (``_write_create``,
``_write_commit``: one DynamoDB transaction, or one step under the memory store's lock); and the
listing sort keys, page tokens, transaction limits and argument checks, so the in-memory fake
cannot drift from DynamoDB. Pure Python (no boto3).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from enum import StrEnum
from typing import ClassVar, Protocol

from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState, format_timestamp
from ..versions import CURRENT, ProtocolVersion
from .delegation import DelegationRefs
from .push_marks import PushMarks, PushProgress, PushTarget
from .scope import Scope

__all__ = [
    "LOG_ITEM_BYTES",
    "MAX_COMMIT_BYTES",
    "MAX_ITEM_PAYLOAD_BYTES",
    "MAX_TRANSACTION_ITEMS",
    "SNAPSHOT_MIN_TAIL_BYTES",
    "AcceptedMessage",
    "Checkpoint",
    "DuplicateMessage",
    "InvalidPageToken",
    "ItemTooLarge",
    "KeyKind",
    "ListingPosition",
    "PartsOffloader",
    "Planned",
    "PushProgress",
    "PushTarget",
    "Scope",
    "SendKey",
    "StoreError",
    "StoredEvent",
    "TaskHead",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskStore",
    "TaskStoreBase",
    "VersionConflict",
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


# --------------------------------------------------------------------------- send keys
# What the store writes with a task or a message so a send is not processed twice (their use:
# :mod:`a2a_serverless.operations.send_message`).


@dataclass(frozen=True, slots=True)
class AcceptedMessage:
    """A send key as stored: the task the request created or continued, and the fingerprint of
    the request (its message and configuration), which tells an identical re-send from a reuse of
    the key for something else."""

    task_id: str
    fingerprint: str = ""


class KeyKind(StrEnum):
    """What names a send key."""

    MESSAGE = "message"
    """The messageId: the first request that used it in the scope."""
    REUSED_MESSAGE = "reused-message"
    """The messageId and the fingerprint together: a request that reused a messageId for another
    message, processed as new (so its own re-sends are still recognised)."""
    HEADER = "header"
    """The ``Idempotency-Key`` request header's value."""


@dataclass(frozen=True, slots=True)
class SendKey:
    """A send's idempotency key: written in the same atomic step as the task it creates or the
    message it adds to one, only if it does not exist yet (else :class:`DuplicateMessage`), and it
    expires with the task. It is addressed by scope, kind and ``name`` (and by ``fingerprint`` too
    for :attr:`KeyKind.REUSED_MESSAGE`), and holds the task's id and ``fingerprint``.

    With ``replaces`` (a task id) the key is written only if it does not exist or still names that
    task: a messageId sent again after the client answered its first task takes the key over for
    the new task it creates (:func:`~a2a_serverless.operations.send_message.answered`)."""

    kind: KeyKind
    name: str
    fingerprint: str = ""
    replaces: str = ""

    @classmethod
    def message(cls, message_id: str, fingerprint: str = "") -> SendKey:
        return cls(KeyKind.MESSAGE, message_id, fingerprint)

    @classmethod
    def header(cls, value: str, fingerprint: str = "") -> SendKey:
        return cls(KeyKind.HEADER, value, fingerprint)

    def reused(self) -> SendKey:
        """The key of a messageId's reuse for this request."""
        return replace(self, kind=KeyKind.REUSED_MESSAGE)

    def taking_over(self, task_id: str) -> SendKey:
        """This key, to be written over the one that names ``task_id`` (see ``replaces``)."""
        return replace(self, replaces=task_id)


MAX_ITEM_PAYLOAD_BYTES = 400 * 1024 - 8 * 1024
"""The most bytes of JSON one stored event, or a snapshot, may have: DynamoDB's item limit (400 KB,
names and values) less room for the keys and bookkeeping next to the payload."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where the task's stored snapshot stands: storage bookkeeping the stores keep in the head and
    hand back with every record, so a writer that never reads (the worker) still knows it.

    ``seq`` is the last event the snapshot includes (0: none yet, the task is the fold of its whole
    log); ``size`` its bytes; ``tail`` the bytes of the events logged after it.

    ``held`` (a JSON array, '' when none) are the events ``held_first`` .. ``last_seq`` that the
    head itself holds instead of a log item: a store may close a task's log that way (the DynamoDB
    store does, for a small commit that ends the task, so that commit is one write). Every write of
    the head keeps them, until a commit that appends events moves them to a log item. ``snapshot``
    (the Task's JSON, '' when none) is the snapshot itself when the head holds it too (the same
    commit, when the task it ended is small): then no snapshot item is written."""

    seq: int = 0
    size: int = 0
    tail: int = 0
    held: str = ""
    held_first: int = 0
    snapshot: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskBookkeeping:
    """A task's bookkeeping, declared once: what its head (:class:`TaskHead`) and its record
    (:class:`TaskRecord`) both carry, besides the task's id and state.

    ``version`` grows with every commit; ``last_seq`` is the newest event's sequence number (0 before
    any). ``pending_message_id`` names the user message the next worker run must process ('' when
    no run is due); ``running_message_id`` the one a worker has claimed and is executing ('' when
    none); ``lease_until`` (epoch seconds, 0 when not running) is how long that run is known to be
    alive: its worker renews it, and a run whose lease lapsed is settled by the sweeper.
    ``cancel_requested`` is CancelTask's mark on a running task, for its worker to act on.
    ``replied`` is set when the agent answered with a Message instead of working on a task (a
    message-only reply): the task is completed with it as its status message and never listed.
    ``waiting_callback`` (durable execution mode) is the callback id of the durable execution that
    waits for the task's next message ('' when none waits): SendMessage resumes it with that id.
    ``waiting_token`` is the SHA-256 (hex) of the token the pushes of the remote agent the run last
    delegated to carry (``a2a_serverless.delegation``): set when the delegation sends, kept after
    the run ends, replaced by a sleep or an input wait.
    ``push_woken``: the remote states (comma-separated) whose pushes woke that delegation, cleared
    with ``waiting_token``: a push announcing one of them again wakes nothing (:mod:`.delegation`).
    """

    scope: Scope
    version: int = 0
    last_seq: int = 0
    cancel_requested: bool = False
    pending_message_id: str = ""
    running_message_id: str = ""
    lease_until: int = 0
    replied: bool = False
    created_at: datetime | None = None
    protocol_version: ProtocolVersion = CURRENT
    waiting_callback: str = ""
    waiting_token: str = ""
    push_woken: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskHead(TaskBookkeeping):
    """A task's bookkeeping without its content, with its id and state: what waiters and watchers
    poll (one small read)."""

    task_id: str
    state: TaskState


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord(TaskBookkeeping):
    """A task with its bookkeeping: the protocol ``Task`` (assembled from the snapshot and the log,
    it gives the id and the state), the bookkeeping of its head and where the snapshot stands."""

    task: Task
    checkpoint: Checkpoint = field(default_factory=Checkpoint)

    @property
    def task_id(self) -> str:
        return self.task.id

    @property
    def state(self) -> TaskState:
        return self.task.status.state

    @property
    def reply(self) -> Message | None:
        """The message-only reply: the completed task's status message."""
        return self.task.status.message if self.replied else None

    @classmethod
    def of(cls, head: TaskHead, task: Task, checkpoint: Checkpoint) -> TaskRecord:
        """The record a store assembles from a head, the task it read and the head's checkpoint."""
        return cls(task=task, checkpoint=checkpoint, **{name: getattr(head, name) for name in _BOOKKEEPING})

    @property
    def head(self) -> TaskHead:
        """The head alone (what :meth:`TaskStore.get_head` returns)."""
        carried = {name: getattr(self, name) for name in _BOOKKEEPING}
        return TaskHead(task_id=self.task.id, state=self.task.status.state, **carried)


_BOOKKEEPING = tuple(f.name for f in fields(TaskBookkeeping))
"""The fields a head and a record share (the record's task gives the id and the state)."""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    seq: int
    event: StreamResponse
    trace: str = ""
    """The ``traceparent`` of the commit that logged it, where the store keeps one (DynamoDB)."""


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """ListTasks filters, already validated. ``page_token`` is opaque and store-defined."""

    context_id: str = ""
    state: TaskState | None = None
    status_after: datetime | None = None
    page_size: int = 50
    page_token: str = ""


@dataclass(frozen=True, slots=True)
class TaskPage:
    tasks: list[Task]
    next_page_token: str
    total_size: int


class StoreError(Exception):
    """Base of the store's expected outcomes (not failures of the backend)."""


class VersionConflict(StoreError):
    """The task changed since it was read (or, on create, already exists). Nothing was written."""


@dataclass
class DuplicateMessage(StoreError):
    """The send key (:class:`SendKey`) was already written: ``task_id`` names the task it accepted
    and ``fingerprint`` is the one stored with it (empty for keys written before fingerprints were)."""

    task_id: str = field(default="")
    fingerprint: str = field(default="")

    def __str__(self) -> str:
        return f"message already accepted for task {self.task_id}"

    @property
    def accepted(self) -> AcceptedMessage:
        """The key as stored."""
        return AcceptedMessage(self.task_id, self.fingerprint)


class ItemTooLarge(StoreError):
    """An event, or a snapshot the caller asked for, would exceed what one stored item may hold
    (DynamoDB: 400 KB). Nothing was written."""


class InvalidPageToken(StoreError):
    """The page token was not issued by this store for this scope and query."""


class TaskStore(DelegationRefs, PushMarks, Protocol):
    def create_task(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse],
        *,
        key: SendKey | None = None,
        push_config: TaskPushNotificationConfig | None = None,
    ) -> TaskRecord:
        """Write a new task head (version 1), its first events (seq 1..n), the send key ``key``
        naming the task (none when None: the send is not de-duplicated) and optionally a push config
        for it (its cursor at 0: it receives every event, the first included). The task exists once
        its head does, and its head is written last: a create that dies before that leaves at most
        a key naming a task that never appears (see :meth:`abandon_create`), and nothing readable.

        Raises :class:`DuplicateMessage` when the key exists (whatever task it names; nothing
        written), also when the create was abandoned before its head was written (the key then
        names what replaced it), and :class:`VersionConflict` when a task with this id exists
        (nothing left written). Returns the stored record.
        """
        ...

    def abandon_create(self, scope: Scope, task_id: str) -> bool:
        """Make sure a task that does not exist (a send key names it, but its create died or is
        still on its way) never will: True once its head can no longer be written, False when the
        task exists. The caller may then take the key over (:meth:`SendKey.taking_over`)."""
        ...

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        """The task as of its newest event, with its bookkeeping (strongly consistent), or None
        (also for other scopes' tasks). Costs one read for a task whose snapshot is current (every
        settled task), two while a run is adding events after it."""
        ...

    def get_head(self, scope: Scope, task_id: str) -> TaskHead | None:
        """Only the bookkeeping (strongly consistent, one small item): for waiters and watchers."""
        ...

    def mark_cancel(self, scope: Scope, task_id: str, message_id: str) -> bool:
        """Mark the task for cancel (``cancel_requested``, the version moved on) if its run of
        ``message_id`` still holds it and it is not marked yet; False otherwise. A write of the head
        alone, without reading the task: a commit conditioned on a full read keeps losing to the
        group commits of a run that streams."""
        ...

    def find_key(self, scope: Scope, key: SendKey) -> AcceptedMessage | None:
        """The send key at ``key``'s address in this scope (kind, name, and the fingerprint of a
        reused messageId), as stored, if any (strongly consistent)."""
        ...

    notifies_changes: ClassVar[bool]
    """Whether :meth:`wait_for_change` returns when the task is written (memory); a store that
    cannot tell (DynamoDB) only sleeps, and a caller that must stay stoppable waits on its own."""

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        """Return once the head may have moved past ``version``, at the latest after ``timeout``
        seconds; the caller then reads it. A store that cannot be told (DynamoDB) just sleeps, so
        its callers poll; the memory store wakes them when the task is written."""
        ...

    async def wait_for_events(self, scope: Scope, task_id: str, after_seq: int, max_wait: float) -> None:
        """:meth:`wait_for_change` for coroutines (streams): return once events after ``after_seq``
        may exist, at the latest after ``max_wait`` seconds, without holding a thread."""
        ...

    def commit(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse] = (),
        *,
        snapshot: bool = False,
        key: SendKey | None = None,
    ) -> TaskRecord:
        """Write ``record``'s bookkeeping as the new head and append ``events`` after
        ``record.last_seq``, if the stored version still equals ``record.version``. Returns the
        record as stored (version + 1, ``last_seq`` advanced by ``len(events)``, its checkpoint
        updated). Raises :class:`VersionConflict` otherwise (nothing written); also when the task
        does not exist.

        ``record.task`` must be the stored task with ``events`` applied
        (:func:`a2a_serverless.lifecycle.fold`): the store does not read it back, it only takes the
        head's fields from it and, when a checkpoint is due (the task settled, or the events since
        the last snapshot outgrew it), writes it as the new snapshot. With ``snapshot=True``
        ``record.task`` becomes the stored task whatever the events say: for changes no event
        expresses (history edits, metadata merges, message-only replies); :class:`ItemTooLarge`
        if it does not fit one item. A checkpoint that would not fit is skipped (reads then fold
        more events), so a task is not bounded by one item. Each event must fit one item
        (:class:`ItemTooLarge` otherwise); all of them, the head and the snapshot must fit one
        transaction (``ValueError`` otherwise: see :data:`~a2a_serverless.adapters.MAX_COMMIT_BYTES`).

        With ``key`` the same step writes that send key for the task, as :meth:`create_task` does:
        a message continuing the task. :class:`DuplicateMessage` if the key exists and the head's
        condition held (nothing written); a failed head condition is a :class:`VersionConflict`
        whatever the key.
        """
        ...

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        """Events with seq > ``after_seq``, ascending, at most ``limit`` (strongly consistent)."""
        ...

    def list_tasks(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Tasks of the scope, newest status timestamp first (ties: task id descending), filtered
        by context, state and ``status_after`` (inclusive); message-only replies are never
        listed. ``total_size`` counts every match.
        Raises :class:`InvalidPageToken` for a token this store did not issue for the scope."""
        ...

    def expired_runs(self, now: int, limit: int = 100) -> list[tuple[Scope, str]]:
        """(scope, task id) of running tasks whose lease ended before ``now`` (epoch seconds),
        oldest first, at most ``limit``: for the sweeper. Across every scope."""
        ...

    def put_push_config(
        self,
        scope: Scope,
        config: TaskPushNotificationConfig,
        *,
        start_after_seq: int = 0,
        protocol_version: ProtocolVersion = CURRENT,
    ) -> TaskPushNotificationConfig:
        """Create or replace the config ``(config.task_id, config.id)``; both ids must be set. A new
        config's delivery cursor starts at ``start_after_seq`` (it receives the events after it); a
        replaced config keeps its cursor, so re-creating a config never replays what it got.
        ``protocol_version`` is the version its notifications are rendered in. An inline config
        given to ``create_task`` takes the record's ``protocol_version``."""
        ...

    def get_push_config(self, scope: Scope, task_id: str, config_id: str) -> TaskPushNotificationConfig | None: ...

    def list_push_configs(
        self, scope: Scope, task_id: str, page_size: int = 100, page_token: str = ""
    ) -> tuple[list[TaskPushNotificationConfig], str]:
        """Configs of the task ordered by id, and the next page token ('' on the last page).
        Raises :class:`InvalidPageToken` for a token it did not issue."""
        ...

    def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        """Idempotent: deleting a missing config succeeds."""
        ...


# --------------------------------------------------------------------------- what every store shares


class PartsOffloader(Protocol):
    """Stores a task's large parts apart before the task is written
    (:class:`a2a_serverless.blobs.PartOffloader`)."""

    def offload(self, record: TaskRecord, events: Sequence[StreamResponse]) -> tuple[TaskRecord, list[StreamResponse]]:
        """``record`` and ``events`` with their large parts stored and referenced."""
        ...

    def for_commit(
        self, record: TaskRecord, events: Sequence[StreamResponse]
    ) -> tuple[list[StreamResponse], Callable[[Task], Task]]:
        """``events`` with their large parts stored, and what stores the task's own, for a commit to
        call only when it writes the task's snapshot."""
        ...


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
    derived: bool = False
    """The snapshot is a checkpoint, the fold of the log as this commit leaves it (not a change only
    the snapshot records, nor a new task's only copy): a cache a store may write after the commit."""

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
    # Events the head held stay there while nothing is appended (a store moves them to the log first);
    # a snapshot it held gives way to a new one.
    kept = record.checkpoint if not payloads else Checkpoint()
    if text is not None:
        checkpoint = replace(kept, seq=new_last_seq, size=len(text.encode("utf-8")), tail=0, snapshot="")
    else:
        checkpoint = replace(kept, seq=record.checkpoint.seq, size=record.checkpoint.size, tail=tail)
    return Planned(payloads, text, checkpoint, new_last_seq, task, derived=text is not None and not snapshot)


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
    _offloader: PartsOffloader | None

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
