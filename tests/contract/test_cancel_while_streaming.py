"""CancelTask while a run streams as fast as it can: the cancel mark is a write of the head alone
(``TaskStore.mark_cancel``), so it lands between the run's group commits instead of losing every
read-then-commit race to them; the run sees it, stops, and the task ends CANCELED with no chunk
after. Through the operations and the real worker, on every store of the contract suite."""

from __future__ import annotations

import asyncio
import threading

from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    Part,
    TaskState,
)
from a2a_serverless.operations.cancel_task import cancel_task
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, TaskStore
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE, send_request
from testkit.queues import RecordingQueue
from testkit.waiting import wait_until


class Firehose(AgentExecutor):
    """Appends chunks to one artifact without pause until it is canceled."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        n = 0
        while True:
            await updater.add_artifact([Part(text=f"chunk {n} ")], artifact_id="answer", append=n > 0)
            n += 1
            await asyncio.sleep(0)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def test_a_cancel_lands_while_the_run_streams_and_nothing_is_written_after(store: TaskStore) -> None:
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=f"{__name__}:Firehose", cancel_wait_seconds=10)
    runtime = build_runtime(settings, store=store, queue=queue)
    task_id = submit_message(send_request("go"), CTX, runtime).task.id
    run = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]), daemon=True)
    run.start()

    def streaming() -> bool:
        record = store.get_task(SCOPE, task_id)
        return record is not None and record.last_seq > 20

    wait_until(streaming, "the run streams", within=60)

    canceled = cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)

    run.join(timeout=60)
    assert not run.is_alive()
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert canceled.status.state is TaskState.TASK_STATE_CANCELED
    assert record.state is TaskState.TASK_STATE_CANCELED
    assert not record.cancel_requested
    assert not record.running_message_id
    # Nothing after CANCELED: the log's last event is the canceled status
    last = store.read_events(SCOPE, task_id, after_seq=record.last_seq - 1)
    assert [e.event.status_update is not None for e in last] == [True]
    assert last[0].event.status_update is not None
    assert last[0].event.status_update.status.state is TaskState.TASK_STATE_CANCELED


def test_a_mark_is_set_once_and_only_on_the_run_it_names(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory"), store=store, queue=queue)
    task_id = submit_message(send_request("hi"), CTX, runtime).task.id
    before = store.get_head(SCOPE, task_id)
    assert before is not None

    # Nothing runs it yet: no mark
    assert not store.mark_cancel(SCOPE, task_id, "m-1")
    assert not store.mark_cancel(Scope("", "mallory"), task_id, "")
    after = store.get_head(SCOPE, task_id)
    assert after == before
