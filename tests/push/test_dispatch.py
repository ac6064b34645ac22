"""From stream records to delivery items (``push.dispatch``): one item per config of the event's
task, catch-up items for configs that appear mid-task, nothing for anything else."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from a2a_serverless.adapters import MemoryTaskStore
from a2a_serverless.adapters.memory_queues import MemoryDeliveryQueue
from a2a_serverless.models import StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus
from a2a_serverless.ports import Scope, TaskRecord
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.push.dispatch import dispatch_images

SCOPE = Scope("acme", "alice")


def a_task(store: MemoryTaskStore, events: int = 1) -> None:
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    record = store.create_task(TaskRecord(scope=SCOPE, task=task), [StreamResponse(task=task)])
    for _ in range(events - 1):
        record = store.commit(record, [StreamResponse(task=task)])


def add_configs(store: MemoryTaskStore, *ids: str) -> None:
    for config_id in ids:
        config = TaskPushNotificationConfig(id=config_id, task_id="t1", url=f"https://hooks.example/{config_id}")
        store.put_push_config(SCOPE, config)


def event_image(seq: int) -> dict[str, object]:
    return {"sk": f"EVT#{seq:012d}", "tenant": "acme", "owner": "alice", "taskId": "t1", "seq": seq}


def config_image(config_id: str, delivered: int) -> dict[str, object]:
    return {
        "sk": f"PUSH#{config_id}",
        "tenant": "acme",
        "owner": "alice",
        "taskId": "t1",
        "configId": config_id,
        "deliveredSeq": delivered,
    }


def head_image(last_seq: int, held_first: int) -> dict[str, object]:
    """A head that holds the events ``held_first`` .. ``last_seq`` (a small commit that ended the task)."""
    return {
        "sk": "META",
        "tenant": "acme",
        "owner": "alice",
        "taskId": "t1",
        "lastSeq": last_seq,
        "heldFirst": held_first,
    }


def test_a_head_holding_the_last_events_queues_them_for_every_config() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store)
    add_configs(store, "a", "b")

    assert dispatch_images([event_image(1), head_image(4, 2)], store, queue) == []

    assert sorted((i.config_id, i.up_to_seq) for i in queue.sent) == [("a", 4), ("b", 4)]


def test_a_new_tasks_head_queues_its_first_events_for_every_config() -> None:
    # A create writes its head last: a config written with the task is caught up from the head's record
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store)
    add_configs(store, "a")
    image = head_image(1, 0)
    del image["heldFirst"]

    assert dispatch_images([image], store, queue) == []
    assert [(i.config_id, i.up_to_seq) for i in queue.sent] == [("a", 1)]


def test_an_event_queues_one_item_per_config_even_past_a_page_of_configs() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store)
    ids = [f"c{n:03d}" for n in range(130)]
    add_configs(store, *ids)

    assert dispatch_images([event_image(4)], store, queue) == []
    assert len(queue.sent) == 130

    assert sorted(i.config_id for i in queue.sent) == ids
    assert {(i.task_id, i.up_to_seq, i.from_seq, i.scope) for i in queue.sent} == {("t1", 4, 0, SCOPE)}


def test_an_event_of_a_task_without_configs_queues_nothing() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store)

    assert dispatch_images([event_image(1)], store, queue) == []
    assert queue.sent == []


@pytest.mark.parametrize(
    ("last_seq", "delivered", "expected"),
    [
        pytest.param(5, 3, [5], id="events-logged-since-its-start-are-caught-up"),
        pytest.param(3, 3, [], id="nothing-missed"),
    ],
)
def test_a_new_config_is_caught_up_to_the_tasks_last_event(last_seq: int, delivered: int, expected: list[int]) -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store, events=last_seq)

    dispatch_images([config_image("p1", delivered)], store, queue)

    assert [i.up_to_seq for i in queue.sent] == expected
    assert all(i == DeliveryItem("acme", "alice", "t1", "p1", up_to_seq=last_seq) for i in queue.sent)


def test_other_items_and_vanished_tasks_queue_nothing() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()

    meta = {"sk": "META", "tenant": "acme", "owner": "alice", "taskId": "t1"}
    assert dispatch_images([meta, config_image("p1", 0)], store, queue) == []
    assert queue.sent == []


def test_a_batch_reads_each_tasks_configs_once_and_queues_one_item_per_config() -> None:
    # Given two tasks with configs, and a batch interleaving their events (and a new config)
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store, events=6)
    add_configs(store, "a", "b")
    other = Task(id="t2", context_id="c2", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    store.create_task(TaskRecord(scope=SCOPE, task=other), [StreamResponse(task=other)])
    store.put_push_config(SCOPE, TaskPushNotificationConfig(id="c", task_id="t2", url="https://hooks.example/c"))
    images = [event_image(4), {**event_image(1), "taskId": "t2"}, event_image(5), config_image("b", 0), event_image(6)]

    # When the batch is dispatched
    assert dispatch_images(images, store, queue) == []

    # Then each config gets one item, up to its task's newest event in the batch
    assert sorted((i.task_id, i.config_id, i.up_to_seq) for i in queue.sent) == [
        ("t1", "a", 6),
        ("t1", "b", 6),
        ("t2", "c", 1),
    ]


class _RefusingQueue(MemoryDeliveryQueue):
    def send(self, items: Sequence[DeliveryItem]) -> None:
        if any(i.task_id == "t2" for i in items):
            raise RuntimeError("queue unavailable")
        super().send(items)


def test_records_of_a_task_whose_items_could_not_be_queued_are_reported_failed() -> None:
    store, queue = MemoryTaskStore(), _RefusingQueue()
    a_task(store)
    add_configs(store, "a")
    store.put_push_config(SCOPE, TaskPushNotificationConfig(id="c", task_id="t2", url="https://hooks.example/c"))
    other = Task(id="t2", context_id="c2", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    store.create_task(TaskRecord(scope=SCOPE, task=other), [StreamResponse(task=other)])
    images = [event_image(1), {**event_image(1), "taskId": "t2"}, {**event_image(2), "taskId": "t2"}]

    assert dispatch_images(images, store, queue) == [1, 2]
    assert [i.task_id for i in queue.sent] == ["t1"]


def test_a_key_only_image_is_skipped_and_the_rest_of_the_batch_is_still_queued() -> None:
    # moto's stream emits a key-only INSERT ahead of the full one when UpdateItem creates an item;
    # a record we cannot attribute must not fail (and so, after retries, drop) the whole batch.
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store, events=2)
    add_configs(store, "p1")

    key_only = {"pk": "T#acme#alice#t1", "sk": "PUSH#p1"}
    assert dispatch_images([key_only, config_image("p1", 0), event_image(2)], store, queue) == []

    assert queue.sent == [DeliveryItem("acme", "alice", "t1", "p1", up_to_seq=2)]
