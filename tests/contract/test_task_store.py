"""The ``TaskStore`` contract, run against every implementation (``memory`` and ``dynamodb``).

Each case states a behaviour callers rely on: scoping, idempotent creation, optimistic concurrency
with gap-free event logs, ListTasks ordering and paging, and push config storage.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from botocore.exceptions import ClientError

from a2a_serverless.adapters import DynamoDBTaskStore, MemoryTaskStore
from a2a_serverless.lifecycle import fold
from a2a_serverless.models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_serverless.mutation import mutate
from a2a_serverless.ports import (
    AcceptedMessage,
    DelegationRef,
    DuplicateMessage,
    InvalidPageToken,
    ItemTooLarge,
    PushProgress,
    PushTarget,
    Scope,
    SendKey,
    TaskQuery,
    TaskRecord,
    TaskStore,
    VersionConflict,
)
from a2a_serverless.transitions import wake_by_push
from a2a_serverless.versions import ProtocolVersion

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
ALICE_ELSEWHERE = Scope("globex", "alice")

SUBMITTED = TaskState.TASK_STATE_SUBMITTED
WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED


# ---------------------------------------------------------------------- builders


def a_task(
    task_id: str,
    *,
    context_id: str = "ctx-1",
    state: TaskState = SUBMITTED,
    at: datetime | None = T0,
    metadata: dict[str, Any] | None = None,
) -> Task:
    return Task(id=task_id, context_id=context_id, status=TaskStatus(state=state, timestamp=at), metadata=metadata)


def an_event(task: Task, note: str, state: TaskState = WORKING) -> StreamResponse:
    update = TaskStatusUpdateEvent(
        task_id=task.id,
        context_id=task.context_id or "ctx",
        status=TaskStatus(state=state),
        metadata={"note": note},
    )
    return StreamResponse(status_update=update)


def create(
    store: TaskStore,
    scope: Scope,
    task_id: str,
    *,
    events: int = 1,
    message_id: str = "",
    created_at: datetime | None = None,
    **task_fields: Any,
) -> TaskRecord:
    task = a_task(task_id, **task_fields)
    record = TaskRecord(scope=scope, task=task, created_at=created_at)
    first = [an_event(task, f"e{n}") for n in range(1, events + 1)]
    return store.create_task(record, first, key=SendKey.message(message_id or f"msg-{task_id}"))


def change(record: TaskRecord, **task_update: Any) -> TaskRecord:
    return replace(record, task=record.task.model_copy(update=task_update))


def logged(store: TaskStore, record: TaskRecord, events: list[StreamResponse]) -> TaskRecord:
    """Commit ``events`` as a run does: the record's task is the fold of them."""
    folded = fold(record.task, events)
    assert folded is not None
    return store.commit(replace(record, task=folded), events)


def with_status(record: TaskRecord, state: TaskState, at: datetime) -> TaskRecord:
    return change(record, status=TaskStatus(state=state, timestamp=at))


def notes(store: TaskStore, scope: Scope, task_id: str) -> list[tuple[int, str]]:
    out = []
    for stored in store.read_events(scope, task_id, limit=1000):
        assert stored.event.status_update is not None
        assert stored.event.status_update.metadata is not None
        out.append((stored.seq, stored.event.status_update.metadata["note"]))
    return out


def ids(store: TaskStore, scope: Scope, query: TaskQuery | None = None) -> list[str]:
    return [t.id for t in store.list_tasks(scope, query or TaskQuery()).tasks]


def pages(store: TaskStore, scope: Scope, query: TaskQuery) -> list[list[str]]:
    out: list[list[str]] = []
    token = ""
    while True:
        page = store.list_tasks(scope, replace(query, page_token=token))
        out.append([t.id for t in page.tasks])
        token = page.next_page_token
        if not token:
            return out
        assert len(out) < 100, "paging does not terminate"


def a_config(config_id: str, task_id: str = "t1", url: str = "https://hooks.example/a2a") -> TaskPushNotificationConfig:
    # The token is a header value (printable ASCII); the id may be any text.
    token = f"tok-{config_id.encode().hex()[:64]}"
    return TaskPushNotificationConfig(id=config_id, task_id=task_id, url=url, token=token)


# ---------------------------------------------------------------------- create and read


def test_a_created_task_reads_back_as_written(store: TaskStore) -> None:
    # Given a task created with two events
    created = create(store, ALICE, "t1", events=2, metadata={"k": [1, "two"]})

    # When it is read back
    got = store.get_task(ALICE, "t1")

    # Then the head and the log are what was written, at version 1
    assert (created.version, created.last_seq) == (1, 2)
    assert created.created_at is not None
    assert got is not None
    assert got.task == a_task("t1", metadata={"k": [1, "two"]})
    assert (got.scope, got.version, got.last_seq, got.created_at) == (ALICE, 1, 2, created.created_at)
    assert notes(store, ALICE, "t1") == [(1, "e1"), (2, "e2")]
    assert store.find_key(ALICE, SendKey.message("msg-t1")) == AcceptedMessage("t1")


def a_reply(message_id: str) -> Message:
    return Message(message_id=message_id, role=Role.ROLE_AGENT, parts=[Part(text=f"reply {message_id}")])


def test_a_task_answered_by_a_message_is_readable_but_never_listed(store: TaskStore) -> None:
    # Given two tasks, one of which the agent answered with a message only (the completed task's
    # status message, stored as given: no event folds into that)
    create(store, ALICE, "t1")
    replied = create(store, ALICE, "t2")
    completed = TaskStatus(state=COMPLETED, message=a_reply("r-1"), timestamp=T0)
    store.commit(replace(change(replied, status=completed), replied=True), snapshot=True)

    # When the caller lists, then only the real task is there; the reply is still readable
    page = store.list_tasks(ALICE, TaskQuery())
    assert [t.id for t in page.tasks] == ["t1"]
    assert page.total_size == 1
    got = store.get_task(ALICE, "t2")
    assert got is not None
    assert got.reply == a_reply("r-1")


def test_every_bookkeeping_field_round_trips(store: TaskStore) -> None:
    # Given a record whose every flag and id differs from its default (new TaskRecord fields are
    # picked up here, so an adapter that forgets to persist one fails)
    flags: dict[str, Any] = {}
    for f in fields(TaskRecord):
        if f.name in {"scope", "task", "version", "last_seq", "created_at", "checkpoint"}:
            continue
        if f.type == "bool":
            flags[f.name] = True
        elif f.type == "str":
            flags[f.name] = f"{f.name}-1"
        elif f.type == "int":
            flags[f.name] = 1_700_000_000
        elif f.type == "ProtocolVersion":
            flags[f.name] = ProtocolVersion.V0_3  # not the default
        else:
            pytest.fail(f"teach this test TaskRecord.{f.name}: {f.type}")
    created_at = T0 + timedelta(microseconds=1500)
    record = TaskRecord(scope=ALICE, task=a_task("t1"), created_at=created_at, **flags)

    # When it is created, then committed with other values
    store.create_task(record, [], key=SendKey.message("m1"))
    after_create = store.get_task(ALICE, "t1")
    flipped: dict[str, Any] = {
        k: (
            False
            if v is True
            else v + 1
            if isinstance(v, int)
            else ProtocolVersion.V1_0
            if isinstance(v, ProtocolVersion)
            else f"{v}-2"
        )
        for k, v in flags.items()
    }
    assert after_create is not None
    store.commit(replace(after_create, **flipped))
    after_commit = store.get_task(ALICE, "t1")
    head = store.get_head(ALICE, "t1")

    # Then each read returns what was written (timestamps at millisecond precision), and the head
    # alone is the record's bookkeeping
    assert after_create.created_at == T0 + timedelta(milliseconds=1)
    assert {name: getattr(after_create, name) for name in flags} == flags
    assert after_commit is not None
    assert {name: getattr(after_commit, name) for name in flags} == flipped
    assert after_commit.created_at == after_create.created_at
    assert head == after_commit.head


@pytest.mark.parametrize(
    "outsider", [pytest.param(BOB, id="other-owner"), pytest.param(ALICE_ELSEWHERE, id="other-tenant")]
)
def test_a_task_does_not_exist_outside_its_scope(store: TaskStore, outsider: Scope) -> None:
    # Given Alice's task
    create(store, ALICE, "t1", events=2)

    # Then nobody else can see any of it
    assert store.get_task(outsider, "t1") is None
    assert store.read_events(outsider, "t1") == []
    assert store.find_key(outsider, SendKey.message("msg-t1")) is None
    assert store.get_head(outsider, "t1") is None
    page = store.list_tasks(outsider, TaskQuery())
    assert (page.tasks, page.total_size, page.next_page_token) == ([], 0, "")


def test_stored_state_does_not_alias_what_callers_hold(store: TaskStore) -> None:
    # Given a task created from an object the caller keeps
    task = a_task("t1", metadata={"n": 1})
    store.create_task(TaskRecord(scope=ALICE, task=task), [], key=SendKey.message("m1"))

    # When the caller mutates that object and a read result
    assert task.metadata is not None
    task.metadata["n"] = 2
    read = store.get_task(ALICE, "t1")
    assert read is not None
    assert read.task.metadata is not None
    read.task.metadata["n"] = 3
    read.task.history.clear()

    # Then the store is unchanged
    again = store.get_task(ALICE, "t1")
    assert again is not None
    assert again.task.metadata == {"n": 1}


# ---------------------------------------------------------------------- idempotent creation


