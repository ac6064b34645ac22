"""Reads assemble the task (``docs/architecture.md``, Data): the event log is the source of truth
and the snapshot a cache of its fold.

A read is one strongly consistent Query for the two keys at the top of the task's range (the
snapshot and the head), plus, when events were logged after the snapshot, one Query for those log
items, folded onto it with the events the head holds (a small commit that ended the task:
:func:`.table.head_item`). A ListTasks page reads its tasks' snapshots in one BatchGetItem and the
events after each snapshot that does not show its task finished.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from ...lifecycle import fold
from ...models import StreamResponse, Task
from ...ports.store import Scope, StoredEvent, TaskRecord, VersionConflict
from .queries import events_query, log_query, task_query
from .table import (
    META_SK,
    SNAPSHOT_SK,
    Item,
    Keys,
    LogItem,
    Table,
    head_from_item,
    held_log,
    held_snapshot,
    is_abandoned,
    log_item_from,
    read_payload,
)

__all__ = ["events_of", "read_events", "read_listed", "read_task"]

_READ_ATTEMPTS = 5
_BATCH_GET_KEYS = 100
_EVENTS = TypeAdapter(list[StreamResponse])


def read_task(table: Table, scope: Scope, task_id: str, max_history: int) -> TaskRecord | None:
    """Snapshot and head in one Query; the events logged after the snapshot in a second one
    when neither that Query's log item nor the events the head holds cover them. The head is read
    after the snapshot (descending order), so a commit landing in between can only make the head
    newer: its events are then read too. Should the snapshot come out newer than the head anyway,
    the read is repeated."""
    pk = Keys(scope).task_pk(task_id)
    for _ in range(_READ_ATTEMPTS):
        items = table.query_page(task_query(pk))
        by_sk = {str(item["sk"]["S"]): item for item in items}
        found = by_sk.get(META_SK)
        if found is None or is_abandoned(found):
            return None
        head, checkpoint = head_from_item(scope, found)
        snapshot = by_sk.get(SNAPSHOT_SK)
        base_seq = int(snapshot["seq"]["N"]) if snapshot is not None else 0
        if base_seq > head.last_seq:
            continue
        base: Task | None = None
        if checkpoint.snapshot and checkpoint.seq >= base_seq:  # the head holds the newest snapshot
            base, base_seq = Task.model_validate_json(checkpoint.snapshot), checkpoint.seq
        elif snapshot is not None:
            base = Task.model_validate_json(read_payload(snapshot, "task"))
        held = held_log(found)
        logs = [log_item_from(item) for sk, item in by_sk.items() if sk.startswith("EVT#")]
        logs += [held] if held is not None else []
        if not _covers(logs, base_seq, head.last_seq):
            up_to = held.first - 1 if held is not None else head.last_seq
            logs = [log_item_from(item) for item in table.query(events_query(pk, base_seq, up_to))]
            logs += [held] if held is not None else []
        task = fold(
            base, (event for _, event in _events_between(logs, base_seq, head.last_seq)), max_history=max_history
        )
        if task is None:
            raise RuntimeError(f"task {task_id} has a head but neither a snapshot nor a first event")
        return TaskRecord.of(head, task, checkpoint)
    raise VersionConflict(f"task {task_id} kept changing while it was read")


def read_events(table: Table, scope: Scope, task_id: str, after_seq: int, limit: int) -> list[StoredEvent]:
    """The events after ``after_seq`` up to the head's ``lastSeq`` (:func:`_log_to_head`)."""
    if limit <= 0:
        return []
    logs, last_seq = _log_to_head(table, Keys(scope).task_pk(task_id), after_seq, limit)
    traces = {seq: log.trace for log in logs for seq in range(log.first, log.last + 1)}
    events = _events_between(logs, after_seq, last_seq)[:limit]
    return [StoredEvent(seq=seq, event=event, trace=traces[seq]) for seq, event in events]


