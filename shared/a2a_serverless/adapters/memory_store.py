"""``TaskStore`` in process memory: the honest fake of :mod:`.dynamodb_store`.

It keeps what DynamoDB keeps (tasks, events, push configs and idempotency keys as serialized JSON),
so nothing a caller holds aliases stored state, and it answers with the same semantics: conditional
writes (:class:`VersionConflict`, :class:`DuplicateMessage`), gap-free event sequences, the same
ordering, page tokens and transaction size limit. One lock makes every operation atomic.

It differs where only AWS can: items never expire (no TTL), item size limits are not checked, and
ListTasks is strongly consistent (the DynamoDB indexes are eventually consistent).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ..models import StreamResponse, Task, TaskPushNotificationConfig, utc_now
from ..ports.store import (
    DuplicateMessage,
    PushTarget,
    Scope,
    StoredEvent,
    TaskPage,
    TaskQuery,
    TaskRecord,
    VersionConflict,
)
from ._store_common import (
    check_commit_size,
    check_create,
    check_listing_position,
    check_page_size,
    check_payload_size,
    commit_listing_key,
    decode_page_token,
    encode_page_token,
    listing_fingerprint,
    listing_key,
    push_config_for,
    push_fingerprint,
    status_floor,
    to_millis,
)

__all__ = ["MemoryTaskStore"]

_Key = tuple[str, str, str]  # tenant, owner, task id or message id


@dataclass(frozen=True, slots=True)
class _Push:
    text: str
    delivered_seq: int
    protocol_version: str = "1.0"


@dataclass(frozen=True, slots=True)
class _Head:
    meta: TaskRecord  # bookkeeping as stored; its ``task`` is a private copy, never handed out
    task_json: str
    listing_key: str

    def record(self) -> TaskRecord:
        reply = self.meta.reply.model_copy(deep=True) if self.meta.reply is not None else None
        return replace(self.meta, task=Task.model_validate_json(self.task_json), reply=reply)


class MemoryTaskStore:
    """Thread-safe in-memory task store (tests, benchmarks, ``A2A_STORE=memory``)."""

    def __init__(self, *, clock: Callable[[], datetime] = utc_now) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        """Notified (under ``_lock``) whenever a head is written: wakes :meth:`wait_for_change`."""
        self._heads: dict[_Key, _Head] = {}
        self._events: dict[_Key, dict[int, str]] = {}
        self._push: dict[_Key, dict[str, _Push]] = {}
        self._messages: dict[_Key, str] = {}

    # ------------------------------------------------------------------ tasks

    def create_task(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse],
        *,
        message_id: str,
        push_config: TaskPushNotificationConfig | None = None,
    ) -> TaskRecord:
        check_create(events, message_id, push_config is not None)
        push = push_config_for(push_config, record.task_id) if push_config is not None else None
        created_at = to_millis(record.created_at or self._clock())
        stored = replace(record, version=1, last_seq=len(events), created_at=created_at)
        head = self._head(stored, listing_key(record.task, created_at))
        payloads = _checked(events)
        key = _task_key(record.scope, record.task_id)
        message_key = (record.scope.tenant, record.scope.owner, message_id)
        with self._lock:
            if message_key in self._messages:
                raise DuplicateMessage(task_id=self._messages[message_key])
            log = self._events.get(key, {})
            if key in self._heads or any(seq in log for seq in range(1, len(payloads) + 1)):
                raise VersionConflict(f"task {record.task_id} already exists")
            self._heads[key] = head
            self._messages[message_key] = record.task_id
            self._events[key] = {**log, **{seq: text for seq, text in enumerate(payloads, start=1)}}
            if push is not None:
                self._push.setdefault(key, {})[push.id] = _Push(push.to_json(), 0, record.protocol_version)
            self._changed.notify_all()
        return stored

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        with self._lock:
            head = self._heads.get(_task_key(scope, task_id))
        return head.record() if head is not None else None

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        key = _task_key(scope, task_id)

        def moved() -> bool:
            head = self._heads.get(key)
            return head is None or head.meta.version != version

        with self._changed:
            self._changed.wait_for(moved, timeout=max(0.0, timeout))

    def find_task_by_message(self, scope: Scope, message_id: str) -> str | None:
        with self._lock:
            return self._messages.get((scope.tenant, scope.owner, message_id))

    def commit(self, record: TaskRecord, events: Sequence[StreamResponse] = ()) -> TaskRecord:
        check_commit_size(events)
        payloads = _checked(events)
        key = _task_key(record.scope, record.task_id)
        new_key = commit_listing_key(record.task, record.created_at)
        with self._lock:
            current = self._heads.get(key)
            if current is None or (current.meta.version, current.meta.last_seq) != (
                record.version,
                record.last_seq,
            ):
                raise VersionConflict(f"task {record.task_id} changed since it was read")
            log = self._events.setdefault(key, {})
            first = record.last_seq + 1
            if any(seq in log for seq in range(first, first + len(payloads))):
                raise VersionConflict(f"task {record.task_id} changed since it was read")
            stored = replace(record, version=record.version + 1, last_seq=record.last_seq + len(payloads))
            # created_at is written once, at creation.
            meta = replace(stored, created_at=current.meta.created_at)
            self._heads[key] = self._head(meta, new_key or current.listing_key)
            log.update(enumerate(payloads, start=first))
            self._changed.notify_all()
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
        check_page_size(query.page_size)
        fingerprint = listing_fingerprint(scope, query)
        floor = status_floor(query)
        cursor = ""
        if query.page_token:
            cursor = decode_page_token(query.page_token, fingerprint)
            check_listing_position(cursor, floor)
        with self._lock:
            matches = [
                head
                for (tenant, owner, _), head in self._heads.items()
                if (tenant, owner) == (scope.tenant, scope.owner)
                and head.meta.reply is None
                and (not query.context_id or head.meta.task.context_id == query.context_id)
                and (query.state is None or head.meta.state == query.state)
                and head.listing_key >= floor
            ]
        matches.sort(key=lambda head: head.listing_key, reverse=True)
        after_cursor = [head for head in matches if not cursor or head.listing_key < cursor]
        page = after_cursor[: query.page_size]
        more = len(after_cursor) > query.page_size
        return TaskPage(
            records=[head.record() for head in page],
            next_page_token=encode_page_token(page[-1].listing_key, fingerprint) if more else "",
            total_size=len(matches),
        )

    # ------------------------------------------------------------------ push configs

    def put_push_config(
        self,
        scope: Scope,
        config: TaskPushNotificationConfig,
        *,
        start_after_seq: int = 0,
        protocol_version: str = "1.0",
    ) -> TaskPushNotificationConfig:
        config = push_config_for(config)
        text = config.to_json()
        with self._lock:
            configs = self._push.setdefault(_task_key(scope, config.task_id), {})
            existing = configs.get(config.id)
            seq = existing.delivered_seq if existing else start_after_seq
            configs[config.id] = _Push(text, seq, protocol_version)
        return config

    def get_push_config(self, scope: Scope, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        target = self.get_push_target(scope, task_id, config_id)
        return target.config if target is not None else None

    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None:
        with self._lock:
            push = self._push.get(_task_key(scope, task_id), {}).get(config_id)
        if push is None:
            return None
        config = TaskPushNotificationConfig.model_validate_json(push.text)
        return PushTarget(config, push.delivered_seq, push.protocol_version)

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        with self._lock:
            configs = self._push.get(_task_key(scope, task_id), {})
            push = configs.get(config_id)
            if push is None or push.delivered_seq >= seq:
                return False
            configs[config_id] = replace(push, delivered_seq=seq)
            return True

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

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _head(record: TaskRecord, key: str) -> _Head:
        text = record.task.to_json()
        check_payload_size(text, record.reply.to_json() if record.reply is not None else "")
        reply = record.reply.model_copy(deep=True) if record.reply is not None else None
        meta = replace(record, task=Task.model_validate_json(text), reply=reply)
        return _Head(meta=meta, task_json=text, listing_key=key)


def _checked(events: Sequence[StreamResponse]) -> list[str]:
    payloads = [event.to_json() for event in events]
    for payload in payloads:
        check_payload_size(payload)
    return payloads


def _task_key(scope: Scope, task_id: str) -> _Key:
    return (scope.tenant, scope.owner, task_id)