def test_a_reused_message_id_names_the_first_task(store: TaskStore) -> None:
    # Given a task created from message m1
    create(store, ALICE, "t1", message_id="m1")

    # When another task is created from the same message
    with pytest.raises(DuplicateMessage) as raised:
        create(store, ALICE, "t2", message_id="m1")

    # Then the error names the first task and nothing of the second was written
    assert raised.value.task_id == "t1"
    assert store.get_task(ALICE, "t2") is None
    assert store.read_events(ALICE, "t2") == []
    assert store.find_key(ALICE, SendKey.message("m1")) == AcceptedMessage("t1")


def test_a_message_id_is_scoped(store: TaskStore) -> None:
    create(store, ALICE, "t1", message_id="m1")

    created = create(store, BOB, "t1", message_id="m1")

    assert created.version == 1
    assert store.find_key(BOB, SendKey.message("m1")) == AcceptedMessage("t1")


def test_the_key_keeps_the_fingerprint_and_a_duplicate_reports_it(store: TaskStore) -> None:
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t1")), [], key=SendKey.message("m1", "f1"))

    with pytest.raises(DuplicateMessage) as raised:
        store.create_task(TaskRecord(scope=ALICE, task=a_task("t2")), [], key=SendKey.message("m1", "f2"))

    assert (raised.value.task_id, raised.value.fingerprint) == ("t1", "f1")
    assert store.find_key(ALICE, SendKey.message("m1")) == AcceptedMessage("t1", "f1")


def test_a_reused_message_id_has_a_key_per_fingerprint(store: TaskStore) -> None:
    # Given message m1's key, held by t1
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t1")), [], key=SendKey.message("m1", "f1"))
    reuse = SendKey.message("m1", "f2").reused()

    # When a task is created under the reuse's key, it is a key of its own, found by its fingerprint
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t2")), [], key=reuse)
    assert store.find_key(ALICE, reuse) == AcceptedMessage("t2", "f2")
    assert store.find_key(ALICE, SendKey.message("m1", "f3").reused()) is None
    assert store.find_key(ALICE, SendKey.message("m1")) == AcceptedMessage("t1", "f1")

    # and the same reuse again is a duplicate naming its task, as any key
    with pytest.raises(DuplicateMessage) as raised:
        store.create_task(TaskRecord(scope=ALICE, task=a_task("t3")), [], key=reuse)
    assert (raised.value.task_id, raised.value.fingerprint) == ("t2", "f2")
    assert store.get_task(ALICE, "t3") is None


def test_a_commit_can_write_a_reused_message_id_key(store: TaskStore) -> None:
    first = create(store, ALICE, "t1", message_id="m1")
    reuse = SendKey.message("m1", "f9").reused()

    store.commit(replace(first, pending_message_id="m1"), key=reuse)

    assert store.find_key(ALICE, reuse) == AcceptedMessage("t1", "f9")
    with pytest.raises(DuplicateMessage):
        store.commit(replace(first, version=2, pending_message_id="m1"), key=reuse)


def test_an_idempotency_key_is_a_key_of_its_own_kind_and_scoped(store: TaskStore) -> None:
    # Given a task created under the header key "k1", and one from message "k1"
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t1")), [], key=SendKey.header("k1", "f1"))
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t2")), [], key=SendKey.message("k1", "f2"))

    # Then each is its own key, another caller's "k1" is free, and the same key again is a duplicate
    assert store.find_key(ALICE, SendKey.header("k1")) == AcceptedMessage("t1", "f1")
    assert store.find_key(ALICE, SendKey.message("k1")) == AcceptedMessage("t2", "f2")
    assert store.find_key(BOB, SendKey.header("k1")) is None
    store.create_task(TaskRecord(scope=BOB, task=a_task("t1")), [], key=SendKey.header("k1", "f9"))
    with pytest.raises(DuplicateMessage) as raised:
        store.create_task(TaskRecord(scope=ALICE, task=a_task("t3")), [], key=SendKey.header("k1", "f3"))
    assert (raised.value.task_id, raised.value.fingerprint) == ("t1", "f1")


def test_a_task_created_without_a_message_id_writes_no_key(store: TaskStore) -> None:
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t1")), [])
    store.create_task(TaskRecord(scope=ALICE, task=a_task("t2")), [])

    assert store.get_task(ALICE, "t1") is not None
    assert store.get_task(ALICE, "t2") is not None


def test_a_commit_can_write_a_message_key_and_fails_whole_when_it_exists(store: TaskStore) -> None:
    # Given task t1, and task t2 created from message m2
    first = create(store, ALICE, "t1", message_id="m1")
    create(store, ALICE, "t2", message_id="m2")

    # When t1 takes message m3 with its key, the key is written with the commit
    second = store.commit(replace(first, pending_message_id="m3"), key=SendKey.message("m3", "f3"))
    assert store.find_key(ALICE, SendKey.message("m3")) == AcceptedMessage("t1", "f3")

    # and a commit that claims m2 (t2's) is a DuplicateMessage that writes nothing
    with pytest.raises(DuplicateMessage) as raised:
        store.commit(
            replace(change(second, metadata={"x": 1}), pending_message_id="m2"),
            [an_event(second.task, "e2")],
            key=SendKey.message("m2", "other"),
        )
    assert raised.value.task_id == "t2"
    stored = store.get_task(ALICE, "t1")
    assert stored is not None
    assert (stored.version, stored.last_seq, stored.pending_message_id) == (second.version, 1, "m3")
    assert store.find_key(ALICE, SendKey.message("m2")) == AcceptedMessage("t2")


def test_a_commit_on_a_stale_version_conflicts_even_when_its_key_exists(store: TaskStore) -> None:
    first = create(store, ALICE, "t1", message_id="m1")
    store.commit(replace(first, pending_message_id="m3"), key=SendKey.message("m3"))

    # The caller re-reads on a conflict and finds the message there: never a DuplicateMessage first
    with pytest.raises(VersionConflict):
        store.commit(replace(first, pending_message_id="m3"), key=SendKey.message("m3"))


def test_the_head_keeps_the_callback_a_durable_execution_waits_on(store: TaskStore) -> None:
    first = create(store, ALICE, "t1", message_id="m1")

    waiting = store.commit(replace(first, waiting_callback="cb-1"))

    head = store.get_head(ALICE, "t1")
    assert head is not None
    assert head.waiting_callback == "cb-1"
    record = store.get_task(ALICE, "t1")
    assert record is not None
    assert record.waiting_callback == "cb-1"
    store.commit(replace(waiting, waiting_callback=""))
    assert store.get_head(ALICE, "t1") == replace(head, version=3, waiting_callback="")


def test_the_head_keeps_a_delegation_waits_token_digest_beside_its_callback(store: TaskStore) -> None:
    first = create(store, ALICE, "t1", message_id="m1")

    waiting = store.commit(replace(first, waiting_callback="cb-1", waiting_token="ab" * 32))

    head = store.get_head(ALICE, "t1")
    assert head is not None
    assert (head.waiting_callback, head.waiting_token) == ("cb-1", "ab" * 32)
    record = store.get_task(ALICE, "t1")
    assert record is not None
    assert record.waiting_token == "ab" * 32
    store.commit(replace(waiting, waiting_callback="", waiting_token=""))
    assert store.get_head(ALICE, "t1") == replace(head, version=3, waiting_callback="", waiting_token="")


def test_a_delegation_reference_stands_for_its_task_until_deleted(store: TaskStore) -> None:
    target = DelegationRef(ALICE, "t1", "ab" * 32)

    store.put_delegation_ref("r" * 43, target)

    assert store.find_delegation_ref("r" * 43) == target
    assert store.find_delegation_ref("s" * 43) is None
    with pytest.raises(VersionConflict):  # a reference is never taken over (by another scope, say)
        store.put_delegation_ref("r" * 43, DelegationRef(BOB, "t9", "cd" * 32))
    assert store.find_delegation_ref("r" * 43) == target
    store.delete_delegation_ref("r" * 43)
    store.delete_delegation_ref("r" * 43)  # idempotent
    assert store.find_delegation_ref("r" * 43) is None


def test_a_push_wakes_a_delegation_once_per_state_and_only_its_current_wait(store: TaskStore) -> None:
    # The push receiver's rule (transitions.wake_by_push), committed as the receiver does: the
    # head's push_woken is stored and read back, and its write moves the version on
    digest = "ab" * 32

    def wake(scope: Scope, task_id: str, state: str, token: str = digest) -> str:
        return mutate(store, scope, task_id, partial(wake_by_push, token_digest=token, state=state)).result

    first = create(store, ALICE, "t1", message_id="m1")
    # Nothing waits yet (no callback): nothing to wake, nothing written
    store.commit(replace(first, waiting_token=digest))
    assert wake(ALICE, "t1", "TASK_STATE_COMPLETED") == ""
    waiting = store.get_task(ALICE, "t1")
    assert waiting is not None
    waiting = store.commit(replace(waiting, waiting_callback="cb-1"))
    head = store.get_head(ALICE, "t1")
    assert head is not None

    assert wake(ALICE, "t1", "TASK_STATE_COMPLETED") == "cb-1"
    assert wake(ALICE, "t1", "TASK_STATE_COMPLETED") == ""
    assert store.get_head(ALICE, "t1") == replace(head, version=head.version + 1, push_woken="TASK_STATE_COMPLETED")
    # ... another state wakes it once too; another delegation's token: never
    assert wake(ALICE, "t1", "unreadable") == "cb-1"
    assert wake(ALICE, "t1", "TASK_STATE_FAILED", token="cd" * 32) == ""
    record = store.get_task(ALICE, "t1")
    assert record is not None
    assert record.push_woken == "TASK_STATE_COMPLETED,unreadable"
    # A commit from a read older than the marks conflicts (it would erase them)
    with pytest.raises(VersionConflict):
        store.commit(replace(waiting, waiting_callback="cb-2"))