def read_listed(table: Table, max_history: int, pks: list[str]) -> list[Task]:
    """The tasks of a ListTasks page, in its order: their heads (BatchGetItem, eventually
    consistent), which hold the snapshot of a small finished task; for the others their snapshots
    (a second BatchGetItem), then the events after each snapshot for the tasks it does not show
    finished (the log and the head's events, one strongly consistent Query each)."""
    bases: dict[str, Task] = {}
    for pk, head in _batch(table, pks, META_SK).items():
        if held := held_snapshot(head):
            task = Task.model_validate_json(held)
            if task.status.state.is_terminal:
                bases[pk] = task
    snapshots = _batch(table, [pk for pk in pks if pk not in bases], SNAPSHOT_SK)
    tasks: list[Task] = []
    for pk in pks:
        base = bases.get(pk)
        snapshot = snapshots.get(pk)
        if base is None and snapshot is not None:
            base = Task.model_validate_json(read_payload(snapshot, "task"))
        if base is None or not base.status.state.is_terminal:
            base_seq = int(snapshot["seq"]["N"]) if snapshot is not None else 0
            logs, last_seq = _log_to_head(table, pk, base_seq)
            base = fold(
                base, (event for _, event in _events_between(logs, base_seq, last_seq)), max_history=max_history
            )
        if base is not None:  # (a task whose first write is not visible yet to the index's reader)
            tasks.append(base)
    return tasks


def _log_to_head(table: Table, pk: str, after_seq: int, limit: int | None = None) -> tuple[list[LogItem], int]:
    """The log items holding events after ``after_seq``, then the events their head holds, and the
    head's ``lastSeq`` (0: no head, or an abandoned create's), which bounds what a reader may take:
    a log item written by a create that never got its head, or by one that lost a race, is past it.
    One Query reads both (the head's key sorts after every log item's); one that stops at ``limit``
    events before the head reads the head too."""
    logs: list[LogItem] = []
    head: Item | None = None
    found = 0
    # A log item holds at least one event: ``limit`` items (and the head) are always enough.
    for item in table.query(log_query(pk, after_seq), None if limit is None else min(limit, 25) + 1):
        if item["sk"]["S"] == META_SK:
            head = item
            break
        log = log_item_from(item)
        logs.append(log)
        found += max(0, log.last - max(log.first - 1, after_seq))
        if limit is not None and found >= limit:
            break
    if head is None and limit is not None:
        head = table.get(pk, META_SK)
    if head is None or is_abandoned(head):
        return [], 0
    held = held_log(head)
    return logs + ([held] if held is not None else []), int(head["lastSeq"]["N"])


def _batch(table: Table, pks: list[str], sk: str) -> dict[str, Item]:
    """The items at ``sk`` of the tasks ``pks`` that exist, by pk (BatchGetItem, 100 keys a call)."""
    found: dict[str, Item] = {}
    for start in range(0, len(pks), _BATCH_GET_KEYS):
        keys: list[Item] = [{"pk": {"S": pk}, "sk": {"S": sk}} for pk in pks[start : start + _BATCH_GET_KEYS]]
        for item in table.batch_get(keys):
            found[str(item["pk"]["S"])] = item
    return found


def _covers(logs: list[LogItem], after_seq: int, up_to: int) -> bool:
    """Whether ``logs`` hold every event after ``after_seq`` up to ``up_to``."""
    expected = after_seq + 1
    for log in sorted(logs, key=lambda log: log.first):
        if log.last < expected:
            continue
        if log.first > expected:
            return False
        expected = log.last + 1
    return expected > up_to


def _events_between(logs: list[LogItem], after_seq: int, up_to: int) -> list[tuple[int, StreamResponse]]:
    """The events of ``logs`` after ``after_seq`` up to ``up_to``, each once, in order."""
    events: dict[int, StreamResponse] = {}
    for log in logs:
        if log.last <= after_seq or log.first > up_to:
            continue
        for seq, event in events_of(log):
            if after_seq < seq <= up_to:
                events.setdefault(seq, event)
    return sorted(events.items(), key=lambda entry: entry[0])


def events_of(log: LogItem) -> list[tuple[int, StreamResponse]]:
    """A log item's events with their sequence numbers."""
    return list(enumerate(_EVENTS.validate_json(log.events_json), start=log.first))
