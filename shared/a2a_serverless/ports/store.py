"""The ``TaskStore`` port: tasks, their event logs, push configs and send idempotency keys.

Every method takes a :class:`Scope` (tenant + owner). Implementations key every item by it, so a
caller can never read, list or change another caller's data: a task outside the scope simply does
not exist. Two implementations honour this contract (``tests/contract/test_task_store.py`` runs the
same cases against both): :mod:`a2a_serverless.adapters.memory_store` and
:mod:`a2a_serverless.adapters.dynamodb_store`.

Concurrency: the head of a task carries a ``version``. :meth:`TaskStore.commit` writes the new head
and appends its events in one atomic step, only if the stored version still equals the one that was
read; otherwise it raises :class:`VersionConflict` and writes nothing. Event sequence numbers are
therefore gap-free and each is written exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "DuplicateMessage",
    "InvalidPageToken",
    "ItemTooLarge",
    "PushTarget",
    "Scope",
    "StoreError",
    "StoredEvent",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskStore",
    "VersionConflict",
]


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose data: the tenant (opaque routing id, may be empty) and the authenticated owner."""

    tenant: str
    owner: str


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """The stored head of a task: the protocol ``Task`` plus the bookkeeping around it.

    ``version`` is the version that was read; ``last_seq`` is the sequence number of the newest
    event in the task's log (0 before any). ``pending_message_id`` names the user message the next
    worker run must process ('' when no run is due); ``running_message_id`` the one a worker has
    claimed and is executing ('' when none). ``reply`` is set when the agent answered with a
    Message instead of working on a task (a message-only reply): the task is completed with it and
    never listed. ``cancel_requested`` is set by CancelTask for a
    task a worker is running; the worker observes it and cancels cooperatively.
    """

    scope: Scope
    task: Task
    version: int = 0
    last_seq: int = 0
    cancel_requested: bool = False
    pending_message_id: str = ""
    running_message_id: str = ""
    reply: Message | None = None
    created_at: datetime | None = None
    protocol_version: str = "1.0"

    @property
    def task_id(self) -> str:
        return self.task.id

    @property
    def state(self) -> TaskState:
        return self.task.status.state


@dataclass(frozen=True, slots=True)
class StoredEvent:
    seq: int
    event: StreamResponse


@dataclass(frozen=True, slots=True)
class PushTarget:
    """A push config with its delivery cursor: the events of the task up to ``delivered_seq`` were
    delivered to it (or handed to the dead-letter queue); the next delivery starts after it."""

    config: TaskPushNotificationConfig
    delivered_seq: int
    protocol_version: str = "1.0"
    """The A2A version of the request that created the config: notifications take its shape."""


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
    records: list[TaskRecord]
    next_page_token: str
    total_size: int


class StoreError(Exception):
    """Base of the store's expected outcomes (not failures of the backend)."""


class VersionConflict(StoreError):
    """The task changed since it was read (or, on create, already exists). Nothing was written."""


@dataclass
class DuplicateMessage(StoreError):
    """A task was already created from this (scope, messageId): ``task_id`` names it."""

    task_id: str = field(default="")

    def __str__(self) -> str:
        return f"message already accepted for task {self.task_id}"


class ItemTooLarge(StoreError):
    """The task (its head with history and artifacts) or one of its events would exceed what one
    stored item may hold (DynamoDB: 400 KB). Nothing was written."""


class InvalidPageToken(StoreError):
    """The page token was not issued by this store for this scope and query."""


class TaskStore(Protocol):
    def create_task(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse],
        *,
        message_id: str,
        push_config: TaskPushNotificationConfig | None = None,
    ) -> TaskRecord:
        """Atomically write a new task head (version 1), its first events (seq 1..n), the idempotency
        key (scope, ``message_id``) and optionally a push config for it (its cursor at 0: it receives
        every event, the first included).

        Raises :class:`DuplicateMessage` when the key exists (whatever task it names), and
        :class:`VersionConflict` when a task with this id exists. Returns the stored record.
        """
        ...

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        """A strongly consistent read of the head, or None (also for other scopes' tasks)."""
        ...

    def find_task_by_message(self, scope: Scope, message_id: str) -> str | None:
        """The task id created from this message id in this scope, if any."""
        ...

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        """Return once the head may have moved past ``version``, at the latest after ``timeout``
        seconds; the caller then reads it. A store that cannot be told (DynamoDB) just sleeps, so
        its callers poll; the memory store wakes them when the task is written."""
        ...

    def commit(self, record: TaskRecord, events: Sequence[StreamResponse] = ()) -> TaskRecord:
        """Write ``record`` as the new head and append ``events`` after ``record.last_seq``, if the
        stored version still equals ``record.version``. Returns the record as stored (version + 1,
        ``last_seq`` advanced by ``len(events)``). Raises :class:`VersionConflict` otherwise; also
        when the task does not exist.
        """
        ...

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        """Events with seq > ``after_seq``, ascending, at most ``limit`` (strongly consistent)."""
        ...

    def list_tasks(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Tasks of the scope, newest status timestamp first (ties: task id descending), filtered
        by context, state and ``status_after`` (inclusive); records with a ``reply`` are never
        listed. ``total_size`` counts every match.
        Raises :class:`InvalidPageToken` for a token this store did not issue for the scope."""
        ...

    def put_push_config(
        self,
        scope: Scope,
        config: TaskPushNotificationConfig,
        *,
        start_after_seq: int = 0,
        protocol_version: str = "1.0",
    ) -> TaskPushNotificationConfig:
        """Create or replace the config ``(config.task_id, config.id)``; both ids must be set. A new
        config's delivery cursor starts at ``start_after_seq`` (it receives the events after it); a
        replaced config keeps its cursor, so re-creating a config never replays what it got.
        ``protocol_version`` is the version its notifications are rendered in. An inline config
        given to ``create_task`` takes the record's ``protocol_version``."""
        ...

    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None:
        """The config and its delivery cursor (strongly consistent), or None once deleted."""
        ...

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        """Move the config's cursor up to ``seq``; never down, and never for a deleted config.
        Returns whether it moved."""
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
