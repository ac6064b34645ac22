"""Unmodified a2a-sdk executors run by our worker through ``SdkExecutorAdapter``.

The executors below are written the way the a2a-sdk documents them: they subclass
``a2a.server.agent_execution.AgentExecutor``, read the SDK's ``RequestContext`` and report through
the SDK's ``TaskUpdater`` and ``a2a.helpers`` (protobuf types throughout). Nothing in them knows
about a2a-serverless.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message as SdkMessage
from a2a.types import Part as SdkPart
from a2a.types import Role as SdkRole
from a2a.types import TaskState as SdkTaskState
from a2a.types import TaskStatus as SdkTaskStatus
from a2a.types import TaskStatusUpdateEvent as SdkTaskStatusUpdateEvent

import a2a_serverless.execution.sdk_adapter as sdk_adapter_module
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.errors import InvalidAgentResponseError
from a2a_serverless.execution import RequestContext as OurRequestContext
from a2a_serverless.execution.sdk_adapter import CONTEXT_STATE_KEY, SdkExecutorAdapter, to_sdk_request_context
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
)
from a2a_serverless.operations import CallContext, cancel_task, list_tasks, send_message
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, TaskRecord, WorkItem
from a2a_serverless.runtime import Runtime
from a2a_serverless.transitions import FAILED_TEXT
from a2a_serverless.wiring import build_runtime

# --------------------------------------------------------------------------- a2a-sdk executors


class EchoSdkExecutor(AgentExecutor):
    """The SDK's canonical shape: enqueue the task, work, add an artifact, complete."""

    seen: ClassVar[list[dict[str, Any]]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        EchoSdkExecutor.seen.append(
            {
                "input": context.get_user_input(),
                "task_id": context.task_id,
                "context_id": context.context_id,
                "current_state": context.current_task.status.state if context.current_task else None,
                "message_role": context.message.role if context.message else None,
                "user": context.call_context.user.user_name,
                "authenticated": context.call_context.user.is_authenticated,
                "context_type": type(context),
                "queue_is_sdk_queue": isinstance(event_queue, EventQueue),
            }
        )
        task = context.current_task or new_task_from_user_message(context.message)  # type: ignore[arg-type]
        task.metadata.update({"agent": "echo"})
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work(updater.new_agent_message([new_text_part("thinking")]))
        await updater.add_artifact([new_text_part(f"Echo: {context.get_user_input()}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("cancel not supported")


class NameSdkExecutor(AgentExecutor):
    """Multi-turn: asks for a name (INPUT_REQUIRED), greets on the next message."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        task = context.current_task
        if task is not None and task.status.state == SdkTaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.start_work()
            await updater.add_artifact([new_text_part(f"Nice to meet you, {context.get_user_input()}!")], name="hi")
            await updater.complete()
            return
        await updater.requires_input(updater.new_agent_message([new_text_part("What is your name?")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class ExplodingSdkExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        raise RuntimeError("secret api key sk-hunter2")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class LongSdkExecutor(AgentExecutor):
    """Works until stopped; its cancel() reports CANCELED through the SDK's TaskUpdater."""

    started = threading.Event()
    execute_cancelled = threading.Event()
    cancel_contexts: ClassVar[list[RequestContext]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        LongSdkExecutor.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            LongSdkExecutor.execute_cancelled.set()
            raise

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        LongSdkExecutor.cancel_contexts.append(context)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel(updater.new_agent_message([new_text_part("Stopped by the SDK agent.")]))


class ReplySdkExecutor(AgentExecutor):
    """The SDK's "immediate response": a single Message, no task work."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(new_text_message(f"hello, {context.get_user_input()}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class AfterTheEndSdkExecutor(AgentExecutor):
    """Completes, then tries to keep reporting, once through TaskUpdater and once directly."""

    errors: ClassVar[list[BaseException]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.add_artifact([new_text_part("result")], name="result")
        await updater.complete()
        try:
            await updater.start_work()
        except RuntimeError as exc:  # the SDK TaskUpdater's own terminal-state guard
            AfterTheEndSdkExecutor.errors.append(exc)
        late = SdkTaskStatusUpdateEvent(
            task_id=context.task_id,
            context_id=context.context_id,
            status=SdkTaskStatus(state=SdkTaskState.TASK_STATE_WORKING),
        )
        try:
            await event_queue.enqueue_event(late)
        except InvalidAgentResponseError as exc:  # our queue: closed after a final state
            AfterTheEndSdkExecutor.errors.append(exc)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class BadEventSdkExecutor(AgentExecutor):
    bad_event: ClassVar[Any] = None

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).start_work()
        await event_queue.enqueue_event(BadEventSdkExecutor.bad_event)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


# What users write: a module-level adapter instance, named by A2A_EXECUTOR ("tests...:echo_agent").
echo_agent = SdkExecutorAdapter(EchoSdkExecutor())
name_agent = SdkExecutorAdapter(NameSdkExecutor())
exploding_agent = SdkExecutorAdapter(ExplodingSdkExecutor())
long_agent = SdkExecutorAdapter(LongSdkExecutor())
reply_agent = SdkExecutorAdapter(ReplySdkExecutor())
after_the_end_agent = SdkExecutorAdapter(AfterTheEndSdkExecutor())
bad_event_agent = SdkExecutorAdapter(BadEventSdkExecutor())


# --------------------------------------------------------------------------- harness


class RecordingQueue:
    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def enqueue(self, item: WorkItem) -> None:
        self.items.append(item)


CTX = CallContext(principal=Principal("alice", authenticated=True))
SCOPE = Scope("", "alice")


def runtime_for(agent: str) -> tuple[Runtime, RecordingQueue]:
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=f"{__name__}:{agent}", cancel_wait_seconds=0)
    return build_runtime(settings, store=MemoryTaskStore(), queue=queue), queue


def send(runtime: Runtime, text: str, message_id: str, *, task_id: str = "", context_id: str = "") -> str:
    message = Message(
        message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id, context_id=context_id
    )
    request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))
    return submit_message(request, CTX, runtime).task.id


def record_of(runtime: Runtime, task_id: str) -> TaskRecord:
    record = runtime.store.get_task(SCOPE, task_id)
    assert record is not None
    return record


def log_of(runtime: Runtime, task_id: str) -> list[StreamResponse]:
    return [e.event for e in runtime.store.read_events(SCOPE, task_id)]


def describe(event: StreamResponse) -> tuple[str, str]:
    if event.task is not None:
        return ("task", event.task.status.state.value)
    if event.status_update is not None:
        return ("status", event.status_update.status.state.value)
    if event.artifact_update is not None:
        return ("artifact", event.artifact_update.artifact.parts[0].text or "")
    assert event.message is not None
    return ("message", event.message.parts[0].text or "")


# --------------------------------------------------------------------------- tests


def test_an_sdk_echo_executor_runs_end_to_end_and_its_events_are_stored_as_ours() -> None:
    # Given the documented set-up: A2A_EXECUTOR names a module-level SdkExecutorAdapter
    runtime, queue = runtime_for("echo_agent")
    assert runtime.executor is echo_agent
    EchoSdkExecutor.seen.clear()
    task_id = send(runtime, "ping", "m1")
    # When the worker runs the work item
    process_work_item(runtime, queue.items[0])
    # Then the SDK executor got a real SDK RequestContext and EventQueue, built from ours
    (seen,) = EchoSdkExecutor.seen
    record = record_of(runtime, task_id)
    assert seen == {
        "input": "ping",
        "task_id": task_id,
        "context_id": record.task.context_id,
        "current_state": SdkTaskState.TASK_STATE_SUBMITTED,
        "message_role": SdkRole.ROLE_USER,
        "user": "alice",
        "authenticated": True,
        "context_type": RequestContext,
        "queue_is_sdk_queue": True,
    }
    # And the task is COMPLETED with the artifact, the Task event's metadata merged
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert record.running_message_id == ""
    assert [(a.name, [p.text for p in a.parts]) for a in record.task.artifacts] == [("echo", ["Echo: ping"])]
    assert record.task.metadata == {"agent": "echo"}
    assert [m.parts[0].text for m in record.task.history] == ["ping", "thinking"]
    # And the log holds the submission, then the SDK executor's converted events in order (its
    # WORKING is the run's only one: the claim logs nothing)
    events = log_of(runtime, task_id)
    assert [describe(e) for e in events] == [
        ("task", "TASK_STATE_SUBMITTED"),
        ("status", "TASK_STATE_WORKING"),
        ("artifact", "Echo: ping"),
        ("status", "TASK_STATE_COMPLETED"),
    ]
    working = events[1].status_update
    assert working is not None
    assert working.task_id == task_id
    assert working.status.timestamp is not None
    assert working.status.message is not None
    assert working.status.message.role is Role.ROLE_AGENT
    assert working.status.message.task_id == task_id


def test_a_multi_turn_sdk_executor_asks_for_input_and_finishes_on_the_next_message() -> None:
    runtime, queue = runtime_for("name_agent")
    task_id = send(runtime, "hello", "m1")
    process_work_item(runtime, queue.items[0])
    # The first run ends INPUT_REQUIRED with the SDK executor's question
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_INPUT_REQUIRED
    assert record.running_message_id == ""
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == "What is your name?"
    # When the user answers on the same task
    send(runtime, "Ann", "m2", task_id=task_id, context_id=record.task.context_id)
    process_work_item(runtime, queue.items[1])
    # Then the SDK executor saw the INPUT_REQUIRED task and completed it
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert [p.text for p in record.task.artifacts[0].parts] == ["Nice to meet you, Ann!"]
    assert [m.parts[0].text for m in record.task.history] == ["hello", "What is your name?", "Ann"]
    assert [describe(e) for e in log_of(runtime, task_id)][-3:] == [
        ("status", "TASK_STATE_WORKING"),
        ("artifact", "Nice to meet you, Ann!"),
        ("status", "TASK_STATE_COMPLETED"),
    ]


def test_an_sdk_executor_that_raises_fails_the_task_with_the_generic_message() -> None:
    runtime, queue = runtime_for("exploding_agent")
    task_id = send(runtime, "go", "m1")
    process_work_item(runtime, queue.items[0])
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == FAILED_TEXT
    assert "hunter2" not in record.task.to_json()
    assert "hunter2" not in "".join(e.to_json() for e in log_of(runtime, task_id))
    assert record.running_message_id == ""


def test_cancel_reaches_a_running_sdk_executor_whose_cancel_reports_canceled() -> None:
    # Given a worker running an SDK executor that works until stopped
    runtime, queue = runtime_for("long_agent")
    LongSdkExecutor.started.clear()
    LongSdkExecutor.execute_cancelled.clear()
    LongSdkExecutor.cancel_contexts.clear()
    task_id = send(runtime, "work", "m1")
    worker = threading.Thread(target=process_work_item, args=(runtime, queue.items[0]))
    worker.start()
    assert LongSdkExecutor.started.wait(5)
    # When the caller cancels
    cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)
    worker.join(timeout=10)
    # Then the SDK executor's cancel() ran (with an SDK context for the task, no message, like the
    # SDK's own handlers) and its execute() was stopped
    assert not worker.is_alive()
    (context,) = LongSdkExecutor.cancel_contexts
    assert context.task_id == task_id
    assert context.message is None
    assert context.current_task is not None
    assert context.current_task.id == task_id
    assert LongSdkExecutor.execute_cancelled.is_set()
    # And the task ended CANCELED with the SDK executor's own status message, run state cleared
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_CANCELED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == "Stopped by the SDK agent."
    assert not record.cancel_requested
    assert record.running_message_id == ""
    assert [describe(e) for e in log_of(runtime, task_id)][-2:] == [
        ("status", "TASK_STATE_WORKING"),
        ("status", "TASK_STATE_CANCELED"),
    ]


def test_an_sdk_message_only_reply_goes_back_to_the_blocking_sender() -> None:
    runtime = build_runtime(Settings(store="memory", executor=f"{__name__}:reply_agent"), store=MemoryTaskStore())
    request = SendMessageRequest(message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="Ann")]))
    response = send_message(request, CTX, runtime)
    assert response.task is None
    assert response.message is not None
    assert response.message.role is Role.ROLE_AGENT
    assert response.message.parts[0].text == "hello, Ann"
    assert response.message.context_id
    assert list_tasks(ListTasksRequest(), CTX, runtime).total_size == 0


def test_after_a_final_state_the_sdk_updater_guard_and_our_closed_queue_both_refuse_events() -> None:
    runtime, queue = runtime_for("after_the_end_agent")
    AfterTheEndSdkExecutor.errors.clear()
    task_id = send(runtime, "go", "m1")
    process_work_item(runtime, queue.items[0])
    guard, closed = AfterTheEndSdkExecutor.errors
    assert isinstance(guard, RuntimeError)
    assert "terminal state" in str(guard)
    assert isinstance(closed, InvalidAgentResponseError)
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert [describe(e) for e in log_of(runtime, task_id)][-2:] == [
        ("artifact", "result"),
        ("status", "TASK_STATE_COMPLETED"),
    ]


@pytest.mark.parametrize(
    "bad_event",
    [
        pytest.param(SdkMessage(message_id="x", role=SdkRole.ROLE_AGENT), id="message-without-parts"),
        pytest.param(SdkPart(text="not an event"), id="not-an-event-type"),
        pytest.param({"kind": "status-update"}, id="a-dict"),
    ],
)
def test_an_event_that_does_not_convert_fails_the_task_as_an_invalid_response(bad_event: Any) -> None:
    runtime, queue = runtime_for("bad_event_agent")
    BadEventSdkExecutor.bad_event = bad_event
    task_id = send(runtime, "go", "m1")
    process_work_item(runtime, queue.items[0])
    record = record_of(runtime, task_id)
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == "The agent produced an invalid response."


def test_the_sdk_request_context_carries_tenant_caller_extensions_configuration_and_metadata() -> None:
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    ours = OurRequestContext(
        task_id="t1",
        context_id="c1",
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="a"), Part(data={"n": 1})]),
        current_task=task,
        configuration=SendMessageConfiguration(accepted_output_modes=["text/plain"], history_length=3),
        metadata={"trace": "abc"},
        tenant="acme",
        caller="anonymous",
        requested_extensions=("https://example.com/ext/v1",),
        related_tasks=[task.model_copy(update={"id": "t0"})],
    )
    sdk = to_sdk_request_context(ours)
    assert isinstance(sdk, RequestContext)
    assert (sdk.task_id, sdk.context_id, sdk.tenant) == ("t1", "c1", "acme")
    assert sdk.message is not None
    assert (sdk.message.task_id, sdk.message.context_id) == ("t1", "c1")
    assert sdk.get_user_input() == "a"
    assert sdk.message.parts[1].data.struct_value.fields["n"].number_value == 1
    assert sdk.configuration is not None
    assert list(sdk.configuration.accepted_output_modes) == ["text/plain"]
    assert sdk.configuration.history_length == 3
    assert sdk.metadata == {"trace": "abc"}
    assert sdk.requested_extensions == {"https://example.com/ext/v1"}
    assert sdk.call_context.user.user_name == "anonymous"
    assert sdk.call_context.user.is_authenticated is False
    assert sdk.call_context.state[CONTEXT_STATE_KEY] is ours
    assert sdk.current_task is not None
    assert sdk.current_task.status.state == SdkTaskState.TASK_STATE_SUBMITTED
    assert [t.id for t in sdk.related_tasks] == ["t0"]


def test_wrapping_something_that_is_not_an_sdk_executor_instance_is_refused() -> None:
    with pytest.raises(TypeError, match=r"pass an instance: SdkExecutorAdapter\(EchoSdkExecutor\(\)\)"):
        SdkExecutorAdapter(EchoSdkExecutor)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not object"):
        SdkExecutorAdapter(object())  # type: ignore[arg-type]


def test_without_the_a2a_sdk_the_adapter_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hide every a2a module (None in sys.modules makes the import fail), then load a fresh copy
    for name in [n for n in sys.modules if n == "a2a" or n.startswith("a2a.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "a2a", None)
    path = Path(sdk_adapter_module.__file__)
    spec = importlib.util.spec_from_file_location("a2a_serverless.execution._sdk_adapter_copy", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ImportError, match=r"pip install 'a2a-serverless\[a2a-sdk\]'"):
        spec.loader.exec_module(module)


def test_an_unwrapped_sdk_executor_named_by_import_path_is_wrapped_automatically() -> None:
    # Given A2A_EXECUTOR naming a plain a2a-sdk executor class (no adapter module written)
    from a2a_serverless.wiring import load_executor

    # When the runtime loads it, then it runs behind the adapter, never with our types
    loaded = load_executor(f"{__name__}:EchoSdkExecutor")
    assert isinstance(loaded, SdkExecutorAdapter)