def test_creating_an_existing_task_id_conflicts_and_writes_nothing(store: TaskStore) -> None:
    # Given task t1
    create(store, ALICE, "t1", message_id="m1", events=1)

    # When it is created again from another message
    with pytest.raises(VersionConflict):
        create(store, ALICE, "t1", message_id="m2", events=3, state=WORKING)

    # Then neither the idempotency key nor the events of the failed create exist
    assert store.find_key(ALICE, SendKey.message("m2")) is None
    assert notes(store, ALICE, "t1") == [(1, "e1")]
    stored = store.get_task(ALICE, "t1")
    assert stored is not None
    assert stored.state is SUBMITTED


def test_concurrent_creates_from_one_message_have_one_winner(store: TaskStore) -> None:
    # Given eight callers racing to create a task from the same message
    racers = 8
    barrier = threading.Barrier(racers)

    def race(n: int) -> str:
        barrier.wait()
        try:
            return create(store, ALICE, f"t{n}", message_id="m1").task_id
        except DuplicateMessage as duplicate:
            return f"duplicate of {duplicate.task_id}"

    # When they all try at once
    with ThreadPoolExecutor(racers) as pool:
        outcomes = list(pool.map(race, range(racers)))

    # Then exactly one wins and every other caller is told the winner's id
    winners = [o for o in outcomes if not o.startswith("duplicate")]
    assert len(winners) == 1
    assert sorted(outcomes) == sorted([winners[0]] + [f"duplicate of {winners[0]}"] * (racers - 1))
    assert [n for n in range(racers) if store.get_task(ALICE, f"t{n}")] == [int(winners[0][1:])]


def test_an_abandoned_create_never_lands_and_an_existing_task_is_not_abandoned(store: TaskStore) -> None:
    # A task a key names but that does not exist (its create died): abandoned, it can never appear
    assert store.abandon_create(ALICE, "ghost") is True
    assert store.abandon_create(ALICE, "ghost") is True
    with pytest.raises(DuplicateMessage) as late:
        create(store, ALICE, "ghost", message_id="m-ghost")
    assert late.value.task_id == "ghost"
    assert store.get_task(ALICE, "ghost") is None
    assert store.get_head(ALICE, "ghost") is None
    assert store.read_events(ALICE, "ghost") == []
    assert ids(store, ALICE) == []
    # and a task that exists is not abandoned
    create(store, ALICE, "t1")
    assert store.abandon_create(ALICE, "t1") is False
    assert ids(store, ALICE) == ["t1"]


def test_a_push_config_can_be_created_with_the_task(store: TaskStore) -> None:
    task = a_task("t1")
    config = TaskPushNotificationConfig(id="p1", url="https://hooks.example/a2a")

    store.create_task(TaskRecord(scope=ALICE, task=task), [], key=SendKey.message("m1"), push_config=config)

    stored = store.get_push_config(ALICE, "t1", "p1")
    assert stored is not None
    assert (stored.task_id, stored.url) == ("t1", "https://hooks.example/a2a")


def test_a_create_must_fit_one_transaction(store: TaskStore) -> None:
    # Many small events share log items; what bounds a create is what one transaction can carry
    assert create(store, ALICE, "many", events=500).last_seq == 500
    assert [e.seq for e in store.read_events(ALICE, "many", after_seq=250, limit=3)] == [251, 252, 253]

    task = a_task("too-big")
    bulky = [an_event(task, "z" * (380 * 1024)) for _ in range(9)]
    with pytest.raises(ValueError, match="transaction"):
        store.create_task(TaskRecord(scope=ALICE, task=task), bulky, key=SendKey.message("m-big"))
    assert store.get_task(ALICE, "too-big") is None
    assert store.find_key(ALICE, SendKey.message("m-big")) is None


# ---------------------------------------------------------------------- commit


def test_commit_advances_the_version_and_appends_gap_free_events(store: TaskStore) -> None:
    # Given a task with one event
    first = create(store, ALICE, "t1", events=1)

    # When two commits follow, one with two events and one with none
    second = logged(store, first, [an_event(first.task, "w1"), an_event(first.task, "w2")])
    third = store.commit(replace(second, pending_message_id="m9"))

    # Then each commit is version + 1, and the log runs 1..3 without gaps
    assert (second.version, second.last_seq) == (2, 3)
    assert (third.version, third.last_seq) == (3, 3)
    assert notes(store, ALICE, "t1") == [(1, "e1"), (2, "w1"), (3, "w2")]
    stored = store.get_task(ALICE, "t1")
    assert stored is not None
    assert (stored.version, stored.last_seq, stored.state, stored.pending_message_id) == (3, 3, WORKING, "m9")


def test_a_stale_commit_conflicts_and_writes_nothing(store: TaskStore) -> None:
    # Given two writers that read the same version
    create(store, ALICE, "t1", events=1)
    read = store.get_task(ALICE, "t1")
    assert read is not None
    logged(store, read, [an_event(read.task, "winner")])

    # When the second commits on its stale read
    with pytest.raises(VersionConflict):
        logged(store, read, [an_event(read.task, "loser", COMPLETED)])

    # Then only the first write is there
    stored = store.get_task(ALICE, "t1")
    assert stored is not None
    assert (stored.version, stored.state) == (2, WORKING)
    assert notes(store, ALICE, "t1") == [(1, "e1"), (2, "winner")]


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(
            lambda r: TaskRecord(scope=ALICE, task=a_task("ghost"), version=1, created_at=T0), id="missing-task"
        ),
        pytest.param(lambda r: replace(r, scope=BOB), id="other-scope"),
        pytest.param(lambda r: replace(r, last_seq=r.last_seq + 5), id="wrong-last-seq"),
        pytest.param(lambda r: replace(r, version=r.version + 1), id="future-version"),
    ],
)
def test_a_commit_that_does_not_match_the_stored_head_conflicts(store: TaskStore, forge: Any) -> None:
    record = create(store, ALICE, "t1", events=1)

    with pytest.raises(VersionConflict):
        store.commit(forge(record), [an_event(record.task, "forged")])

    assert notes(store, ALICE, "t1") == [(1, "e1")]
    assert store.read_events(BOB, "t1") == []
    assert store.get_task(ALICE, "ghost") is None


def test_concurrent_read_modify_write_loses_no_update(store: TaskStore) -> None:
    # Given a task with a counter and eight workers that each add one to it, retrying on conflict
    workers = 8
    create(store, ALICE, "t1", events=0, metadata={"counter": 0})
    barrier = threading.Barrier(workers)

    def work(n: int) -> int:
        barrier.wait()
        for attempt in range(1, 200):
            record = store.get_task(ALICE, "t1")
            assert record is not None
            assert record.task.metadata is not None
            counted = change(record, metadata={"counter": record.task.metadata["counter"] + 1})
            try:
                # (a metadata edit no event expresses: stored as a snapshot)
                store.commit(counted, [an_event(record.task, f"worker-{n}")], snapshot=True)
                return attempt
            except VersionConflict:
                continue
        raise AssertionError("no progress")

    # When they run at once
    with ThreadPoolExecutor(workers) as pool:
        attempts = list(pool.map(work, range(workers)))

    # Then every increment and every event landed exactly once, at seqs 1..N
    stored = store.get_task(ALICE, "t1")
    assert stored is not None
    assert stored.task.metadata == {"counter": workers}
    assert (stored.version, stored.last_seq) == (workers + 1, workers)
    logged = notes(store, ALICE, "t1")
    assert [seq for seq, _ in logged] == list(range(1, workers + 1))
    assert sorted(note for _, note in logged) == sorted(f"worker-{n}" for n in range(workers))
    assert sum(attempts) >= workers


def test_a_commit_must_fit_one_transaction(store: TaskStore) -> None:
    record = create(store, ALICE, "t1", events=0)

    with pytest.raises(ValueError, match="transaction"):
        store.commit(record, [an_event(record.task, "z" * (380 * 1024)) for _ in range(9)])

    committed = logged(store, record, [an_event(record.task, f"n{n}") for n in range(1000)])
    assert committed.last_seq == 1000
    assert notes(store, ALICE, "t1")[-1] == (1000, "n999")


# ---------------------------------------------------------------------- events


def test_a_task_or_event_too_large_for_one_item_is_refused_and_nothing_is_written(store: TaskStore) -> None:
    # Given a task, and an artifact-sized event that fits neither the head nor one event item
    record = create(store, ALICE, "t1")
    huge = "x" * (400 * 1024)
    big_task = record.task.model_copy(update={"metadata": {"blob": huge}})
    big_event = an_event(record.task, huge)

    # When a commit or a create would write them, then it is refused before anything is written
    with pytest.raises(ItemTooLarge):
        store.commit(replace(record, task=big_task), snapshot=True)
    with pytest.raises(ItemTooLarge):
        store.commit(record, [big_event])
    with pytest.raises(ItemTooLarge):
        store.create_task(
            TaskRecord(scope=ALICE, task=a_task("t2", metadata={"blob": huge})), [], key=SendKey.message("m2")
        )

    stored = store.get_task(ALICE, "t1")
    assert stored is not None
    assert (stored.version, stored.last_seq) == (record.version, record.last_seq)
    assert store.get_task(ALICE, "t2") is None
    assert store.find_key(ALICE, SendKey.message("m2")) is None
    # and a task just under the limit still fits
    just_fits = record.task.model_copy(update={"metadata": {"blob": "y" * (300 * 1024)}})
    store.commit(replace(record, task=just_fits), snapshot=True)


