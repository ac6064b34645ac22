"""The worker's run lifecycle against the in-memory store: claim once, settle always."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import random
import threading
from dataclasses import replace
from typing import Any, ClassVar

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.errors import TaskNotCancelableError
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.dead_letter import fail_dead_work_item
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_serverless.operations import CallContext, cancel_task, list_tasks, send_message
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, WorkItem
from a2a_serverless.runtime import Runtime
from a2a_serverless.transitions import DEAD_LETTER_TEXT, INTERRUPTED_TEXT
from a2a_serverless.wiring import build_runtime


class RecordingQueue:
    """A WorkQueue that only records, so each test decides when (and how often) work runs."""

    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def enqueue(self, item: WorkItem) -> None:
        self.items.append(item)


class CountingExecutor(AgentExecutor):
    runs: ClassVar[int] = 0
    lock = threading.Lock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        with CountingExecutor.lock:
            CountingExecutor.runs += 1
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await asyncio.sleep(0.05)
        await updater.add_artifact([Part(text="done")], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class ExplodingExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise RuntimeError("secret database password is hunter2")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class SilentExecutor(AgentExecutor):
    """Returns without ever reporting a state."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class StubbornExecutor(AgentExecutor):
    """Ignores cancellation requests in ``cancel`` and keeps working until stopped."""

    cancel_calls: ClassVar[int] = 0

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await asyncio.sleep(30)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        StubbornExecutor.cancel_calls += 1


class BadEventExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.add_artifact([Part(text="x")], artifact_id="never-created", append=True)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def runtime_for(executor: str) -> tuple[Runtime, RecordingQueue]:
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=f"{__name__}:{executor}", cancel_wait_seconds=0)
    return build_runtime(settings, store=MemoryTaskStore(), queue=queue), queue


CTX = CallContext(principal=Principal("alice", authenticated=True))
SCOPE = Scope("", "alice")


def send(runtime: Runtime, text: str = "hi", message_id: str = "m1") -> str:
    request = SendMessageRequest(
        message=Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    return submit_message(request, CTX, runtime).task.id


def state_of(runtime: Runtime, task_id: str) -> Any:
    record = runtime.store.get_task(SCOPE, task_id)
    assert record is not None
    return record


def test_duplicate_deliveries_run_the_executor_once() -> None:
    # Given a submitted task and its work item delivered four times, concurrently
    runtime, queue = runtime_for("CountingExecutor")
    CountingExecutor.runs = 0
    task_id = send(runtime)
    item = queue.items[0]
    threads = [threading.Thread(target=process_work_item, args=(runtime, item)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then the executor ran once, and the log has one WORKING, one artifact, one completion
    assert CountingExecutor.runs == 1
    record = state_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_COMPLETED
    kinds = [
        "task" if e.event.task else "status" if e.event.status_update else "artifact"
        for e in runtime.store.read_events(SCOPE, task_id)
    ]
    assert kinds == ["task", "status", "artifact", "status"]
    assert [e.seq for e in runtime.store.read_events(SCOPE, task_id)] == [1, 2, 3, 4]


def test_executor_exception_fails_the_task_with_a_safe_message() -> None:
    runtime, queue = runtime_for("ExplodingExecutor")
    task_id = send(runtime)
    process_work_item(runtime, queue.items[0])
    record = state_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    text = record.task.status.message.parts[0].text
    assert text == "The agent failed while working on this task."
    assert "hunter2" not in record.task.to_json()
    assert record.running_message_id == ""


def test_invalid_agent_event_fails_the_task_cleanly() -> None:
    runtime, queue = runtime_for("BadEventExecutor")
    task_id = send(runtime)
    process_work_item(runtime, queue.items[0])
    record = state_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message.parts[0].text == "The agent produced an invalid response."


def test_executor_that_returns_silently_does_not_leave_the_task_running() -> None:
    runtime, queue = runtime_for("SilentExecutor")
    task_id = send(runtime)
    process_work_item(runtime, queue.items[0])
    assert state_of(runtime, task_id).state is TaskState.TASK_STATE_FAILED


def test_redelivery_after_a_dead_run_fails_the_task_instead_of_leaving_it_working() -> None:
    # Given a run that was claimed, then its worker died (simulated: claim, then no settle)
    runtime, queue = runtime_for("CountingExecutor")
    task_id = send(runtime)
    item = queue.items[0]
    record = state_of(runtime, task_id)
    runtime.store.commit(replace(record, pending_message_id="", running_message_id=item.message_id))
    # When SQS redelivers the item (receive count 2)
    process_work_item(runtime, item, receive_count=2)
    # Then the task is failed with a clear message
    record = state_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message.parts[0].text == INTERRUPTED_TEXT


def test_cancel_reaches_a_running_executor_and_ends_the_task_canceled() -> None:
    # Given a worker running an executor that ignores its cancel callback
    runtime, queue = runtime_for("StubbornExecutor")
    StubbornExecutor.cancel_calls = 0
    task_id = send(runtime)
    worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]))
    worker.start()
    for _ in range(100):
        if state_of(runtime, task_id).running_message_id:
            break
        threading.Event().wait(0.02)
    # When the caller cancels
    cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)
    worker.join(timeout=10)
    # Then the worker noticed, called cancel, stopped the executor, and the task is CANCELED
    assert not worker.is_alive()
    assert StubbornExecutor.cancel_calls == 1
    record = state_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_CANCELED
    assert not record.cancel_requested
    assert record.running_message_id == ""


