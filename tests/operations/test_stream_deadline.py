"""A stream whose deadline comes before the run's first event still starts with the Task.

SendStreamingMessage holds a new task's snapshot back for up to a second (the first event may be a
message-only reply, and then the stream is that Message alone). A deadline inside that hold, on a
stream whose work is still queued, used to end the stream with no event at all: the client had
no task id to resume with (found by the JSON-RPC fuzz suite on a busy CI machine)."""

from __future__ import annotations

import asyncio

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import StreamResponse, TaskState
from a2a_serverless.operations.streaming import FIRST_EVENT_HOLD_SECONDS, EventStream, open_message_stream
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE, send_request
from testkit.queues import RecordingQueue


async def _drain(stream: EventStream) -> list[tuple[int, StreamResponse]]:
    return [item async for item in stream.events()]


@pytest.mark.parametrize("deadline", [0.05, FIRST_EVENT_HOLD_SECONDS / 2])
def test_a_deadline_within_the_first_event_hold_still_sends_the_task(deadline: float) -> None:
    # Given a stream whose work no worker has taken yet (the queue only records it)
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory", stream_max_seconds=deadline), store=MemoryTaskStore(), queue=queue)
    stream = open_message_stream(send_request("hello", return_immediately=None), CTX, runtime)

    # When the stream's deadline passes before the run's first event
    events = asyncio.run(_drain(stream))

    # Then the stream ended with exactly the task's snapshot: its id, SUBMITTED
    assert [(seq, event.task is not None) for seq, event in events] == [(stream.record.last_seq, True)]
    task = events[0][1].task
    assert task is not None
    assert task.id == stream.record.task.id
    assert task.status.state is TaskState.TASK_STATE_SUBMITTED
    # And the client resumes from it once the work runs: nothing was skipped
    process_work_item(runtime, queue.items[-1])
    logged = runtime.store.read_events(SCOPE, task.id, events[0][0], 100)
    assert logged[-1].event.status_update is not None
    assert logged[-1].event.status_update.status.state is TaskState.TASK_STATE_COMPLETED