def test_read_events_after_a_seq_with_a_limit(store: TaskStore) -> None:
    create(store, ALICE, "t1", events=5)

    assert [e.seq for e in store.read_events(ALICE, "t1", after_seq=2, limit=2)] == [3, 4]
    assert [e.seq for e in store.read_events(ALICE, "t1", after_seq=3)] == [4, 5]
    assert store.read_events(ALICE, "t1", after_seq=5) == []
    assert store.read_events(ALICE, "t1", limit=0) == []
    assert store.read_events(ALICE, "missing") == []


# ---------------------------------------------------------------------- snapshot and log


def a_chunk(task: Task, n: int, text: str) -> StreamResponse:
    artifact = Artifact(artifact_id="answer", parts=[Part(text=text)])
    update = TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id, artifact=artifact, append=n > 0)
    return StreamResponse(artifact_update=update)


def a_status(task: Task, state: TaskState) -> StreamResponse:
    update = TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=TaskStatus(state=state))
    return StreamResponse(status_update=update)


def sent(store: TaskStore, task_id: str) -> TaskRecord:
    """A task as SendMessage creates it: its log starts with the Task."""
    task = a_task(task_id)
    return store.create_task(
        TaskRecord(scope=ALICE, task=task), [StreamResponse(task=task)], key=SendKey.message(f"m-{task_id}")
    )


def test_a_streamed_task_reads_back_exactly_after_every_commit(store: TaskStore) -> None:
    # Given a task streaming an answer in chunks, a few per commit, as a run does
    record = sent(store, "t1")
    record = logged(store, record, [a_status(record.task, WORKING)])
    text = ""
    for n in range(60):
        chunk = f"chunk {n:02d} " + "w" * 2000
        text += chunk
        record = logged(store, record, [a_chunk(record.task, n, chunk)])

        # Then every read, whether it folds many events or starts from a fresh snapshot, is exact
        got = store.get_task(ALICE, "t1")
        assert got is not None
        assert got.task == record.task
        assert "".join(p.text or "" for p in got.task.artifacts[0].parts) == text
        assert (got.version, got.last_seq, got.checkpoint) == (record.version, record.last_seq, record.checkpoint)

    # And the log grew past the snapshot often enough for checkpoints, but not on every commit
    assert 0 < record.checkpoint.seq < record.last_seq
    assert record.checkpoint.tail < record.checkpoint.size + 64 * 1024


def test_a_settled_task_is_checkpointed_and_reads_as_one_snapshot(store: TaskStore) -> None:
    record = sent(store, "t1")
    record = logged(store, record, [a_status(record.task, WORKING), a_chunk(record.task, 0, "hello")])
    assert record.checkpoint.seq == 0  # still running: the log is folded on read

    done = logged(store, record, [a_status(record.task, COMPLETED)])

    assert done.checkpoint.seq == done.last_seq == 4
    assert done.checkpoint.tail == 0
    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert got.task == done.task
    assert got.task.artifacts[0].parts[0].text == "hello"


def test_the_events_that_end_a_task_read_back_like_any_others(store: TaskStore) -> None:
    # Given a task whose run ends in one small commit, as a quick answer does
    record = sent(store, "t1")
    working, chunk = a_status(record.task, WORKING), a_chunk(record.task, 0, "hello")
    done = logged(store, record, [working, chunk, a_status(record.task, COMPLETED)])

    # Then every reader sees all four events, in order, from any point and in pages of any size
    events = store.read_events(ALICE, "t1")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.event for e in events[1:3]] == [working, chunk]
    assert [e.seq for e in store.read_events(ALICE, "t1", after_seq=2, limit=1)] == [3]
    assert [e.seq for e in store.read_events(ALICE, "t1", after_seq=3)] == [4]
    assert store.read_events(ALICE, "t1", after_seq=4) == []
    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert (got.task, got.last_seq, got.version) == (done.task, 4, done.version)
    assert store.list_tasks(ALICE, TaskQuery()).tasks == [done.task]


def test_a_snapshot_stores_the_task_as_given_whatever_the_events_say(store: TaskStore) -> None:
    # Given a task whose history is edited (a change no event expresses)
    record = sent(store, "t1")
    edited = change(record, history=[a_reply("r-1")], metadata={"turn": 2})

    store.commit(edited, snapshot=True)

    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert got.task == edited.task
    assert got.checkpoint.seq == got.last_seq == 1


def test_a_checkpoint_that_would_not_fit_one_item_is_skipped_and_the_task_still_reads(store: TaskStore) -> None:
    # Given a task whose answer grows past one item in chunks that each fit one
    record = sent(store, "t1")
    record = logged(store, record, [a_status(record.task, WORKING)])
    for n in range(3):
        record = logged(store, record, [a_chunk(record.task, n, str(n) * (200 * 1024))])

    # When it completes (a checkpoint is due, and the snapshot would be 600 KB)
    done = logged(store, record, [a_status(record.task, COMPLETED)])

    # Then the commit went through without it, and the task reads back whole
    assert done.state is COMPLETED
    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert got.task == done.task
    assert sum(len(p.text or "") for p in got.task.artifacts[0].parts) == 600 * 1024


def test_the_head_is_the_records_bookkeeping_without_the_task(store: TaskStore) -> None:
    record = sent(store, "t1")
    record = logged(store, replace(record, running_message_id="m-t1"), [a_status(record.task, WORKING)])

    head = store.get_head(ALICE, "t1")

    assert head == record.head
    assert (head.state, head.last_seq, head.running_message_id) == (WORKING, 2, "m-t1")
    assert store.get_head(ALICE, "missing") is None


def test_expired_runs_are_the_running_tasks_whose_lease_ended(store: TaskStore) -> None:
    # Given three running tasks with leases, one of another scope, and one task not running
    for task_id, scope, lease in [("a", ALICE, 100), ("b", ALICE, 300), ("c", BOB, 50), ("d", ALICE, 0)]:
        created = create(store, scope, task_id)
        store.commit(replace(created, running_message_id="m" if lease else "", lease_until=lease))

    # Then the sweeper finds those whose lease ended before now, oldest first, across scopes
    assert store.expired_runs(now=200) == [(BOB, "c"), (ALICE, "a")]
    assert store.expired_runs(now=200, limit=1) == [(BOB, "c")]
    assert store.expired_runs(now=50) == []

    # And a renewed or settled run is no longer one
    renewed = store.get_task(ALICE, "a")
    assert renewed is not None
    store.commit(replace(renewed, lease_until=500))
    settled = store.get_task(BOB, "c")
    assert settled is not None
    store.commit(replace(settled, running_message_id="", lease_until=0))
    assert store.expired_runs(now=400) == [(ALICE, "b")]


@pytest.mark.asyncio
async def test_a_stream_waiting_for_events_returns_when_there_are_some(store: TaskStore) -> None:
    # Given a task with one event
    record = sent(store, "t1")

    # When a stream waits for events after the first, then the wait ends by the time they exist
    # (the memory store wakes it; DynamoDB's waits are sleeps of at most the given time)
    patience = 30 if isinstance(store, MemoryTaskStore) else 0.2
    waiting = asyncio.ensure_future(store.wait_for_events(ALICE, "t1", 1, patience))
    await asyncio.sleep(0.05)
    await asyncio.to_thread(logged, store, record, [a_status(record.task, WORKING)])
    await asyncio.wait_for(waiting, 10)

    # And a wait for events that already exist returns at once
    await asyncio.wait_for(store.wait_for_events(ALICE, "t1", 1, patience), 5)


# ---------------------------------------------------------------------- list tasks


def test_tasks_are_listed_newest_first_with_task_id_breaking_ties(store: TaskStore) -> None:
    for task_id, seconds in [("a", 1), ("e", 0), ("c", 1), ("d", 2), ("b", 1)]:
        create(store, ALICE, task_id, at=T0 + timedelta(seconds=seconds))

    page = store.list_tasks(ALICE, TaskQuery())

    assert [t.id for t in page.tasks] == ["d", "c", "b", "a", "e"]
    assert (page.total_size, page.next_page_token) == (5, "")
    assert page.tasks[0] == a_task("d", at=T0 + timedelta(seconds=2))


def test_a_commit_moves_the_task_in_the_listing(store: TaskStore) -> None:
    older = create(store, ALICE, "older", at=T0)
    create(store, ALICE, "newer", at=T0 + timedelta(seconds=1))

    working = TaskStatusUpdateEvent(
        task_id="older", context_id="ctx-1", status=TaskStatus(state=WORKING, timestamp=T0 + timedelta(seconds=5))
    )
    logged(store, older, [StreamResponse(status_update=working)])

    assert ids(store, ALICE) == ["older", "newer"]
    assert ids(store, ALICE, TaskQuery(state=WORKING)) == ["older"]
    assert store.list_tasks(ALICE, TaskQuery(state=WORKING)).tasks[0].status == working.status


def test_a_task_without_a_status_timestamp_is_listed_by_creation_time(store: TaskStore) -> None:
    create(store, ALICE, "stamped", at=T0 + timedelta(seconds=5))
    create(store, ALICE, "unstamped", at=None, created_at=T0 + timedelta(seconds=9))
    create(store, ALICE, "early", at=None, created_at=T0)

    assert ids(store, ALICE) == ["unstamped", "stamped", "early"]


