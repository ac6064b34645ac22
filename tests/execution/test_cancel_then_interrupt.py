"""A cancel accepted while the run is about to stop for input still ends the task CANCELED.

The worker watches for the cancel mark every quarter second; a run that reaches INPUT_REQUIRED
between CancelTask's mark and the watcher's next look used to settle interrupted and silently drop
the accepted cancel."""

from __future__ import annotations

import asyncio
import threading
import time

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_serverless.operations import cancel_task, send_message
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE
from testkit.queues import RecordingQueue


class QuickQuestionExecutor(AgentExecutor):
    """Works briefly, then asks for input (faster than the worker's cancel watch polls)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await asyncio.sleep(0.15)
        await updater.requires_input(updater.new_agent_message([Part(text="which one?")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def test_a_cancel_marked_before_the_run_stops_for_input_ends_the_task_canceled() -> None:
    # Given a run that will stop for input 0.15 s after it starts
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=f"{__name__}:QuickQuestionExecutor", cancel_wait_seconds=0)
    runtime = build_runtime(settings, store=MemoryTaskStore(), queue=queue)
    request = SendMessageRequest(
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="go")]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    task = send_message(request, CTX, runtime).task
    assert task is not None
    worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]))
    worker.start()
    deadline = time.monotonic() + 5
    while (
        record := runtime.store.get_task(SCOPE, task.id)
    ) is None or record.state is not TaskState.TASK_STATE_WORKING:
        assert time.monotonic() < deadline, "the worker never reported WORKING"
        time.sleep(0.01)

    # When CancelTask marks it while it works (the watcher looks only every 0.25 s)
    marked = cancel_task(CancelTaskRequest(id=task.id), CTX, runtime)
    worker.join(timeout=10)

    # Then the accepted cancel wins: the task ends CANCELED, with one terminal status, last
    assert marked.status.state is TaskState.TASK_STATE_WORKING
    final = runtime.store.get_task(SCOPE, task.id)
    assert final is not None
    assert final.state is TaskState.TASK_STATE_CANCELED
    assert not final.cancel_requested
    statuses = [
        e.event.status_update.status.state for e in runtime.store.read_events(SCOPE, task.id) if e.event.status_update
    ]
    assert sum(s.is_terminal for s in statuses) == 1
    assert statuses[-1] is TaskState.TASK_STATE_CANCELED
