"""``TaskStore`` in process memory: the honest fake of :mod:`.dynamodb.store`.

It keeps what DynamoDB keeps, as serialized JSON: a small head per task, the event log, the
snapshot written at checkpoints, push configs and idempotency keys; a read assembles the task from
the snapshot and the events after it, exactly as the DynamoDB store does. So nothing a caller holds
aliases stored state, and the answers have the same semantics: conditional writes
(:class:`VersionConflict`, :class:`DuplicateMessage`), gap-free event sequences, the same checkpoint
rules, ordering, page tokens and size limits. One lock makes every operation atomic.

It differs where only AWS can: items never expire (no TTL), and ListTasks is strongly consistent
(the DynamoDB indexes are eventually consistent). And it can tell waiters when a task changes
(:meth:`wait_for_change`, :meth:`wait_for_events`), where DynamoDB callers poll.

``create_task`` and ``commit`` (offload, plan, write) are
:class:`~a2a_serverless.ports.store.TaskStoreBase`'s, as for DynamoDB: this module
writes what they plan, in one step under the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import ClassVar

from ..blobs import PartOffloader
from ..lifecycle import DEFAULT_MAX_HISTORY, fold
from ..models import StreamResponse, Task, TaskPushNotificationConfig, utc_now
from ..ports.delegation import DelegationRef
from ..ports.push_marks import PushProgress
from ..ports.store import (
    AcceptedMessage,
    Checkpoint,
    DuplicateMessage,
    KeyKind,
    Planned,
    PushTarget,
    Scope,
    SendKey,
    StoredEvent,
    TaskHead,
    TaskPage,
    TaskQuery,
    TaskRecord,
    TaskStoreBase,
    VersionConflict,
    check_page_size,
    commit_listing_key,
    decode_page_token,
    encode_page_token,
    listing_key,
    listing_position,
    push_config_for,
    push_fingerprint,
)
from ..versions import CURRENT, ProtocolVersion

__all__ = ["MemoryTaskStore"]

_Key = tuple[str, str, str]  # tenant, owner, task id
_SendKeyAddress = tuple[str, str, str, str, str]  # tenant, owner, kind, name, fingerprint (of a reuse only)


@dataclass(frozen=True, slots=True)
class _Push:
    text: str
    delivered_seq: int
    protocol_version: ProtocolVersion = CURRENT
    tried_seq: int = 0


@dataclass(frozen=True, slots=True)
class _Head:
    head: TaskHead
    context_id: str
    listing_key: str
    checkpoint: Checkpoint


class MemoryTaskStore(TaskStoreBase):
    """Thread-safe in-memory task store (tests, benchmarks, ``A2A_STORE=memory``)."""

    notifies_changes: ClassVar[bool] = True
    """:meth:`wait_for_change` returns when the task is written (DynamoDB's only sleeps)."""

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = utc_now,
        max_history: int = DEFAULT_MAX_HISTORY,
        offloader: PartOffloader | None = None,
    ) -> None:
        self._clock = clock
        self._max_history = max_history
        self._offloader = offloader
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        """Notified (under ``_lock``) whenever a head is written: wakes :meth:`wait_for_change`."""
        self._heads: dict[_Key, _Head] = {}
        self._snapshots: dict[_Key, tuple[int, str]] = {}
        self._events: dict[_Key, dict[int, str]] = {}
        self._push: dict[_Key, dict[str, _Push]] = {}
        self._messages: dict[_SendKeyAddress, AcceptedMessage] = {}
        self._watchers: dict[_Key, set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        """Coroutines in :meth:`wait_for_events`, woken through their loops when the log grows."""
        self._refs: dict[str, DelegationRef] = {}
        """Delegation references (``ports.delegation``): apart from the tasks, as DynamoDB keeps them."""
        self._abandoned: set[_Key] = set()
        """Task ids :meth:`abandon_create` closed: they are never created."""

    # ------------------------------------------------------------------ tasks

    def _write_create(
        self, stored: TaskRecord, plan: Planned, key: SendKey | None, push: TaskPushNotificationConfig | None
    ) -> None:
        task_key = _task_key(stored.scope, stored.task_id)
        created_at = stored.created_at
        assert created_at is not None  # (create_task set it)
        with self._lock:
            if key is not None:
                self._check_new_key(stored.scope, key)
            log = self._events.get(task_key, {})
            if task_key in self._abandoned:
                accepted = self._messages.get(_key_address(stored.scope, key)) if key is not None else None
                accepted = accepted or AcceptedMessage(stored.task_id, key.fingerprint if key is not None else "")
                raise DuplicateMessage(task_id=accepted.task_id, fingerprint=accepted.fingerprint)
            if task_key in self._heads or any(seq in log for seq in range(1, len(plan.payloads) + 1)):
                raise VersionConflict(f"task {stored.task_id} already exists")
            self._heads[task_key] = _Head(
                stored.head, stored.task.context_id, listing_key(stored.task, created_at), stored.checkpoint
            )
            if key is not None:
                self._messages[_key_address(stored.scope, key)] = AcceptedMessage(stored.task_id, key.fingerprint)
            self._events[task_key] = {**log, **dict(enumerate(plan.payloads, start=1))}
            if plan.snapshot is not None:
                self._snapshots[task_key] = (plan.new_last_seq, plan.snapshot)
            if push is not None:
                self._push.setdefault(task_key, {})[push.id] = _Push(push.to_json(), 0, stored.protocol_version)
            self._notify(task_key)

    def abandon_create(self, scope: Scope, task_id: str) -> bool:
        key = _task_key(scope, task_id)
        with self._lock:
            if key in self._heads:
                return False
            self._abandoned.add(key)
            return True

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        key = _task_key(scope, task_id)
        with self._lock:
            stored = self._heads.get(key)
            if stored is None:
                return None
            snapshot = self._snapshots.get(key)
            base_seq = snapshot[0] if snapshot is not None else 0
            log = self._events.get(key, {})
            tail = [log[seq] for seq in range(base_seq + 1, stored.head.last_seq + 1)]
        return self._record(stored, snapshot[1] if snapshot is not None else None, tail)

    def get_head(self, scope: Scope, task_id: str) -> TaskHead | None:
        with self._lock:
            stored = self._heads.get(_task_key(scope, task_id))
        return stored.head if stored is not None else None

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        key = _task_key(scope, task_id)

        def moved() -> bool:
            stored = self._heads.get(key)
            return stored is None or stored.head.version != version

        with self._changed:
            self._changed.wait_for(moved, timeout=max(0.0, timeout))

    async def wait_for_events(self, scope: Scope, task_id: str, after_seq: int, max_wait: float) -> None:
        key = _task_key(scope, task_id)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        watcher = (loop, future)
        with self._lock:
            stored = self._heads.get(key)
            if stored is None or stored.head.last_seq > after_seq:
                return
            self._watchers.setdefault(key, set()).add(watcher)
        try:
            await asyncio.wait_for(future, max(0.0, max_wait))
        except TimeoutError:
            pass
        finally:
            with self._lock:
                waiting = self._watchers.get(key)
                if waiting is not None:
                    waiting.discard(watcher)
                    if not waiting:
                        del self._watchers[key]

    def mark_cancel(self, scope: Scope, task_id: str, message_id: str) -> bool:
        key = _task_key(scope, task_id)
        with self._lock:
            stored = self._heads.get(key)
            if stored is None or stored.head.running_message_id != message_id or stored.head.cancel_requested:
                return False
            head = replace(stored.head, cancel_requested=True, version=stored.head.version + 1)
            self._heads[key] = replace(stored, head=head)
            self._notify(key)
        return True

    def find_key(self, scope: Scope, key: SendKey) -> AcceptedMessage | None:
        with self._lock:
            return self._messages.get(_key_address(scope, key))

    def _check_new_key(self, scope: Scope, key: SendKey) -> None:
        """DuplicateMessage if this scope has the send key already, unless it names the task the key
        replaces (caller holds the lock)."""
        accepted = self._messages.get(_key_address(scope, key))
        if accepted is not None and not (key.replaces and accepted.task_id == key.replaces):
            raise DuplicateMessage(task_id=accepted.task_id, fingerprint=accepted.fingerprint)

    def _write_commit(self, read: TaskRecord, stored: TaskRecord, plan: Planned, key: SendKey | None) -> TaskRecord:
        task_key = _task_key(read.scope, read.task_id)
        new_key = commit_listing_key(read.task, read.created_at)
        with self._lock:
            current = self._heads.get(task_key)
            if current is None or (current.head.version, current.head.last_seq) != (read.version, read.last_seq):
                raise VersionConflict(f"task {read.task_id} changed since it was read")
            log = self._events.setdefault(task_key, {})
            first = read.last_seq + 1
            if any(seq in log for seq in range(first, first + len(plan.payloads))):
                raise VersionConflict(f"task {read.task_id} changed since it was read")
            if key is not None:
                self._check_new_key(read.scope, key)
                self._messages[_key_address(read.scope, key)] = AcceptedMessage(read.task_id, key.fingerprint)
            stored = replace(stored, created_at=current.head.created_at)  # written once, at creation
            self._heads[task_key] = _Head(
                stored.head, read.task.context_id, new_key or current.listing_key, plan.checkpoint
            )
            log.update(enumerate(plan.payloads, start=first))
            if plan.snapshot is not None:
                self._snapshots[task_key] = (plan.new_last_seq, plan.snapshot)
            self._notify(task_key)
        return stored

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        if limit <= 0:
            return []
        with self._lock:
            log = self._events.get(_task_key(scope, task_id), {})
            picked = [(seq, log[seq]) for seq in sorted(s for s in log if s > after_seq)[:limit]]
        return [StoredEvent(seq=seq, event=StreamResponse.model_validate_json(text)) for seq, text in picked]

    def list_tasks(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Newest first; see :meth:`DynamoDBTaskStore.list_tasks` for the paging contract."""
        position = listing_position(scope, query)
        fingerprint, floor, cursor = position.fingerprint, position.floor, position.cursor
        with self._lock:
            matches = [
                (key, stored)
                for key, stored in self._heads.items()
                if key[:2] == (scope.tenant, scope.owner)
                and not stored.head.replied
                and (not query.context_id or stored.context_id == query.context_id)
                and (query.state is None or stored.head.state == query.state)
                and stored.listing_key >= floor
            ]
        matches.sort(key=lambda match: match[1].listing_key, reverse=True)
        after_cursor = [match for match in matches if not cursor or match[1].listing_key < cursor]
        page = after_cursor[: query.page_size]
        more = len(after_cursor) > query.page_size
        tasks = [record.task for key, _ in page if (record := self.get_task(scope, key[2])) is not None]
        return TaskPage(
            tasks=tasks,
            next_page_token=encode_page_token(page[-1][1].listing_key, fingerprint) if more else "",
            total_size=len(matches),
        )

    def expired_runs(self, now: int, limit: int = 100) -> list[tuple[Scope, str]]:
        with self._lock:
            expired = sorted(
                (stored.head.lease_until, key)
                for key, stored in self._heads.items()
                if stored.head.lease_until and stored.head.lease_until < now
            )
        return [(Scope(key[0], key[1]), key[2]) for _, key in expired[:limit]]

    # ------------------------------------------------------------------ push configs

    def put_push_config(
        self,
        scope: Scope,
        config: TaskPushNotificationConfig,
        *,
        start_after_seq: int = 0,
        protocol_version: ProtocolVersion = CURRENT,
    ) -> TaskPushNotificationConfig:
        config = push_config_for(config)
        with self._lock:
            configs = self._push.setdefault(_task_key(scope, config.task_id), {})
            existing = configs.get(config.id) or _Push("", start_after_seq)  # a replaced config keeps its marks
            configs[config.id] = _Push(config.to_json(), existing.delivered_seq, protocol_version, existing.tried_seq)
        return config

    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None:
        with self._lock:
            push = self._push.get(_task_key(scope, task_id), {}).get(config_id)
        if push is None:
            return None
        config = TaskPushNotificationConfig.model_validate_json(push.text)
        return PushTarget(config, push.delivered_seq, push.protocol_version, push.tried_seq)

    def _raise_push_mark(self, scope: Scope, task_id: str, config_id: str, seq: int, *, tried: bool) -> bool:
        with self._lock:
            configs = self._push.get(_task_key(scope, task_id), {})
            if (push := configs.get(config_id)) is None or (push.tried_seq if tried else push.delivered_seq) >= seq:
                return False
            configs[config_id] = replace(push, tried_seq=seq) if tried else replace(push, delivered_seq=seq)
            return True

    def push_progress(self, scope: Scope, task_id: str) -> dict[str, PushProgress]:
        with self._lock:
            configs = self._push.get(_task_key(scope, task_id), {})
            return {cid: PushProgress(push.delivered_seq, push.tried_seq) for cid, push in configs.items()}

    def list_push_configs(
        self, scope: Scope, task_id: str, page_size: int = 100, page_token: str = ""
    ) -> tuple[list[TaskPushNotificationConfig], str]:
        check_page_size(page_size)
        fingerprint = push_fingerprint(scope, task_id)
        after = decode_page_token(page_token, fingerprint) if page_token else ""
        with self._lock:
            configs = self._push.get(_task_key(scope, task_id), {})
            picked = sorted((cid, push.text) for cid, push in configs.items() if cid > after)
        page = picked[:page_size]
        token = encode_page_token(page[-1][0], fingerprint) if len(picked) > page_size else ""
        return [TaskPushNotificationConfig.model_validate_json(text) for _, text in page], token

    def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        with self._lock:
            self._push.get(_task_key(scope, task_id), {}).pop(config_id, None)

    # ------------------------------------------------------------------ delegation references

    def put_delegation_ref(self, ref: str, target: DelegationRef) -> None:
        with self._lock:
            if ref in self._refs:
                raise VersionConflict("this delegation reference is taken")
            self._refs[ref] = target

    def find_delegation_ref(self, ref: str) -> DelegationRef | None:
        with self._lock:
            return self._refs.get(ref)

    def delete_delegation_ref(self, ref: str) -> None:
        with self._lock:
            self._refs.pop(ref, None)

    # ------------------------------------------------------------------ helpers

    def _record(self, stored: _Head, snapshot: str | None, tail: Sequence[str]) -> TaskRecord:
        base = Task.model_validate_json(snapshot) if snapshot is not None else None
        task = fold(base, (StreamResponse.model_validate_json(text) for text in tail), max_history=self._max_history)
        if task is None:
            raise RuntimeError("a stored task without a snapshot or a first event")
        return TaskRecord.of(stored.head, task, stored.checkpoint)

    def _notify(self, key: _Key) -> None:
        """Wake whoever waits on ``key`` (called under ``_lock``)."""
        self._changed.notify_all()
        for loop, future in self._watchers.pop(key, set()):
            with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits any more
                loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _task_key(scope: Scope, task_id: str) -> _Key:
    return (scope.tenant, scope.owner, task_id)


def _key_address(scope: Scope, key: SendKey) -> _SendKeyAddress:
    reuse = key.fingerprint if key.kind is KeyKind.REUSED_MESSAGE else ""
    return (scope.tenant, scope.owner, key.kind.value, key.name, reuse)