@pytest.mark.parametrize(("count", "page_size"), [(7, 3), (6, 3), (3, 5), (1, 1)])
def test_pages_cover_every_task_once(store: TaskStore, count: int, page_size: int) -> None:
    # Given tasks, two of them sharing a timestamp
    for n in range(count):
        create(store, ALICE, f"t{n}", at=T0 + timedelta(seconds=min(n, 4)))
    everything = ids(store, ALICE)

    # When they are read page by page
    walked = pages(store, ALICE, TaskQuery(page_size=page_size))

    # Then the pages are full but the last, and together they are the listing, without repeats
    assert [len(p) for p in walked] == [page_size] * (count // page_size) + (
        [count % page_size] if count % page_size else []
    )
    assert [task_id for p in walked for task_id in p] == everything
    assert len(everything) == count


def test_filters_narrow_the_listing_and_the_total(store: TaskStore) -> None:
    # Given tasks in two contexts and two states, a second apart
    layout = [
        ("a", "ctx-1", SUBMITTED),
        ("b", "ctx-2", WORKING),
        ("c", "ctx-1", WORKING),
        ("d", "ctx-1", SUBMITTED),
    ]
    for n, (task_id, context_id, state) in enumerate(layout):
        create(store, ALICE, task_id, context_id=context_id, state=state, at=T0 + timedelta(seconds=n))
    create(store, BOB, "x", context_id="ctx-1")

    # Then each filter (and their combination) selects exactly the matches, newest first
    assert ids(store, ALICE, TaskQuery(context_id="ctx-1")) == ["d", "c", "a"]
    assert ids(store, ALICE, TaskQuery(state=WORKING)) == ["c", "b"]
    assert ids(store, ALICE, TaskQuery(status_after=T0 + timedelta(seconds=1))) == [
        "d",
        "c",
        "b",
    ]  # inclusive
    assert ids(store, ALICE, TaskQuery(status_after=T0 + timedelta(milliseconds=1001))) == ["d", "c"]
    combined = TaskQuery(context_id="ctx-1", state=SUBMITTED, status_after=T0)
    assert ids(store, ALICE, combined) == ["d", "a"]
    assert ids(store, ALICE, TaskQuery(context_id="ctx-9")) == []

    # And total_size counts every match, not the page
    assert store.list_tasks(ALICE, TaskQuery(context_id="ctx-1", page_size=1)).total_size == 3
    assert store.list_tasks(ALICE, replace(combined, page_size=1)).total_size == 2


def test_a_sparse_filter_still_fills_pages(store: TaskStore) -> None:
    # Given twelve tasks of which every fourth is working
    for n in range(12):
        create(
            store,
            ALICE,
            f"t{n:02d}",
            state=WORKING if n % 4 == 0 else SUBMITTED,
            at=T0 + timedelta(seconds=n),
        )

    # When the working ones are paged two at a time
    walked = pages(store, ALICE, TaskQuery(state=WORKING, page_size=2))

    # Then the pages are full and the last one says so
    assert walked == [["t08", "t04"], ["t00"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param(
            TaskQuery(status_after=T0 + timedelta(seconds=1)), [["t5", "t4"], ["t3", "t2"], ["t1"]], id="status-after"
        ),
        pytest.param(TaskQuery(context_id="even"), [["t4", "t2"], ["t0"]], id="context"),
        pytest.param(
            TaskQuery(context_id="odd", status_after=T0 + timedelta(seconds=1)), [["t5", "t3"], ["t1"]], id="both"
        ),
    ],
)
def test_filtered_listings_page_like_unfiltered_ones(
    store: TaskStore, query: TaskQuery, expected: list[list[str]]
) -> None:
    # Given six tasks a second apart, alternating between two contexts
    for n in range(6):
        create(store, ALICE, f"t{n}", context_id="even" if n % 2 == 0 else "odd", at=T0 + timedelta(seconds=n))

    # When a filtered listing is paged two at a time, then every match comes once, newest first
    assert pages(store, ALICE, replace(query, page_size=2)) == expected


def _token(store: TaskStore, scope: Scope, query: TaskQuery) -> str:
    token = store.list_tasks(scope, query).next_page_token
    assert token
    return token


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("garbage", id="garbage"),
        pytest.param("!!!~~", id="not-base64"),
        pytest.param(base64.urlsafe_b64encode(b'{"p": 1}').decode(), id="wrong-shape"),
        pytest.param(base64.urlsafe_b64encode(b"[1, 2]").decode(), id="json-list"),
        pytest.param(base64.urlsafe_b64encode(b"\xff\xfe").decode(), id="not-utf8"),
    ],
)
def test_a_token_the_store_did_not_issue_is_rejected(store: TaskStore, token: str) -> None:
    create(store, ALICE, "t1")

    with pytest.raises(InvalidPageToken):
        store.list_tasks(ALICE, TaskQuery(page_token=token))


@pytest.mark.parametrize(
    ("scope", "query"),
    [
        pytest.param(BOB, TaskQuery(page_size=1), id="other-owner"),
        pytest.param(ALICE_ELSEWHERE, TaskQuery(page_size=1), id="other-tenant"),
        pytest.param(ALICE, TaskQuery(page_size=1, state=SUBMITTED), id="other-state"),
        pytest.param(ALICE, TaskQuery(page_size=1, context_id="ctx-1"), id="other-context"),
        pytest.param(ALICE, TaskQuery(page_size=1, status_after=T0), id="other-status-after"),
    ],
)
def test_a_token_is_bound_to_its_scope_and_filters(store: TaskStore, scope: Scope, query: TaskQuery) -> None:
    # Given a token Alice got for her unfiltered listing
    for n in range(3):
        create(store, ALICE, f"t{n}")
        if scope != ALICE:
            create(store, scope, f"t{n}", message_id=f"other-{n}")
    token = _token(store, ALICE, TaskQuery(page_size=1))

    # Then it is refused for another scope or other filters, and accepted where it was issued
    with pytest.raises(InvalidPageToken):
        store.list_tasks(scope, replace(query, page_token=token))
    assert ids(store, ALICE, TaskQuery(page_size=1, page_token=token)) == ["t1"]


def test_page_size_must_be_positive(store: TaskStore) -> None:
    with pytest.raises(ValueError, match="page_size"):
        store.list_tasks(ALICE, TaskQuery(page_size=0))


# ---------------------------------------------------------------------- push configs


def test_push_configs_are_created_replaced_read_and_deleted(store: TaskStore) -> None:
    # Given a stored config
    store.put_push_config(ALICE, a_config("p1"))

    # When it is replaced
    store.put_push_config(ALICE, a_config("p1", url="https://hooks.example/v2"))

    # Then reads see the replacement, and deleting twice is fine
    stored = store.get_push_config(ALICE, "t1", "p1")
    assert stored == a_config("p1", url="https://hooks.example/v2")
    assert store.get_push_config(ALICE, "t1", "p2") is None
    store.delete_push_config(ALICE, "t1", "p1")
    store.delete_push_config(ALICE, "t1", "p1")
    store.delete_push_config(ALICE, "t1", "never-existed")
    assert store.get_push_config(ALICE, "t1", "p1") is None
    assert store.list_push_configs(ALICE, "t1") == ([], "")


def test_push_configs_are_listed_by_id_in_pages(store: TaskStore) -> None:
    for config_id in ["c", "a", "e", "b", "d"]:
        store.put_push_config(ALICE, a_config(config_id))
    store.put_push_config(ALICE, a_config("z", task_id="t2"))

    walked: list[list[str]] = []
    token = ""
    while True:
        configs, token = store.list_push_configs(ALICE, "t1", page_size=2, page_token=token)
        walked.append([c.id for c in configs])
        if not token:
            break

    assert walked == [["a", "b"], ["c", "d"], ["e"]]
    assert [c.id for c in store.list_push_configs(ALICE, "t1", page_size=5)[0]] == ["a", "b", "c", "d", "e"]
    assert store.list_push_configs(ALICE, "t1", page_size=5)[1] == ""


def test_a_push_config_token_is_bound_to_its_task_and_scope(store: TaskStore) -> None:
    for config_id in ["a", "b"]:
        store.put_push_config(ALICE, a_config(config_id))
        store.put_push_config(ALICE, a_config(config_id, task_id="t2"))
        store.put_push_config(BOB, a_config(config_id))
    _, token = store.list_push_configs(ALICE, "t1", page_size=1)

    for scope, task_id, bad in [(ALICE, "t2", token), (BOB, "t1", token), (ALICE, "t1", "garbage")]:
        with pytest.raises(InvalidPageToken):
            store.list_push_configs(scope, task_id, page_size=1, page_token=bad)
    assert [c.id for c in store.list_push_configs(ALICE, "t1", page_size=1, page_token=token)[0]] == ["b"]


def _with_position(token: str, position: str) -> str:
    data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    return base64.urlsafe_b64encode(json.dumps({**data, "p": position}).encode()).decode()


@pytest.mark.parametrize("position", ["x" * 1025, "\u00e9" * 513, "#" * 5000])
def test_a_forged_token_with_an_over_long_position_is_rejected(store: TaskStore, position: str) -> None:
    # The fingerprint is not a secret: a caller can re-encode a token it got with any position.
    # A position longer than a DynamoDB sort key must be refused, not sent to DynamoDB.
    for config_id in ["a", "b"]:
        store.put_push_config(ALICE, a_config(config_id))
        create(store, ALICE, f"t-{config_id}")
    _, push_token = store.list_push_configs(ALICE, "t1", page_size=1)
    list_token = _token(store, ALICE, TaskQuery(page_size=1))

    with pytest.raises(InvalidPageToken):
        store.list_push_configs(ALICE, "t1", page_size=1, page_token=_with_position(push_token, position))
    with pytest.raises(InvalidPageToken):
        store.list_tasks(ALICE, TaskQuery(page_size=1, page_token=_with_position(list_token, position)))