@pytest.mark.parametrize("executor", ["CountingExecutor", "ExplodingExecutor", "SilentExecutor"])
def test_every_run_leaves_the_task_settled(executor: str) -> None:
    runtime, queue = runtime_for(executor)
    task_id = send(runtime)
    process_work_item(runtime, queue.items[0])
    record = state_of(runtime, task_id)
    assert record.state.is_terminal
    assert record.pending_message_id == ""
    assert record.running_message_id == ""


class ReplyExecutor(AgentExecutor):
    """Answers with a Message only (no task work), like a simple chat agent."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await event_queue.enqueue_event(updater.new_agent_message([Part(text=f"hi, {context.get_user_input()}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class ChattyTaskExecutor(AgentExecutor):
    """Works on a task and sends a message along the way: the message belongs to the history."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await event_queue.enqueue_event(updater.new_agent_message([Part(text="halfway there")]))
        await updater.add_artifact([Part(text="result")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def test_a_message_only_reply_is_returned_to_the_blocking_sender_and_creates_no_listed_task() -> None:
    # Given an agent that answers with a message (the in-process queue runs the worker)
    settings = Settings(store="memory", executor=f"{__name__}:ReplyExecutor")
    runtime = build_runtime(settings, store=MemoryTaskStore())
    request = SendMessageRequest(message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="Ann")]))
    # When the caller sends a blocking message
    response = send_message(request, CTX, runtime)
    # Then the response is the agent's message, with the context and no task id
    assert response.task is None
    assert response.message is not None
    assert response.message.parts[0].text == "hi, Ann"
    assert response.message.role is Role.ROLE_AGENT
    assert response.message.context_id
    assert response.message.task_id == ""
    # And no task shows up in the caller's list
    assert list_tasks(ListTasksRequest(), CTX, runtime).total_size == 0
    # And re-sending the same message returns the same reply without running the agent again
    again = send_message(request, CTX, runtime)
    assert again.message == response.message


def test_a_message_only_reply_logs_the_message_then_completed() -> None:
    # Given an agent that answers with a message, and a task queued for it
    runtime, queue = runtime_for("ReplyExecutor")
    task_id = send(runtime, "Ann")
    # When the work item runs
    process_work_item(runtime, queue.items[0])
    # Then the log holds the task, then the Message and COMPLETED, written together, which carries
    # the reply: everyone following the log (streams, subscribers, webhooks) sees the task end.
    # No WORKING: the claim logs nothing, and the agent's first word was its answer.
    record = state_of(runtime, task_id)
    events = [e.event for e in runtime.store.read_events(SCOPE, task_id)]
    created, reply, final = events
    assert created.task is not None
    assert reply.message == record.reply
    assert final.status_update is not None
    assert final.status_update.task_id == task_id
    assert final.status_update.status == record.task.status
    assert final.status_update.status.state is TaskState.TASK_STATE_COMPLETED
    assert final.status_update.status.message == record.reply
    assert final.status_update.status.timestamp is not None


