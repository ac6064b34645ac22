"""The bridge every framework adapter shares, driven by a scripted framework: what each kind of
framework event becomes in the task, through the app, the worker and the store. The stories every
framework tells (a streamed answer, a tool call, a context's memory, cancel, a failure, structured
output) run on the scripted framework too, beside the five adapters: ``test_stories``."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.frameworks import FrameworkEvent, Pause, TextDelta, Turn
from a2a_serverless.models import Part
from a2a_serverless.ports import Scope

from .conftest import answer_text, chunks
from .scripted_framework import Scripted


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
