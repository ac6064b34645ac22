"""From stream records to delivery items (``push.dispatch``): one item per config of the event's
task, catch-up items for configs that appear mid-task, nothing for anything else."""

from __future__ import annotations

import pytest

from a2a_serverless.adapters import MemoryTaskStore
from a2a_serverless.models import StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus
from a2a_serverless.ports import Scope, TaskRecord
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.push.dispatch import dispatch_image
from a2a_serverless.push.queue import MemoryDeliveryQueue

SCOPE = Scope("acme", "alice")


def a_task(store: MemoryTaskStore, events: int = 1) -> None:
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    record = store.create_task(TaskRecord(scope=SCOPE, task=task), [StreamResponse(task=task)], message_id="m1")
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


def test_an_event_queues_one_item_per_config_even_past_a_page_of_configs() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store)
    ids = [f"c{n:03d}" for n in range(130)]
    add_configs(store, *ids)

    assert dispatch_image(event_image(4), store, queue) == 130

    assert sorted(i.config_id for i in queue.sent) == ids
    assert {(i.task_id, i.up_to_seq, i.from_seq, i.scope) for i in queue.sent} == {("t1", 4, 0, SCOPE)}


def test_an_event_of_a_task_without_configs_queues_nothing() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()
    a_task(store)

    assert dispatch_image(event_image(1), store, queue) == 0
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

    dispatch_image(config_image("p1", delivered), store, queue)

    assert [i.up_to_seq for i in queue.sent] == expected
    assert all(i == DeliveryItem("acme", "alice", "t1", "p1", up_to_seq=last_seq) for i in queue.sent)


def test_other_items_and_vanished_tasks_queue_nothing() -> None:
    store, queue = MemoryTaskStore(), MemoryDeliveryQueue()

    assert dispatch_image({"sk": "META", "tenant": "acme", "owner": "alice", "taskId": "t1"}, store, queue) == 0
    assert dispatch_image(config_image("p1", 0), store, queue) == 0
    assert queue.sent == []