def test_an_owner_of_any_length_has_a_scope_of_its_own(store: TaskStore) -> None:
    # Owners come from the authenticator, unbounded: an IAM ARN, a custom authorizer's principal.
    # Two long names that differ only at the end, beside a tenant and ids at their 256-byte limits,
    # must each work (no key over DynamoDB's limits) and stay apart.
    tenant, task_id = "\u00e9" * 128, "\u00fc" * 128
    long_alice = Scope(tenant, "arn:aws:sts::123456789012:assumed-role/" + "r" * 3000 + "/alice")
    long_bob = replace(long_alice, owner=long_alice.owner[:-5] + "bob")
    create(store, long_alice, task_id, context_id="\u00e7" * 128)
    store.put_push_config(long_alice, a_config("\u00e0" * 128, task_id=task_id))

    got = store.get_task(long_alice, task_id)
    assert got is not None
    assert got.scope == long_alice
    assert ids(store, long_alice) == [task_id]
    assert ids(store, long_alice, TaskQuery(context_id="\u00e7" * 128)) == [task_id]
    assert [c.id for c in store.list_push_configs(long_alice, task_id)[0]] == ["\u00e0" * 128]
    assert store.get_task(long_bob, task_id) is None
    assert ids(store, long_bob) == []
    assert store.list_push_configs(long_bob, task_id)[0] == []


def test_push_configs_are_scoped(store: TaskStore) -> None:
    store.put_push_config(ALICE, a_config("p1"))

    store.delete_push_config(BOB, "t1", "p1")

    assert store.get_push_config(BOB, "t1", "p1") is None
    assert store.get_push_config(ALICE_ELSEWHERE, "t1", "p1") is None
    assert store.list_push_configs(BOB, "t1") == ([], "")
    assert store.get_push_config(ALICE, "t1", "p1") is not None


def test_an_inline_config_receives_every_event_from_the_first(store: TaskStore) -> None:
    config = TaskPushNotificationConfig(id="p1", url="https://hooks.example/a2a")

    store.create_task(TaskRecord(scope=ALICE, task=a_task("t1")), [], key=SendKey.message("m1"), push_config=config)

    assert store.get_push_target(ALICE, "t1", "p1") == PushTarget(config.model_copy(update={"task_id": "t1"}), 0)


def test_a_new_config_starts_where_it_is_told_and_a_replaced_one_keeps_its_cursor(store: TaskStore) -> None:
    # Given a config created on a task that already logged 4 events
    store.put_push_config(ALICE, a_config("p1"), start_after_seq=4)
    assert store.get_push_target(ALICE, "t1", "p1") == PushTarget(a_config("p1"), 4)

    # When deliveries move its cursor, and the config is then replaced (with another start)
    assert store.advance_push_cursor(ALICE, "t1", "p1", 6)
    store.put_push_config(ALICE, a_config("p1", url="https://hooks.example/v2"), start_after_seq=9)

    # Then the replacement keeps the cursor: nothing is replayed or skipped
    assert store.get_push_target(ALICE, "t1", "p1") == PushTarget(a_config("p1", url="https://hooks.example/v2"), 6)


def test_a_config_keeps_the_protocol_version_that_shapes_its_notifications(store: TaskStore) -> None:
    # An inline config takes its task's version; a created one the version it was created with
    inline = TaskPushNotificationConfig(id="p1", url="https://hooks.example/a2a")
    record = TaskRecord(scope=ALICE, task=a_task("t1"), protocol_version="0.3")
    store.create_task(record, [], key=SendKey.message("m1"), push_config=inline)
    store.put_push_config(ALICE, a_config("p2"), protocol_version="0.3")
    store.put_push_config(ALICE, a_config("p3"))
    versions = {c: store.get_push_target(ALICE, "t1", c) for c in ("p1", "p2", "p3")}
    assert {c: t.protocol_version for c, t in versions.items() if t is not None} == {
        "p1": "0.3",
        "p2": "0.3",
        "p3": "1.0",
    }

    # Replacing a config with another version's request changes the shape, not the cursor
    assert store.advance_push_cursor(ALICE, "t1", "p2", 2)
    store.put_push_config(ALICE, a_config("p2"), protocol_version="1.0")
    assert store.get_push_target(ALICE, "t1", "p2") == PushTarget(a_config("p2"), 2, "1.0")


def test_a_push_cursor_only_moves_forward_and_only_for_a_live_config(store: TaskStore) -> None:
    store.put_push_config(ALICE, a_config("p1"))

    assert store.advance_push_cursor(ALICE, "t1", "p1", 3)
    assert not store.advance_push_cursor(ALICE, "t1", "p1", 3)
    assert not store.advance_push_cursor(ALICE, "t1", "p1", 2)
    assert not store.advance_push_cursor(BOB, "t1", "p1", 9)
    assert not store.advance_push_cursor(ALICE, "t1", "missing", 9)
    target = store.get_push_target(ALICE, "t1", "p1")
    assert target is not None
    assert target.delivered_seq == 3

    # A deleted config is not brought back by a late cursor move
    store.delete_push_config(ALICE, "t1", "p1")
    assert not store.advance_push_cursor(ALICE, "t1", "p1", 4)
    assert store.get_push_target(ALICE, "t1", "p1") is None
    assert store.get_push_config(ALICE, "t1", "p1") is None


def test_a_tried_mark_only_moves_forward_only_for_a_live_config_and_survives_a_replace(store: TaskStore) -> None:
    store.put_push_config(ALICE, a_config("p1"))

    assert store.mark_push_tried(ALICE, "t1", "p1", 3)
    assert not store.mark_push_tried(ALICE, "t1", "p1", 3)
    assert not store.mark_push_tried(ALICE, "t1", "p1", 2)
    assert not store.mark_push_tried(BOB, "t1", "p1", 9)
    assert not store.mark_push_tried(ALICE, "t1", "missing", 9)
    # It is a mark of its own: the cursor does not move with it, nor it with the cursor
    assert store.advance_push_cursor(ALICE, "t1", "p1", 1)
    assert store.get_push_target(ALICE, "t1", "p1") == PushTarget(a_config("p1"), 1, tried_seq=3)
    # Replacing the config keeps both marks
    store.put_push_config(ALICE, a_config("p1", url="https://hooks.example/v2"), start_after_seq=7)
    assert store.get_push_target(ALICE, "t1", "p1") == PushTarget(
        a_config("p1", url="https://hooks.example/v2"), 1, tried_seq=3
    )

    # A deleted config is not brought back by a late mark
    store.delete_push_config(ALICE, "t1", "p1")
    assert not store.mark_push_tried(ALICE, "t1", "p1", 4)
    assert store.get_push_target(ALICE, "t1", "p1") is None


def test_push_progress_is_each_configs_marks_in_the_callers_scope(store: TaskStore) -> None:
    # Given three configs of t1: one delivered to 4, one that failed on 3 (delivered to 2), one new
    for config_id in ("delivered", "failing", "new"):
        store.put_push_config(ALICE, a_config(config_id))
    store.advance_push_cursor(ALICE, "t1", "delivered", 4)
    store.advance_push_cursor(ALICE, "t1", "failing", 2)
    store.mark_push_tried(ALICE, "t1", "failing", 3)
    # and configs elsewhere: another task, another owner, another tenant
    store.put_push_config(ALICE, a_config("other-task", task_id="t2"))
    store.put_push_config(BOB, a_config("bobs"))
    store.put_push_config(ALICE_ELSEWHERE, a_config("elsewhere"))

    # Then the progress names t1's configs alone, each with its marks
    assert store.push_progress(ALICE, "t1") == {
        "delivered": PushProgress(4, 0),
        "failing": PushProgress(2, 3),
        "new": PushProgress(0, 0),
    }
    assert store.push_progress(BOB, "t1") == {"bobs": PushProgress(0, 0)}
    assert store.push_progress(ALICE, "t3") == {}

    # and a deleted config drops out
    store.delete_push_config(ALICE, "t1", "new")
    assert set(store.push_progress(ALICE, "t1")) == {"delivered", "failing"}


def test_concurrent_cursor_moves_keep_the_highest(store: TaskStore) -> None:
    store.put_push_config(ALICE, a_config("p1"))
    barrier = threading.Barrier(8)

    def move(seq: int) -> bool:
        barrier.wait()
        return store.advance_push_cursor(ALICE, "t1", "p1", seq)

    with ThreadPoolExecutor(8) as pool:
        moved = list(pool.map(move, [5, 1, 8, 3, 8, 2, 7, 4]))

    target = store.get_push_target(ALICE, "t1", "p1")
    assert target is not None
    assert target.delivered_seq == 8
    assert any(moved)


def test_a_push_config_needs_both_ids(store: TaskStore) -> None:
    with pytest.raises(ValueError, match="id"):
        store.put_push_config(ALICE, TaskPushNotificationConfig(task_id="t1", url="https://hooks.example"))
    with pytest.raises(ValueError, match="id"):
        store.put_push_config(ALICE, TaskPushNotificationConfig(id="p1", url="https://hooks.example"))


# ---------------------------------------------------------------------- keys


