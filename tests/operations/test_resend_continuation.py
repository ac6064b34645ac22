"""A re-sent answer whose first attempt stored it but never queued it (the process died in
between) is queued by the re-send: the task does not wait forever for a worker."""

from __future__ import annotations

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.errors import InvalidParamsError
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import TaskState
from a2a_serverless.operations.send_message import _continue_task, send_key, submit_message
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE, send_request
from testkit.queues import RecordingQueue


def test_a_resent_answer_that_was_stored_but_never_queued_is_queued() -> None:
    # Given the demo agent waiting for a name
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory"), store=MemoryTaskStore(), queue=queue)
    task_id = submit_message(send_request("ask me", "m-1"), CTX, runtime).task.id
    process_work_item(runtime, queue.items[-1])
    # and the answer's first attempt, which stored the message and died before queueing it
    answer = send_request("Ann", "m-2", task_id=task_id)
    _continue_task(runtime, SCOPE, answer.message, send_key(answer, runtime.settings))
    queued_before = len(queue.items)

    # When the client re-sends the same answer
    again = submit_message(send_request("Ann", "m-2", task_id=task_id), CTX, runtime)

    # Then it is not a new acceptance, but its work is queued, and the task completes
    assert not again.accepted
    assert [i.message_id for i in queue.items[queued_before:]] == ["m-2"]
    process_work_item(runtime, queue.items[-1])
    record = runtime.store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED


def test_a_resent_answer_already_run_is_not_queued_again() -> None:
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory"), store=MemoryTaskStore(), queue=queue)
    task_id = submit_message(send_request("ask me", "m-1"), CTX, runtime).task.id
    process_work_item(runtime, queue.items[-1])
    submit_message(send_request("Ann", "m-2", task_id=task_id), CTX, runtime)
    process_work_item(runtime, queue.items[-1])
    queued_before = len(queue.items)

    submit_message(send_request("Ann", "m-2", task_id=task_id), CTX, runtime)

    assert len(queue.items) == queued_before


def test_an_answer_that_would_overflow_the_task_is_invalid_params_and_changes_nothing() -> None:
    # Given a task waiting for input (bodies up to 1 MiB allowed)
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory", max_body_bytes=1024 * 1024), store=MemoryTaskStore(), queue=queue)
    task_id = submit_message(send_request("ask me", "m-1"), CTX, runtime).task.id
    process_work_item(runtime, queue.items[-1])
    before = runtime.store.get_task(SCOPE, task_id)
    assert before is not None

    # When the answer would take the stored task past one item's size
    with pytest.raises(InvalidParamsError) as info:
        submit_message(send_request("y" * (395 * 1024), "m-2", task_id=task_id), CTX, runtime)

    # Then it is a client error naming the message, and the task is as it was
    assert [v.field for v in info.value.violations] == ["message"]
    after = runtime.store.get_task(SCOPE, task_id)
    assert after is not None
    assert after.version == before.version
