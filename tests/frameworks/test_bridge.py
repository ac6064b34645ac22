"""The bridge every framework adapter shares, driven by a scripted framework: what each kind of
framework event becomes in the task, through the app, the worker and the store."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.frameworks import (
    FrameworkEvent,
    FrameworkExecutor,
    Output,
    Pause,
    TextDelta,
    ToolCall,
    ToolResult,
    Turn,
)
from a2a_serverless.models import Part, TaskState
from a2a_serverless.ports import Scope
from a2a_serverless.transitions import FAILED_TEXT

from .conftest import answer_text, chunks, status_data

Script = Callable[[Turn], AsyncGenerator[FrameworkEvent, None]]


class Scripted(FrameworkExecutor):
    """A framework whose run is a script: the events it yields are what a real adapter yields."""

    framework = "scripted"

    def __init__(self, script: Script, **options: Any) -> None:
        super().__init__(**options)
        self.script = script

    def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        return self.script(turn)


def test_text_deltas_stream_as_one_artifact_whose_last_chunk_is_marked(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        for piece in ("Hel", "lo, ", turn.text):
            yield TextDelta(piece)

    agent = serve(Scripted(script))
    task = agent.send("world")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["name"] for a in task["artifacts"]] == ["answer"]
    assert answer_text(task) == "Hello, world"
    assert chunks(agent.events(task["id"])) == [("Hel", False, False), ("lo, ", True, False), ("world", True, True)]


class HandWritten(AgentExecutor):
    """A hand-written streaming executor: each delta an artifact chunk as it comes, the last marked."""

    def __init__(self, deltas: list[str]) -> None:
        self.deltas = deltas

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for i, delta in enumerate(self.deltas):
            first, last = i == 0, i == len(self.deltas) - 1
            await updater.add_artifact(
                [Part(text=delta)], "answer", name="answer" if first else "", append=not first, last_chunk=last
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise AssertionError("not cancelled here")


def test_each_chunk_stored_is_what_a_hand_written_streaming_executor_stores(serve: Any) -> None:
    # Every delta is an event of the task's log: what a chunk carries beyond its text is paid for
    # in every commit (bench/framework_writes.py), so it carries what a hand-written one would.
    deltas = [f"tok{i}" for i in range(5)]

    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        for delta in deltas:
            yield TextDelta(delta)

    bridged, by_hand = serve(Scripted(script)), serve(HandWritten(deltas))
    ours, theirs = bridged.send("go"), by_hand.send("go")

    def stored_chunks(agent: Any, task: Any) -> list[str]:
        events = agent.events(task["id"])
        return [
            e.artifact_update.model_dump_json(exclude={"task_id", "context_id"}) for e in events if e.artifact_update
        ]

    assert stored_chunks(bridged, ours) == stored_chunks(by_hand, theirs)
    assert ours["artifacts"] == theirs["artifacts"]


def test_a_run_resumed_after_a_pause_streams_a_new_answer_and_keeps_the_first(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        if turn.resume is None:
            yield TextDelta("Checking ")
            yield TextDelta("first.")
            yield Pause("May I book it?", state=b"paused")
            return
        yield TextDelta("Booked.")

    agent = serve(Scripted(script))
    done = agent.reply(agent.send("book a room"), "yes")

    assert [(a["artifactId"], a["name"], a["parts"]) for a in done["artifacts"]] == [
        ("answer", "answer", [{"text": "Checking first."}]),  # its chunks, joined
        ("answer-2", "answer", [{"text": "Booked."}]),
    ]


def test_a_tool_call_is_a_working_status_naming_the_tool_without_its_arguments(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        yield ToolCall("lookup", "call-1", {"api_key": "sk-live-SECRET"})
        yield ToolResult("lookup", "call-1", {"rows": "SECRET-ROWS"})
        yield TextDelta("done")

    agent = serve(Scripted(script))
    task = agent.send("go")

    events = agent.events(task["id"])
    calls = [e.status_update for e in events if e.status_update and e.status_update.metadata]
    assert [(c.status.state, c.metadata) for c in calls] == [
        (TaskState.TASK_STATE_WORKING, {"tool": "lookup", "toolCallId": "call-1"})
    ]
    assert calls[0].status.message is not None
    assert calls[0].status.message.parts[0].text == "Calling tool lookup"
    logged = "".join(e.model_dump_json() for e in events)
    assert "SECRET" not in logged
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


def test_tool_details_opted_in_carry_the_arguments_and_the_result(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        yield ToolCall("lookup", "call-1", {"city": "Paris"})
        yield ToolResult("lookup", "call-1", {"temp": 21})
        yield TextDelta("21 degrees")

    agent = serve(Scripted(script, tool_details=True))
    task = agent.send("go")

    data = status_data(agent.events(task["id"]))
    assert data == [{"tool": "lookup", "arguments": {"city": "Paris"}}, {"tool": "lookup", "result": {"temp": 21}}]


def test_a_pause_asks_the_question_and_the_next_message_resumes_the_run_with_its_state(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        if turn.resume is None:
            yield TextDelta("Checking first.")
            yield Pause("May I book it?", state=b"run-7 at step 3")
            return
        yield TextDelta(f"Resumed {turn.resume.decode()} with {turn.text!r}.")

    agent = serve(Scripted(script))
    asked = agent.send("book a room")

    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["parts"] == [{"text": "May I book it?"}]
    assert chunks(agent.events(asked["id"])) == [("Checking first.", False, True)]
    done = agent.reply(asked, "yes")
    assert done["id"] == asked["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "Resumed run-7 at step 3 with 'yes'." in answer_text(done)


def _remembering() -> Scripted:
    """Answers with everything said in the conversation so far, and remembers this message."""

    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        said = (turn.memory or b"").decode() + turn.text + ";"
        turn.keep(said.encode())
        yield TextDelta(said)

    return Scripted(script)


def test_turns_of_one_context_share_memory_and_two_owners_of_one_context_id_never_do(serve: Any) -> None:
    agent = serve(_remembering())
    first = agent.send("I am Alice", context_id="shared-context")
    second = agent.send("who am I?", context_id="shared-context")
    bobs = agent.send("I am Bob", as_="bob", context_id="shared-context")

    assert answer_text(first) == "I am Alice;"
    assert answer_text(second) == "I am Alice;who am I?;"
    assert bobs["contextId"] == "shared-context"
    assert answer_text(bobs) == "I am Bob;"
    assert answer_text(agent.send("and now?", context_id="shared-context")) == "I am Alice;who am I?;and now?;"


def test_cancel_mid_stream_stops_the_framework_and_nothing_is_written_after_canceled(serve: Any) -> None:
    stopped: list[str] = []

    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        try:
            n = 0
            while True:
                n += 1
                yield TextDelta(f"chunk {n} ")
                await asyncio.sleep(0.02)
        finally:
            stopped.append("closed")

    agent = serve(Scripted(script))
    events = agent.cancel_mid_stream("go on forever")

    assert stopped == ["closed"]
    last = events[-1].status_update
    assert last is not None
    assert agent.task(last.task_id)["status"]["state"] == "TASK_STATE_CANCELED"


def test_a_framework_exception_fails_the_task_with_a_safe_message_and_is_logged(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        yield TextDelta("Partial ")
        raise RuntimeError("model refused: prompt='secret plan' key=sk-live-SECRET")

    agent = serve(Scripted(script))
    with caplog.at_level(logging.ERROR, logger="a2a_serverless.frameworks._bridge"):
        task = agent.send("go")

    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": FAILED_TEXT}]
    assert chunks(agent.events(task["id"])) == [("Partial ", False, True)]  # closed, not left open
    assert "SECRET" not in str(agent.task(task["id"]))
    assert any("sk-live-SECRET" in (r.exc_text or "") for r in caplog.records)


def test_output_that_is_not_text_is_an_artifact_of_its_own(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        yield Output([Part(data={"city": "Paris", "temp": 21})], name="forecast")

    task = serve(Scripted(script)).send("go")

    assert [(a["name"], a["parts"]) for a in task["artifacts"]] == [
        ("forecast", [{"data": {"city": "Paris", "temp": 21}}])
    ]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_turn_whose_context_memory_moved_meanwhile_keeps_its_answer_and_drops_its_memory(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        state = turn.context.state
        assert state is not None
        if turn.text == "race":  # another turn of the context saves first, while this one runs
            await state.save(f"scripted/context/{turn.context.context_id}", b"the other turn;", version=1)
        turn.keep((turn.memory or b"") + turn.text.encode() + b";")
        yield TextDelta(f"answered {turn.text}")

    agent = serve(Scripted(script))
    agent.send("first", context_id="ctx")
    with caplog.at_level(logging.WARNING, logger="a2a_serverless.frameworks._bridge"):
        raced = agent.send("race", context_id="ctx")
    after = agent.send("after", context_id="ctx")

    assert raced["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(raced) == "answered race"
    assert "saved its memory first" in caplog.text
    memory = agent.runtime.agent_state.load_state(Scope("", "alice"), "scripted/context/ctx")
    assert memory.data == b"\x00the other turn;after;"  # the racing turn's memory was not written over it
    assert after["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_memory_larger_than_an_item_is_kept_as_an_object_and_read_back(serve: Any) -> None:
    async def script(turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        if turn.memory is None:
            turn.keep(bytes(range(256)) * 2048)  # 512 KiB: over what the table holds inline
            yield TextDelta("remembered")
            return
        yield TextDelta(f"{len(turn.memory)} bytes, intact: {turn.memory == bytes(range(256)) * 2048}")

    agent = serve(Scripted(script))
    agent.send("remember this", context_id="ctx")
    task = agent.send("what do you remember?", context_id="ctx")

    assert answer_text(task) == "524288 bytes, intact: True"
    stored = agent.runtime.agent_state.load_state(Scope("", "alice"), "scripted/context/ctx")
    assert len(stored.data) < 100  # the entry holds the object's digest, not the memory