@pytest.mark.parametrize(
    ("one", "other"),
    [
        pytest.param(Scope("a#b", "c"), Scope("a", "b#c"), id="hash-moves-between-tenant-and-owner"),
        pytest.param(Scope("t", "%23"), Scope("t", "#"), id="escaped-looking-owner"),
        pytest.param(Scope("", "a#b"), Scope("a", "b"), id="empty-tenant"),
        pytest.param(Scope("t/x", "ü"), Scope("t", "x/ü"), id="slash-and-unicode"),
    ],
)
def test_special_characters_cannot_merge_two_scopes(store: TaskStore, one: Scope, other: Scope) -> None:
    # Given the same task, message and config ids in two scopes a naive key join would confuse
    for scope in (one, other):
        create(
            store,
            scope,
            "task#1/é",
            message_id="m#1",
            events=1,
            context_id="ctx#1",
            metadata={"owner": scope.owner},
        )
        store.put_push_config(scope, a_config("p#1", task_id="task#1/é", url=f"https://hooks.example/{scope.owner}"))

    # Then each scope sees exactly its own
    for scope in (one, other):
        got = store.get_task(scope, "task#1/é")
        assert got is not None
        assert got.task.metadata == {"owner": scope.owner}
        assert [t.metadata for t in store.list_tasks(scope, TaskQuery(context_id="ctx#1")).tasks] == [
            {"owner": scope.owner}
        ]
        assert [e.seq for e in store.read_events(scope, "task#1/é")] == [1]
        config = store.get_push_config(scope, "task#1/é", "p#1")
        assert config is not None
        assert config.url == f"https://hooks.example/{scope.owner}"


def test_ids_with_special_characters_round_trip(store: TaskStore) -> None:
    task_id, context_id, message_id = "t#1/ü 😀", "c#/ä", "m#/ö"
    created = create(store, ALICE, task_id, context_id=context_id, message_id=message_id)
    create(store, ALICE, "t#1", context_id="c#")
    store.put_push_config(ALICE, a_config("p#/ß", task_id=task_id))

    logged(store, created, [an_event(created.task, "next")])

    assert store.find_key(ALICE, SendKey.message(message_id)) == AcceptedMessage(task_id)
    assert ids(store, ALICE, TaskQuery(context_id=context_id)) == [task_id]
    assert [e.seq for e in store.read_events(ALICE, task_id)] == [1, 2]
    assert [c.id for c in store.list_push_configs(ALICE, task_id)[0]] == ["p#/ß"]
    assert store.list_push_configs(ALICE, "t#1") == ([], "")


# ---------------------------------------------------------------------- DynamoDB item layout
# What the stream consumer and TTL rely on: not part of the port, so only the DynamoDB adapter.


def _items(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.scan(TableName=table)["Items"]
    return sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def test_dynamodb_items_are_scoped_and_expire_with_the_task(dynamodb_table: tuple[Any, str]) -> None:
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client, ttl_days=7, clock=lambda: T0)
    task = a_task("t#1")

    store.create_task(
        TaskRecord(scope=Scope("acme", "al#ice"), task=task), [an_event(task, "e1")], key=SendKey.message("m1")
    )

    by_sk = {(i["pk"]["S"], i["sk"]["S"]): i for i in _items(client, table)}
    head = by_sk[("TASK#acme#al%23ice#t%231", "META")]
    log = by_sk[("TASK#acme#al%23ice#t%231", "EVT#000000000001")]
    snapshot = by_sk[("TASK#acme#al%23ice#t%231", "META#SNAP")]
    message = by_sk[("MSG#acme#al%23ice#m1", "MSG")]
    expiry = str(int((T0 + timedelta(days=7)).timestamp()))
    assert {head["ttl"]["N"], log["ttl"]["N"], snapshot["ttl"]["N"], message["ttl"]["N"]} == {expiry}
    assert (head["state"]["S"], head["version"]["N"], head["lastSeq"]["N"]) == ("TASK_STATE_SUBMITTED", "1", "1")
    assert head["gsi1pk"]["S"] == "SCOPE#acme#al%23ice"
    assert head["gsi1sk"]["S"] == head["gsi2sk"]["S"] == "2025-01-01T00:00:00.000Z#t#1"
    # the head holds no task content: it stays the same size whatever the task grows to
    assert "task" not in head
    assert Task.model_validate_json(snapshot["task"]["S"]) == task
    assert snapshot["seq"]["N"] == "1"
    assert (log["seq"]["N"], log["first"]["N"], log["taskId"]["S"], log["owner"]["S"]) == ("1", "1", "t#1", "al#ice")
    assert json.loads(log["events"]["S"]) == [an_event(task, "e1").to_wire()]


def test_dynamodb_send_keys_are_scoped_and_expire_with_their_task(dynamodb_table: tuple[Any, str]) -> None:
    # Given a task created under an Idempotency-Key, and a turn of it under a reused messageId
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client, ttl_days=7, clock=lambda: T0 + timedelta(days=3))
    scope = Scope("acme", "al#ice")
    record = TaskRecord(scope=scope, task=a_task("t1"), created_at=T0)
    created = store.create_task(record, [], key=SendKey.header("k#1/é", "f1"))
    store.commit(replace(created, pending_message_id="m1"), key=SendKey.message("m1", "f2").reused())

    # Then both keys live in the scope, hold the task and the fingerprint, and expire when it does
    by_sk = {(i["pk"]["S"], i["sk"]["S"]): i for i in _items(client, table)}
    header = by_sk[("IDEM#acme#al%23ice#k%231%2F%C3%A9", "IDEM")]
    reused = by_sk[("MSG#acme#al%23ice#m1", "MSG#f2")]
    head = by_sk[("TASK#acme#al%23ice#t1", "META")]
    expiry = str(int((T0 + timedelta(days=7)).timestamp()))
    assert {header["ttl"]["N"], reused["ttl"]["N"], head["ttl"]["N"]} == {expiry}
    assert [(k["taskId"]["S"], k["fp"]["S"]) for k in (header, reused)] == [("t1", "f1"), ("t1", "f2")]


def test_dynamodb_log_items_hold_a_commits_events_and_large_payloads_are_compressed(
    dynamodb_table: tuple[Any, str],
) -> None:
    # Given a task created by SendMessage (its log starts with the Task: no snapshot needed yet)
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    task = a_task("t1")
    record = store.create_task(
        TaskRecord(scope=ALICE, task=task), [StreamResponse(task=task)], key=SendKey.message("m1")
    )

    # When one commit logs 40 events
    events = [an_event(task, f"chunk {n} " + "x" * 100) for n in range(40)]
    logged(store, record, events)

    # Then they share one log item, keyed by the last, compressed; and each reads back on its own
    items = {i["sk"]["S"]: i for i in _items(client, table) if i["sk"]["S"].startswith("EVT#")}
    assert sorted(items) == ["EVT#000000000001", "EVT#000000000041"]
    batch = items["EVT#000000000041"]
    assert (batch["first"]["N"], batch["seq"]["N"]) == ("2", "41")
    assert "eventsZ" in batch
    assert len(bytes(batch["eventsZ"]["B"])) < sum(len(e.to_json()) for e in events) / 4
    assert "META#SNAP" not in {i["sk"]["S"] for i in _items(client, table)}
    assert [e.seq for e in store.read_events(ALICE, "t1", after_seq=20, limit=3)] == [21, 22, 23]
    assert store.read_events(ALICE, "t1", after_seq=40)[0].event == events[-1]


def test_dynamodb_a_create_is_its_key_its_log_and_its_head_and_a_duplicate_one_failed_put(
    dynamodb_table: tuple[Any, str],
) -> None:
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    calls = _Calls(client)

    sent(store, "t1")

    # Three conditional puts, the head last: no transaction
    assert calls.names == ["PutItem", "PutItem", "PutItem"]
    assert [i["sk"]["S"] for i in _items(client, table)] == ["MSG", "EVT#000000000001", "META"]
    # A re-send of its message is refused at the key, which was the only write tried
    calls.names.clear()
    with pytest.raises(DuplicateMessage) as duplicate:
        store.create_task(TaskRecord(scope=ALICE, task=a_task("t2")), [], key=SendKey.message("m-t1"))
    assert duplicate.value.task_id == "t1"
    assert calls.names == ["PutItem"]
    assert len(_items(client, table)) == 3


def _before_head_put(store: DynamoDBTaskStore, monkeypatch: pytest.MonkeyPatch, task_id: str, action: Any) -> None:
    """Run ``action`` once, when the create of ``task_id`` is about to put its head (it has written
    its key and its log): what happens to a create between the two."""
    write = store._table.write

    def intercepted(puts: Any) -> None:
        item = puts[0]["Item"]
        if item["sk"]["S"] == "META" and item["pk"]["S"].endswith(f"#{task_id}"):
            monkeypatch.setattr(store._table, "write", write)
            action()
        write(puts)

    monkeypatch.setattr(store._table, "write", intercepted)


def test_dynamodb_a_create_that_fails_after_its_key_takes_back_what_it_wrote(
    dynamodb_table: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the head's put failing (throttled past botocore's retries) after the key and the log
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    error = ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "PutItem")

    def throttled() -> None:
        raise error

    _before_head_put(store, monkeypatch, "t1", throttled)
    with pytest.raises(ClientError):
        sent(store, "t1")

    # Then nothing of it is left, so the client's retry is a first send again
    assert _items(client, table) == []
    assert sent(store, "t1").version == 1


