"""Large parts through the store, on every implementation: a part of ``threshold`` bytes or more
(or a message/artifact whose parts add up to more than ``CONTAINER_BYTES``) is stored as an object
and the task keeps a pointer; reading the task back and presenting it gives the part byte-exact,
inline or as a URL. The object store is memory, or S3 in moto beside DynamoDB in moto."""

from __future__ import annotations

import base64
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest

from a2a_serverless.adapters import DynamoDBTaskStore, MemoryBlobStore, MemoryTaskStore, S3BlobStore
from a2a_serverless.blobs import CONTAINER_BYTES, REF_SCHEME, PartOffloader, PartPresenter, blob_key
from a2a_serverless.errors import ContentUnavailableError
from a2a_serverless.lifecycle import apply_event
from a2a_serverless.models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_serverless.ports import BlobError, BlobStore, Scope, SendKey, TaskRecord, TaskStore
from a2a_serverless_dev.moto_fixes import fast_transactions, partition_queries
from a2a_serverless_dev.resources import create_resources, load_template
from testkit.aws import REGION, SerializedClient, moto_clients

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
THRESHOLD = 32 * 1024
FILE = os.urandom(5 * 1024 * 1024 + 7)
TEXT = "".join(f"line {i}: the quick brown fox jumps over the lazy dog é\n" for i in range(11_000))  # ~600 KB
DATA = {"rows": [{"i": i, "v": "x" * 20} for i in range(2_000)]}  # ~60 KB of JSON


class CountingBlobs:
    """A BlobStore that counts puts and can be made to fail (an S3 outage)."""

    def __init__(self, inner: BlobStore) -> None:
        self.inner = inner
        self.puts: list[str] = []
        self.down = False
        self.put_fails_after: int | None = None

    def put(self, key: str, data: bytes, media_type: str) -> None:
        if self.down or (self.put_fails_after is not None and len(self.puts) >= self.put_fails_after):
            raise BlobError("S3 is down")
        self.puts.append(key)
        self.inner.put(key, data, media_type)

    def get(self, key: str) -> bytes:
        if self.down:
            raise BlobError("S3 is down")
        return self.inner.get(key)

    def url(self, key: str, *, filename: str, media_type: str, expires_seconds: int) -> str | None:
        return self.inner.url(key, filename=filename, media_type=media_type, expires_seconds=expires_seconds)


@dataclass
class World:
    store: TaskStore
    blobs: CountingBlobs
    parts: PartPresenter
    gives_urls: bool


_prefixes = itertools.count()


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[Any, Any, Any]]:
    with moto_clients() as (dynamodb, sqs):
        yield dynamodb, sqs, boto3.client("s3", region_name=REGION)


@pytest.fixture(params=["memory", "dynamodb", "dynamodb-devstack"])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    if request.param == "memory":
        blobs = CountingBlobs(MemoryBlobStore())
        yield World(MemoryTaskStore(offloader=PartOffloader(blobs, THRESHOLD)), blobs, PartPresenter(blobs, 900), False)
        return
    dynamodb, sqs, s3 = request.getfixturevalue("aws")
    name = f"large-{next(_prefixes)}"
    table = create_resources(dynamodb, sqs, prefix=name, template=load_template()).tables["TasksTable"]
    s3.create_bucket(Bucket=name)
    blobs = CountingBlobs(S3BlobStore(name))  # its own client, as deployed (moto intercepts it)
    store = DynamoDBTaskStore(table, client=SerializedClient(dynamodb), offloader=PartOffloader(blobs, THRESHOLD))
    if request.param == "dynamodb":
        yield World(store, blobs, PartPresenter(blobs, 900), True)
    else:
        with fast_transactions(), partition_queries():
            yield World(store, blobs, PartPresenter(blobs, 900), True)
    dynamodb.delete_table(TableName=table)


def user_message(*parts: Part, message_id: str = "m1") -> Message:
    return Message(message_id=message_id, role=Role.ROLE_USER, parts=list(parts), task_id="t1", context_id="c1")


def created(world: World, message: Message, scope: Scope = ALICE) -> TaskRecord:
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=[message])
    return world.store.create_task(
        TaskRecord(scope=scope, task=task), [StreamResponse(task=task)], key=SendKey.message(message.message_id)
    )


def is_ref(part: Part) -> bool:
    return part.url is not None and part.url.startswith(REF_SCHEME)


def test_big_parts_of_a_new_task_are_stored_aside_and_read_back_exactly(world: World) -> None:
    # Given a user message with a 5 MB file, a 600 KB text, 60 KB of data and a small text
    message = user_message(
        Part(raw=FILE, filename="report.pdf", media_type="application/pdf", metadata={"k": "v"}),
        Part(text=TEXT),
        Part(data=DATA),
        Part(text="small"),
    )

    # When the task is created and read back
    created(world, message)
    record = world.store.get_task(ALICE, "t1")
    assert record is not None

    # Then the task holds pointers for the three big parts (their file name, type and metadata
    # kept), the small one inline, and each big part is one object of the task's
    stored = record.task.history[0].parts
    assert [is_ref(p) for p in stored] == [True, True, True, False]
    assert (stored[0].filename, stored[0].media_type) == ("report.pdf", "application/pdf")
    assert stored[0].metadata == {"k": "v"}
    assert len(set(world.blobs.puts)) == 3
    assert all(key.startswith(blob_key(ALICE, "t1", "")) for key in world.blobs.puts)
    # and presented without a budget (the executor's view) every part is as sent
    shown = world.parts.present(record.task, ALICE, "t1", None)
    assert shown.history[0] == message