def test_a_message_during_task_work_goes_to_the_history() -> None:
    settings = Settings(store="memory", executor=f"{__name__}:ChattyTaskExecutor")
    runtime = build_runtime(settings, store=MemoryTaskStore())
    request = SendMessageRequest(message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="go")]))
    response = send_message(request, CTX, runtime)
    assert response.task is not None
    assert response.task.status.state is TaskState.TASK_STATE_COMPLETED
    assert [m.parts[0].text for m in response.task.history] == ["go", "halfway there"]
    assert list_tasks(ListTasksRequest(), CTX, runtime).total_size == 1


@pytest.mark.parametrize("phase", ["pending", "running"])
def test_a_dead_lettered_item_fails_its_waiting_task(phase: str) -> None:
    runtime, queue = runtime_for("CountingExecutor")
    task_id = send(runtime)
    item = queue.items[0]
    if phase == "running":
        record = state_of(runtime, task_id)
        runtime.store.commit(replace(record, pending_message_id="", running_message_id=item.message_id))
    assert fail_dead_work_item(runtime, item) is True
    record = state_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message.parts[0].text == DEAD_LETTER_TEXT
    assert (record.pending_message_id, record.running_message_id) == ("", "")


def test_a_dead_letter_for_a_finished_run_is_ignored() -> None:
    runtime, queue = runtime_for("CountingExecutor")
    task_id = send(runtime)
    process_work_item(runtime, queue.items[0])
    before = state_of(runtime, task_id)
    assert fail_dead_work_item(runtime, queue.items[0]) is False
    assert state_of(runtime, task_id) == before


class QuickExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await asyncio.sleep(random.uniform(0, 0.3))
        await updater.add_artifact([Part(text="done")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def test_complete_racing_cancel_ends_in_exactly_one_terminal_state() -> None:
    # Given many runs where a cancel lands at a random moment around completion
    runtime, queue = runtime_for("QuickExecutor")
    outcomes = collections.Counter()
    for i in range(25):
        task_id = send(runtime, message_id=f"m{i}")
        worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[-1]))
        worker.start()
        threading.Event().wait(random.uniform(0, 0.35))
        with contextlib.suppress(TaskNotCancelableError):  # completion won the race
            cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)
        worker.join(timeout=10)
        # Then the task is terminal, and its log holds exactly one terminal status, the last event
        record = state_of(runtime, task_id)
        assert record.state.is_terminal
        statuses = [
            e.event.status_update.status.state
            for e in runtime.store.read_events(SCOPE, task_id)
            if e.event.status_update
        ]
        assert sum(s.is_terminal for s in statuses) == 1
        assert statuses[-1] is record.state
        outcomes[record.state] += 1
    # (which side wins varies from run to run; either way there is exactly one ending)
    assert set(outcomes) <= {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED}


class SlowToReturnStore(MemoryTaskStore):
    """A commit that ends a run returns a moment after its head is stored, as the DynamoDB store's
    does when it writes a checkpoint after the commit."""

    def _write_commit(self, read: Any, stored: Any, plan: Any, key: Any) -> Any:
        written = super()._write_commit(read, stored, plan, key)
        if stored.state.is_terminal:
            threading.Event().wait(0.3)  # the run's monitor is woken by the head's change meanwhile
        return written


def test_a_run_that_ended_its_task_is_not_taken_for_lost_while_its_commit_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=f"{__name__}:CountingExecutor", cancel_wait_seconds=0)
    runtime = build_runtime(settings, store=SlowToReturnStore(), queue=queue)
    task_id = send(runtime)

    process_work_item(runtime, queue.items[0])

    assert state_of(runtime, task_id).state is TaskState.TASK_STATE_COMPLETED
    assert "lost its task" not in caplog.text