def test_dynamodb_a_create_abandoned_before_its_head_is_a_duplicate_of_what_replaced_it(
    dynamodb_table: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a create that another request abandons between its log item and its head (it waited
    # long enough: the create was taken for dead), and that takes the key over for a task of its own
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)

    def overtaken() -> None:
        assert store.abandon_create(ALICE, "t1") is True
        task = a_task("t2")
        store.create_task(
            TaskRecord(scope=ALICE, task=task),
            [StreamResponse(task=task)],
            key=SendKey.message("m-t1").taking_over("t1"),
        )

    _before_head_put(store, monkeypatch, "t1", overtaken)
    with pytest.raises(DuplicateMessage) as duplicate:
        sent(store, "t1")

    # Then it is told of the task that replaced it, and nothing of its own is readable or left
    assert duplicate.value.task_id == "t2"
    assert store.get_task(ALICE, "t1") is None
    assert store.read_events(ALICE, "t1") == []
    left = [(i["pk"]["S"], i["sk"]["S"]) for i in _items(client, table) if i["pk"]["S"].endswith("#t1")]
    assert left == [("TASK#acme#alice#t1", "META")]  # the stand-in that keeps its head from being written
    assert [t.id for t in store.list_tasks(ALICE, TaskQuery()).tasks] == ["t2"]


def test_dynamodb_log_items_without_a_head_are_never_read(dynamodb_table: tuple[Any, str]) -> None:
    # Given the log item of a create that died before its head
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    task = a_task("t1")
    store._table.write(store._log_puts(ALICE, "t1", 1, [StreamResponse(task=task).to_json()], T0, None))

    # Then no reader returns it
    assert store.read_events(ALICE, "t1") == []
    assert store.get_task(ALICE, "t1") is None
    # nor events a commit wrote past the head's last seq
    record = sent(store, "t2")
    store._table.write(store._log_puts(ALICE, "t2", 2, [an_event(task, "orphan").to_json()], T0, None))
    assert [e.seq for e in store.read_events(ALICE, "t2")] == [1]
    assert store.get_task(ALICE, "t2") == record


class _Calls:
    """The DynamoDB operations a client makes, by name (botocore's before-call event)."""

    def __init__(self, client: Any) -> None:
        self.names: list[str] = []
        client.meta.events.register("before-call.dynamodb.*", self._record)

    def _record(self, model: Any, **_: Any) -> None:
        self.names.append(model.name)


def test_dynamodb_a_small_commit_that_ends_a_task_is_one_put_of_the_head_holding_its_events(
    dynamodb_table: tuple[Any, str],
) -> None:
    # Given a task created by SendMessage, answered by one small commit that ends it
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    record = sent(store, "t1")
    calls = _Calls(client)
    events = [a_status(record.task, WORKING), a_chunk(record.task, 0, "hi"), a_status(record.task, COMPLETED)]
    done = logged(store, record, events)

    # Then the commit is the head's conditional put alone: no transaction, no log item, no snapshot
    # item (the head holds the events and the snapshot of the small task they ended)
    assert calls.names == ["PutItem"]
    items = {i["sk"]["S"]: i for i in _items(client, table) if i["pk"]["S"] == "TASK#acme#alice#t1"}
    assert sorted(items) == ["EVT#000000000001", "META"]
    head = items["META"]
    assert (head["heldFirst"]["N"], head["lastSeq"]["N"], head["state"]["S"]) == ("2", "4", "TASK_STATE_COMPLETED")
    assert len(json.loads(head["held"]["S"])) == 3
    assert (Task.model_validate_json(head["task"]["S"]), head["snapSeq"]["N"]) == (done.task, "4")
    assert done.checkpoint.held_first == 2
    # and a read of the finished task is one Query, a listing one BatchGetItem of heads
    calls.names.clear()
    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert (got.task, got.checkpoint) == (done.task, done.checkpoint)
    assert calls.names == ["Query"]
    calls.names.clear()
    assert store.list_tasks(ALICE, TaskQuery()).tasks == [done.task]
    assert calls.names == ["Query", "BatchGetItem"]


def test_dynamodb_a_large_final_commit_is_logged_in_the_transaction(dynamodb_table: tuple[Any, str]) -> None:
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    record = sent(store, "t1")
    calls = _Calls(client)

    logged(store, record, [a_chunk(record.task, 0, "x" * 4000), a_status(record.task, COMPLETED)])

    assert calls.names == ["TransactWriteItems", "PutItem"]  # head and log item; then the snapshot
    items = {i["sk"]["S"]: i for i in _items(client, table) if i["pk"]["S"] == "TASK#acme#alice#t1"}
    assert "EVT#000000000003" in items
    assert "heldFirst" not in items["META"]
    assert [e.seq for e in store.read_events(ALICE, "t1")] == [1, 2, 3]


def test_dynamodb_the_events_a_head_holds_go_to_the_log_before_more_are_appended(
    dynamodb_table: tuple[Any, str],
) -> None:
    # Given a head holding the events that ended its task
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    record = sent(store, "t1")
    done = logged(store, record, [a_status(record.task, WORKING), a_status(record.task, COMPLETED)])
    assert done.checkpoint.held

    # When a head-only write keeps them, and a commit then appends an event (the lifecycle refuses
    # events after a final state, and reads would; the store itself never drops what it holds)
    kept = store.commit(done)
    assert kept.checkpoint.held == done.checkpoint.held
    store.commit(kept, [an_event(done.task, "after", COMPLETED)])

    # Then they were moved to a log item in that commit, and every event is still there, once, in order
    items = {i["sk"]["S"]: i for i in _items(client, table) if i["pk"]["S"] == "TASK#acme#alice#t1"}
    assert (items["EVT#000000000003"]["first"]["N"], items["EVT#000000000003"]["seq"]["N"]) == ("2", "3")
    assert "heldFirst" not in items["META"]
    events = store.read_events(ALICE, "t1")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.event.status_update.status.state for e in events[1:3] if e.event.status_update] == [WORKING, COMPLETED]


def _answered_at_length(store: DynamoDBTaskStore) -> tuple[TaskRecord, TaskRecord]:
    """A task whose final commit is too large for its head: logged in a transaction, its snapshot
    put after it."""
    record = sent(store, "t1")
    return record, logged(store, record, [a_chunk(record.task, 0, "x" * 4000), a_status(record.task, COMPLETED)])


def test_dynamodb_a_checkpoint_written_after_its_commit_never_replaces_a_newer_one(
    dynamodb_table: tuple[Any, str],
) -> None:
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    record, _ = _answered_at_length(store)
    stored = {i["sk"]["S"]: i for i in _items(client, table) if i["pk"]["S"] == "TASK#acme#alice#t1"}["META#SNAP"]
    assert stored["seq"]["N"] == "3"

    # A checkpoint of an earlier point that arrives late (its writer was slow) is not written
    older = {**stored, "seq": {"N": "2"}, "task": {"S": record.task.to_json()}}
    older.pop("taskZ", None)
    assert store._table.put_checkpoint(older) is False
    assert store._table.put_checkpoint({**stored, "seq": {"N": "3"}}) is False
    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert got.task.status.state == COMPLETED


def test_dynamodb_a_commit_stands_when_its_checkpoint_cannot_be_written(
    dynamodb_table: tuple[Any, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given the snapshot's put failing after the commit landed (throttled past botocore's retries)
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client)
    error = ClientError(
        {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}}, "PutItem"
    )
    monkeypatch.setattr(store._table, "put_checkpoint", lambda item: (_ for _ in ()).throw(error))

    _, done = _answered_at_length(store)

    # Then the commit is not reported failed, it says why in a warning, and reads fold the log
    assert done.last_seq == 3
    assert "could not write a task's snapshot" in caplog.text
    assert "META#SNAP" not in {i["sk"]["S"] for i in _items(client, table)}
    got = store.get_task(ALICE, "t1")
    assert got is not None
    assert got.task == done.task
    assert store.list_tasks(ALICE, TaskQuery()).tasks == [done.task]


def test_dynamodb_items_never_expire_with_ttl_days_zero(dynamodb_table: tuple[Any, str]) -> None:
    client, table = dynamodb_table
    store = DynamoDBTaskStore(table, client=client, ttl_days=0)

    record = create(store, ALICE, "t1", events=1)
    logged(store, record, [an_event(record.task, "e2")])
    store.put_push_config(ALICE, a_config("p1"))

    assert [i for i in _items(client, table) if "ttl" in i] == []


def test_the_memory_store_wakes_a_waiter_when_its_task_is_written() -> None:
    # Blocking SendMessage and CancelTask wait for the task in between reads; in memory the wait
    # ends when the task is written, not at the next poll (DynamoDB's just sleeps: no test here).
    store = MemoryTaskStore()
    first, other = create(store, ALICE, "t1"), create(store, ALICE, "t2")
    woken = {task_id: threading.Event() for task_id in ("t1", "t2")}

    def wait(record: TaskRecord) -> None:
        store.wait_for_change(ALICE, record.task_id, record.version, timeout=30)
        woken[record.task_id].set()

    waiters = [threading.Thread(target=wait, args=(r,), daemon=True) for r in (first, other)]
    for waiter in waiters:
        waiter.start()
    assert not woken["t1"].wait(0.2), "returned with nothing written"

    logged(store, first, [an_event(first.task, "e2")])

    assert woken["t1"].wait(10)
    assert not woken["t2"].wait(0.2), "a write to another task woke it"
    store.commit(other)
    assert woken["t2"].wait(10)
    # A version already behind returns at once.
    store.wait_for_change(ALICE, "t1", first.version, timeout=30)