def test_events_with_big_parts_are_stored_aside_and_presented_within_the_budget(world: World) -> None:
    # Given a task, and a run's events: a 600 KB text artifact and a 5 MB file artifact
    record = created(world, user_message(Part(text="go")))
    text = Artifact(artifact_id="a-text", parts=[Part(text=TEXT)])
    file = Artifact(artifact_id="a-file", parts=[Part(raw=FILE, filename="out.bin", media_type="image/png")])
    events = [
        StreamResponse(artifact_update=TaskArtifactUpdateEvent(task_id="t1", context_id="c1", artifact=a))
        for a in (text, file)
    ]
    done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
    events.append(StreamResponse(status_update=TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=done)))
    task = record.task.model_copy(update={"artifacts": [text, file], "status": done})

    # When they are committed
    world.store.commit(TaskRecord.of(record.head, task, record.checkpoint), events)

    # Then the log and the task hold pointers, never the content
    logged = world.store.read_events(ALICE, "t1", after_seq=1)
    updates = [e.event.artifact_update for e in logged if e.event.artifact_update is not None]
    assert [is_ref(update.artifact.parts[0]) for update in updates] == [True, True]
    stored = world.store.get_task(ALICE, "t1")
    assert stored is not None
    assert all(is_ref(a.parts[0]) for a in stored.task.artifacts)
    # and a response with a 4 MB budget carries the text inline and the file as a URL (a store
    # without URLs, the memory one, sends everything inline)
    shown = world.parts.present(stored.task, ALICE, "t1", 4 * 1024 * 1024)
    assert shown.artifacts[0].parts[0].text == TEXT
    part = shown.artifacts[1].parts[0]
    if world.gives_urls:
        assert part.raw is None
        assert part.url is not None
        assert part.url.startswith("http")
        assert (part.filename, part.media_type) == ("out.bin", "image/png")
        query = parse_qs(urlsplit(part.url).query)
        assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]  # SigV4: S3 refuses SigV2 on new buckets
        assert query["X-Amz-Expires"] == ["900"]
        assert query["response-content-type"] == ["image/png"]
        assert "out.bin" in query["response-content-disposition"][0]
    else:
        assert part.raw == FILE
    # and with no budget at all, both come as sent
    whole = world.parts.present(stored.task, ALICE, "t1", None)
    assert whole.artifacts == [text, file]


def test_many_small_parts_are_kept_inline_up_to_the_container_bound(world: World) -> None:
    # Given a message of 100 parts of 5 KB (500 KB, each under the threshold)
    parts = [Part(text=f"{i:03d}" + "y" * (5 * 1024 - 3)) for i in range(100)]
    message = user_message(*parts)

    # When it is stored
    created(world, message)
    record = world.store.get_task(ALICE, "t1")
    assert record is not None

    # Then at most CONTAINER_BYTES of it stayed inline, the rest went aside, order kept
    stored = record.task.history[0].parts
    inline = sum(len((p.text or "").encode()) for p in stored if not is_ref(p))
    assert 0 < inline <= CONTAINER_BYTES
    assert sum(is_ref(p) for p in stored) >= 70
    assert world.parts.present(record.task, ALICE, "t1", None).history[0] == message


def test_a_snapshot_that_repeats_a_part_does_not_upload_it_again(world: World) -> None:
    # Given a task whose message has a big part
    record = created(world, user_message(Part(raw=FILE)))
    assert len(world.blobs.puts) == 1
    # When commits write snapshots of it again (each one asked for)
    for _ in range(3):
        record = world.store.commit(record, [], snapshot=True)
    # Then the object was stored once
    assert len(world.blobs.puts) == 1


def test_another_scope_cannot_read_a_tasks_objects(world: World) -> None:
    # Given alice's task with a stored part
    created(world, user_message(Part(raw=FILE)))
    record = world.store.get_task(ALICE, "t1")
    assert record is not None
    # When its pointer is presented in bob's scope (as if his task held it)
    # Then nothing is found there: objects are keyed by scope and task, not by the pointer
    with pytest.raises(ContentUnavailableError):
        world.parts.present(record.task, BOB, "t1", None)


