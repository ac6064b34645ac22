"""The pure lifecycle rules (``a2a_serverless.lifecycle``) and the blocking / multi-turn
semantics built on them."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.errors import InvalidAgentResponseError
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.lifecycle import apply_event, fold, with_history_length
from a2a_serverless.models import (
    Artifact,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_serverless.operations import CallContext, get_task, send_message
from a2a_serverless.wiring import build_runtime


def task(**updates: Any) -> Task:
    base = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    return base.model_copy(update=updates)


def artifact_event(
    artifact_id: str,
    text: str,
    *,
    append: bool = False,
    metadata: dict[str, Any] | None = None,
    last_chunk: bool = False,
) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t1",
            context_id="c1",
            artifact=Artifact(artifact_id=artifact_id, parts=[Part(text=text)], metadata=metadata),
            append=append,
            last_chunk=last_chunk,
        )
    )


def status_event(state: TaskState, text: str | None = None) -> StreamResponse:
    message = Message(message_id=f"s-{text}", role=Role.ROLE_AGENT, parts=[Part(text=text)]) if text else None
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=TaskStatus(state=state, message=message)
        )
    )


def test_appended_text_chunks_are_one_text_part_and_artifact_metadata_merges() -> None:
    t = apply_event(task(), artifact_event("a", "one", metadata={"x": 1}))
    t = apply_event(t, artifact_event("a", " two", append=True, metadata={"y": 2}))
    t = apply_event(t, artifact_event("a", " three", append=True, last_chunk=True))
    assert [p.text for p in t.artifacts[0].parts] == ["one two three"]
    assert t.artifacts[0].metadata == {"x": 1, "y": 2}


def parts_event(artifact_id: str, parts: list[Part], *, append: bool = True) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t1", context_id="c1", artifact=Artifact(artifact_id=artifact_id, parts=parts), append=append
        )
    )


def texts(t: Task, artifact: int = 0) -> list[str | None]:
    return [p.text if p.text is not None else f"<{p.url or p.data!r}>" for p in t.artifacts[artifact].parts]


@pytest.mark.parametrize(
    ("first", "chunk", "expected"),
    [
        pytest.param(Part(text="a"), [Part(text="b")], ["ab"], id="text-continues-text"),
        pytest.param(
            Part(text="a", media_type="text/markdown"),
            [Part(text="b", media_type="text/markdown")],
            ["ab"],
            id="same-media-type",
        ),
        pytest.param(
            Part(text="a", metadata={"k": 1}), [Part(text="b", metadata={"k": 1})], ["ab"], id="equal-metadata"
        ),
        pytest.param(Part(text="a", metadata={}), [Part(text="b")], ["ab"], id="empty-metadata-is-none"),
        pytest.param(
            Part(text="a", metadata={"k": 1}), [Part(text="b", metadata={"k": 2})], ["a", "b"], id="other-metadata"
        ),
        pytest.param(Part(text="a", metadata={"k": 1}), [Part(text="b")], ["a", "b"], id="metadata-only-before"),
        pytest.param(
            Part(text="a", media_type="text/plain"),
            [Part(text="b", media_type="text/markdown")],
            ["a", "b"],
            id="other-media-type",
        ),
        pytest.param(Part(text="a", filename="x.txt"), [Part(text="b")], ["a", "b"], id="other-filename"),
        pytest.param(Part(data={"n": 1}), [Part(text="b")], ["<{'n': 1}>", "b"], id="after-a-data-part"),
        pytest.param(Part(text="a"), [Part(url="https://x/f")], ["a", "<'https://x/f'>"], id="a-file-part"),
        pytest.param(
            Part(url="a2a-blob:text:40000:" + "0" * 64),
            [Part(text="b")],
            ["<'a2a-blob:text:40000:" + "0" * 64 + "'>", "b"],
            id="after-a-stored-part",
        ),
        pytest.param(
            Part(text="a"), [Part(text="b"), Part(text="c")], ["ab", "c"], id="only-the-updates-first-part-joins"
        ),
        pytest.param(
            Part(text="a"),
            [Part(data={"n": 1}), Part(text="c")],
            ["a", "<{'n': 1}>", "c"],
            id="update-starts-with-data",
        ),
        pytest.param(Part(text=""), [Part(text="b")], ["b"], id="an-empty-text-is-text"),
    ],
)
def test_which_appended_parts_join_the_artifacts_last_part(first: Part, chunk: list[Part], expected: list[str]) -> None:
    # The rule (lifecycle.append_parts): an appended update's first part continues the artifact's
    # last part when both are text, with the same mediaType, filename and metadata; nothing else joins
    t = apply_event(task(), parts_event("a", [first], append=False))
    t = apply_event(t, parts_event("a", chunk))
    assert texts(t) == expected


def test_a_joined_part_keeps_what_the_first_one_said() -> None:
    first = Part(text="a", media_type="text/markdown", filename="notes.md", metadata={"k": [1]})
    t = apply_event(task(), parts_event("a", [first], append=False))
    t = apply_event(t, parts_event("a", [first.model_copy(update={"text": "b"})]))
    assert t.artifacts[0].parts == [first.model_copy(update={"text": "ab"})]


def test_nothing_joins_across_artifacts_or_without_append() -> None:
    t = apply_event(task(), artifact_event("a", "one"))
    t = apply_event(t, artifact_event("b", "other"))
    t = apply_event(t, artifact_event("a", " two", append=True))
    assert (texts(t, 0), texts(t, 1)) == (["one two"], ["other"])
    # an update without append replaces the artifact: its text starts again
    t = apply_event(t, artifact_event("a", "again"))
    assert texts(t, 0) == ["again"]


def test_the_fold_of_appended_chunks_is_one_part_whatever_their_number() -> None:
    chunks = [f"tok{n} " for n in range(500)]
    events = [artifact_event("a", c, append=n > 0) for n, c in enumerate(chunks)]
    folded = fold(task(), events)
    assert folded is not None
    assert texts(folded) == ["".join(chunks)]
    # and folding from any intermediate task (a snapshot) gives the same task
    middle = fold(task(), events[:123])
    assert fold(middle, events[123:]) == folded


def test_a_non_append_update_replaces_the_artifact_with_that_id_and_adds_new_ones() -> None:
    t = apply_event(task(), artifact_event("a", "draft"))
    t = apply_event(t, artifact_event("b", "other"))
    t = apply_event(t, artifact_event("a", "final"))
    assert [(a.artifact_id, a.parts[0].text) for a in t.artifacts] == [("a", "final"), ("b", "other")]


@pytest.mark.parametrize(
    ("start", "event"),
    [
        pytest.param(task(), artifact_event("missing", "x", append=True), id="append-to-unknown-artifact"),
        pytest.param(
            task(status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED)),
            status_event(TaskState.TASK_STATE_WORKING),
            id="event-after-terminal",
        ),
        pytest.param(
            task(),
            StreamResponse(
                status_update=TaskStatusUpdateEvent(
                    task_id="other", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
                )
            ),
            id="foreign-task-id",
        ),
    ],
)
def test_invalid_agent_events_are_refused(start: Task, event: StreamResponse) -> None:
    with pytest.raises(InvalidAgentResponseError):
        apply_event(start, event)


def test_a_new_status_moves_the_previous_status_message_into_history() -> None:
    t = apply_event(task(), status_event(TaskState.TASK_STATE_WORKING, "thinking"))
    t = apply_event(t, status_event(TaskState.TASK_STATE_COMPLETED, "done"))
    assert [m.parts[0].text for m in t.history] == ["thinking"]
    assert t.status.message is not None
    assert t.status.message.parts[0].text == "done"


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        pytest.param(None, ["m0", "m1", "m2"], id="unset-all"),
        pytest.param(0, [], id="zero-none"),
        pytest.param(2, ["m1", "m2"], id="two-newest"),
        pytest.param(9, ["m0", "m1", "m2"], id="more-than-there-are"),
    ],
)
def test_history_length(length: int | None, expected: list[str]) -> None:
    history = [Message(message_id=f"m{i}", role=Role.ROLE_USER, parts=[Part(text=str(i))]) for i in range(3)]
    trimmed = with_history_length(task(history=history), length)
    assert [m.message_id for m in trimmed.history] == expected


class AuthThenWork(AgentExecutor):
    """Needs credentials first (AUTH_REQUIRED with an explanation), then completes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        current = context.current_task
        if current is not None and current.status.state is TaskState.TASK_STATE_AUTH_REQUIRED:
            await updater.add_artifact([Part(text=f"authorized with {context.get_user_input()}")])
            await updater.complete()
            return
        await updater.requires_auth(updater.new_agent_message([Part(text="Sign in at https://example.com")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class HeldWork(AgentExecutor):
    """Starts work, then holds its task WORKING until the test lets it finish (``finish``)."""

    def __init__(self) -> None:
        self.finish = threading.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        # Polled, so the worker's event loop stays free; a hang guard lets it go after a minute.
        for _ in range(6000):
            if self.finish.is_set():
                break
            await asyncio.sleep(0.01)
        await updater.complete(updater.new_agent_message([Part(text="finally")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


CTX = CallContext(principal=Principal("alice", authenticated=True))


def message(text: str, message_id: str, task_id: str = "") -> Message:
    return Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)


def test_an_auth_required_task_continues_with_a_message_on_the_same_task() -> None:
    runtime = build_runtime(Settings(store="memory", executor=f"{__name__}:AuthThenWork"), store=MemoryTaskStore())
    first = send_message(SendMessageRequest(message=message("do it", "m1")), CTX, runtime).task
    assert first is not None
    assert first.status.state is TaskState.TASK_STATE_AUTH_REQUIRED
    assert first.status.message is not None  # it says what authorization is needed
    second = send_message(SendMessageRequest(message=message("token-123", "m2", first.id)), CTX, runtime).task
    assert second is not None
    assert second.status.state is TaskState.TASK_STATE_COMPLETED
    assert second.artifacts[0].parts[0].text == "authorized with token-123"
    assert [m.message_id for m in second.history][:2] == ["m1", first.status.message.message_id]
    assert second.history[2].message_id == "m2"


def test_a_blocking_send_returns_the_current_task_at_the_wait_cap() -> None:
    # Given an agent that holds its task WORKING until the test lets it finish
    settings = Settings(store="memory", executor=f"{__name__}:HeldWork", blocking_wait_seconds=0.4)
    runtime = build_runtime(settings, store=MemoryTaskStore())
    agent = runtime.executor  # (made now, before the worker asks for it)
    assert isinstance(agent, HeldWork)
    try:
        send = SendMessageRequest(message=message("go", "m1"))
        # When a blocking send waits on it
        sent = send_message(send, CTX, runtime).task
        # Then it returns at the cap with the task unfinished (nothing else could end its wait)
        assert sent is not None
        assert sent.status.state in {TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING}
        # And a blocking re-send of the same message, once the agent works, returns the task as it is
        lookup = GetTaskRequest(id=sent.id)
        for _ in range(1000):  # a hang guard (about 10 s)
            if get_task(lookup, CTX, runtime).status.state is TaskState.TASK_STATE_WORKING:
                break
            time.sleep(0.01)
        current = send_message(send, CTX, runtime).task
        assert current is not None
        assert current.status.state is TaskState.TASK_STATE_WORKING
        # and the work goes on: a blocking re-send with a long cap waits while the agent holds the task,
        # and returns the finished task once it is let go
        patient = build_runtime(
            dataclasses.replace(settings, blocking_wait_seconds=60), store=runtime.store, queue=runtime.queue
        )
        with ThreadPoolExecutor(1) as pool:
            again = SendMessageRequest(message=message("go", "m1"), configuration=SendMessageConfiguration())
            waiting = pool.submit(send_message, again, CTX, patient)
            with pytest.raises(TimeoutError):  # still waiting
                waiting.result(timeout=0.5)
            agent.finish.set()
            done = waiting.result(timeout=60).task
        assert done is not None
        assert done.status.state is TaskState.TASK_STATE_COMPLETED
    finally:  # no run left behind, whatever happened
        agent.finish.set()
        runtime.queue.shutdown()  # type: ignore[attr-defined]
