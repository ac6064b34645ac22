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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from enum import StrEnum
from typing import ClassVar, Protocol

from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState
from ..versions import CURRENT, ProtocolVersion
from .delegation import DelegationRefs
from .push_marks import PushMarks, PushProgress, PushTarget
from .scope import Scope

__all__ = [
    "MAX_ITEM_PAYLOAD_BYTES",
    "AcceptedMessage",
    "Checkpoint",
    "DuplicateMessage",
    "InvalidPageToken",
    "ItemTooLarge",
    "KeyKind",
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
    "VersionConflict",
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
    log); ``size`` its bytes; ``tail`` the bytes of the events logged after it."""

    seq: int = 0
    size: int = 0
    tail: int = 0


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
        """Atomically write a new task head (version 1), its first events (seq 1..n), the send key
        ``key`` naming the task (none when None: the send is not de-duplicated) and optionally a
        push config for it (its cursor at 0: it receives every event, the first included).

        Raises :class:`DuplicateMessage` when the key exists (whatever task it names), and
        :class:`VersionConflict` when a task with this id exists. Returns the stored record.
        """
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