def test_an_object_store_outage_on_write_writes_nothing(world: World) -> None:
    # Given an object store that fails on the second object of a message
    world.blobs.put_fails_after = 1
    message = user_message(Part(raw=FILE), Part(text=TEXT))
    # When the task is created, it fails, and neither the task nor its message id was stored
    with pytest.raises(BlobError):
        created(world, message)
    assert world.store.get_task(ALICE, "t1") is None
    assert world.store.find_key(ALICE, SendKey.message("m1")) is None
    # and once the store is back, the same create succeeds
    world.blobs.put_fails_after = None
    created(world, message)
    record = world.store.get_task(ALICE, "t1")
    assert record is not None
    assert world.parts.present(record.task, ALICE, "t1", None).history[0] == message


def test_an_object_store_outage_on_read_is_a_clear_retryable_error(world: World) -> None:
    created(world, user_message(Part(raw=FILE)))
    record = world.store.get_task(ALICE, "t1")
    assert record is not None
    world.blobs.down = True
    with pytest.raises(ContentUnavailableError) as raised:
        world.parts.present(record.task, ALICE, "t1", None)
    assert raised.value.http_status == 503
    world.blobs.down = False
    assert world.parts.present(record.task, ALICE, "t1", None).history[0].parts[0].raw == FILE


def test_an_object_that_does_not_hold_what_the_pointer_says_is_refused() -> None:
    blobs = MemoryBlobStore()
    store = MemoryTaskStore(offloader=PartOffloader(blobs, THRESHOLD))
    world = World(store, CountingBlobs(blobs), PartPresenter(blobs, 900), False)
    created(world, user_message(Part(raw=FILE)))
    (key,) = blobs.keys()
    blobs.put(key, b"tampered", "application/octet-stream")
    record = store.get_task(ALICE, "t1")
    assert record is not None
    with pytest.raises(ContentUnavailableError):
        world.parts.present(record.task, ALICE, "t1", None)


def test_a_raw_part_counts_as_base64_against_the_budget() -> None:
    # 3 MB of bytes is 4 MB of base64: a 3.9 MB budget cannot carry it inline

    class Signing(MemoryBlobStore):
        def url(self, key: str, *, filename: str, media_type: str, expires_seconds: int) -> str | None:
            return f"https://objects.example/{key}"

    signing = Signing()
    store = MemoryTaskStore(offloader=PartOffloader(signing, THRESHOLD))
    world = World(store, CountingBlobs(signing), PartPresenter(signing, 900), True)
    data = os.urandom(3 * 1024 * 1024)
    created(world, user_message(Part(raw=data)))
    record = store.get_task(ALICE, "t1")
    assert record is not None
    assert world.parts.present(record.task, ALICE, "t1", 3_900_000).history[0].parts[0].url is not None
    shown = world.parts.present(record.task, ALICE, "t1", len(base64.b64encode(data)))
    assert shown.history[0].parts[0].raw == data


def test_an_answer_streamed_past_the_threshold_is_one_text_stored_once_per_snapshot(world: World) -> None:
    # Given a run streaming a 200 KB answer in 2 KB chunks, one commit each, as the worker does:
    # its view of the task folds each chunk (joined to the answer's one text part) and is committed
    record = created(world, user_message(Part(text="go")))
    working = TaskStatus(state=TaskState.TASK_STATE_WORKING)
    view = record.task.model_copy(update={"status": working})
    record = world.store.commit(
        TaskRecord.of(record.head, view, record.checkpoint),
        [StreamResponse(status_update=TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=working))],
    )
    text = ""
    snapshots = 0
    for n in range(100):
        chunk = f"{n:03d} " + "z" * 2044
        text += chunk
        artifact = Artifact(artifact_id="answer", parts=[Part(text=chunk)])
        update = TaskArtifactUpdateEvent(task_id="t1", context_id="c1", artifact=artifact, append=n > 0)
        event = StreamResponse(artifact_update=update)
        view = apply_event(view, event)
        before = record.checkpoint.seq
        record = world.store.commit(TaskRecord.of(record.head, view, record.checkpoint), [event])
        snapshots += record.checkpoint.seq != before

        # Then every read has the whole text so far: one part, or, once a snapshot stored the
        # text aside, its pointer and the chunks logged after it joined (never one part per chunk)
        got = world.store.get_task(ALICE, "t1")
        assert got is not None
        shown = world.parts.present(got.task, ALICE, "t1", None).artifacts[0].parts
        assert len(shown) <= 2
        assert "".join(p.text or "<not text>" for p in shown) == text

    # And the text was stored aside only by the commits that wrote a snapshot, not by every commit
    assert 0 < len(world.blobs.puts) <= snapshots < 10

    # And once the task completes (a snapshot is due), it is one pointer to the whole text
    done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
    view = view.model_copy(update={"status": done})
    event = StreamResponse(status_update=TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=done))
    world.store.commit(TaskRecord.of(record.head, view, record.checkpoint), [event])
    got = world.store.get_task(ALICE, "t1")
    assert got is not None
    (stored,) = got.task.artifacts[0].parts
    assert is_ref(stored)
    assert [p.text for p in world.parts.present(got.task, ALICE, "t1", None).artifacts[0].parts] == [text]
