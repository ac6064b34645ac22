"""Google ADK agents behind the app (``frameworks.google_adk``), on a scripted model
(``adk_models.ScriptedLlm``, ADK's public ``BaseLlm``): no network, no key. How ADK maps to A2A and
what only ADK does; the stories every adapter tells are in ``test_stories``."""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import FunctionTool, LongRunningFunctionTool, ToolContext
from google.adk.tools.base_toolset import BaseToolset
from google.genai import types

from a2a_serverless.frameworks.google_adk import adk_executor
from a2a_serverless.models import TaskState
from a2a_serverless.transitions import FAILED_TEXT

from .adk_models import Step, returned, said, scripted_agent
from .conftest import answer_text, states


def _booking(booked: list[int]) -> FunctionTool:
    """A tool that books a room (into ``booked``) once a person confirms it."""

    def book(room: int) -> str:
        """Books a room."""
        booked.append(room)
        return f"room {room} booked"

    return FunctionTool(book, require_confirmation=True)


def test_a_long_running_tool_asks_its_question_and_the_reply_is_its_result(serve: Any) -> None:
    def ask_person(question: str) -> None:
        """Asks the person a question; the answer comes later."""

    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        if answers := returned(request):
            yield f"Hello, {answers[0]['result']}!"
            return
        yield types.FunctionCall(id="q1", name="ask_person", args={"question": "What is your name?"})

    agent = serve(adk_executor(scripted_agent(script, tools=[LongRunningFunctionTool(ask_person)])))
    asked = agent.send("greet me")
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["parts"][0] == {"text": "What is your name?"}
    done = agent.send("Ada", task_id=asked["id"], context_id=asked["contextId"])

    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(done) == "Hello, Ada!"


def test_a_tools_own_confirmation_hint_is_the_question_and_its_payload_comes_from_the_reply(serve: Any) -> None:
    sent: list[Any] = []

    def transfer(amount: int, tool_context: ToolContext) -> dict[str, Any]:
        """Transfers money."""
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint=f"Transfer ${amount}?")
            return {"status": "waiting"}
        confirmation = tool_context.tool_confirmation
        sent.append((amount, confirmation.confirmed, confirmation.payload))
        return {"status": "sent"}

    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        if returned(request) == [{"status": "sent"}]:
            yield "Sent."
            return
        yield types.FunctionCall(id="t1", name="transfer", args={"amount": 50})

    agent = serve(adk_executor(scripted_agent(script, tools=[transfer])))
    asked = agent.send("send Bob $50")
    assert asked["status"]["message"]["parts"][0] == {
        "text": "Transfer $50? Reply yes to approve, anything else to reject."
    }
    parts = [{"text": "ok"}, {"data": {"memo": "rent"}}]
    reply = {"messageId": "m-2", "role": "ROLE_USER", "parts": parts, "taskId": asked["id"]}
    done = agent._post("/message:send", {"message": reply}, "alice")["task"]  # conftest's send is text only

    assert sent == [(50, True, {"memo": "rent"})]
    assert answer_text(done) == "Sent."


def test_a_pause_whose_memory_lost_to_another_turn_of_the_context_still_resumes(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    booked: list[int] = []
    other_turn_done = threading.Event()

    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        if answers := returned(request):
            yield f"Done: {answers[0]['result']}."
        elif said(request)[-1] == "hello":
            yield "Hi."
        else:
            for _ in range(2000):  # a hang guard on the wait, not a timing
                if other_turn_done.is_set():
                    break
                await asyncio.sleep(0.01)
            yield types.FunctionCall(id="b1", name="book", args={"room": 7})

    agent = serve(adk_executor(scripted_agent(script, tools=[_booking(booked)])))
    # Given a turn that pauses after another turn of its context, started later, kept its memory
    booking = agent.send("book room 7", context_id="ctx-1", wait=False)
    agent.wait_until(booking["id"], lambda events: TaskState.TASK_STATE_WORKING in states(events))
    assert answer_text(agent.send("hello", context_id="ctx-1")) == "Hi."
    with caplog.at_level(logging.WARNING, logger="a2a_serverless.frameworks._bridge"):
        other_turn_done.set()
        agent.wait_until(booking["id"], lambda events: TaskState.TASK_STATE_INPUT_REQUIRED in states(events))
    assert any("this turn's is not kept" in r.getMessage() for r in caplog.records)

    # When the person approves, the paused invocation resumes from the events its pause kept
    done = agent.send("yes", task_id=booking["id"], context_id="ctx-1")

    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert booked == [7]
    assert answer_text(done) == "Done: room 7 booked."


class _Connection(BaseToolset):
    """A toolset holding a connection (an MCP server's, say): it records when it is closed."""

    def __init__(self, closed: list[str]) -> None:
        super().__init__()
        self.closed = closed

    async def get_tools(self, readonly_context: Any = None) -> list[Any]:
        return []

    async def close(self) -> None:
        self.closed.append("closed")


async def _hello(request: LlmRequest) -> AsyncIterator[Step]:
    yield "Hello."


def test_a_factorys_agent_is_this_runs_and_its_toolsets_close_when_the_run_ends(serve: Any) -> None:
    closed: list[str] = []
    agent = serve(adk_executor(lambda: scripted_agent(_hello, tools=[_Connection(closed)])))
    agent.send("hi")
    agent.send("hi again")

    assert closed == ["closed", "closed"]


def test_a_shared_agents_toolsets_stay_open_across_runs(serve: Any) -> None:
    closed: list[str] = []
    agent = serve(adk_executor(scripted_agent(_hello, tools=[_Connection(closed)])))
    assert answer_text(agent.send("hi")) == "Hello."

    assert closed == []


def test_an_error_response_of_the_model_fails_the_task_with_the_generic_message(serve: Any) -> None:
    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        yield LlmResponse(error_code="SAFETY", error_message="blocked: the prompt 'top SECRET plan'")

    agent = serve(adk_executor(scripted_agent(script)))
    task = agent.send("go")

    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": FAILED_TEXT}]
    assert "SECRET" not in str(agent.task(task["id"]))


def test_files_in_reach_the_model_and_files_out_are_an_artifact(serve: Any) -> None:
    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        blobs = [p.inline_data for c in request.contents for p in c.parts or [] if p.inline_data]
        yield f"Got {len(blobs)} file of {blobs[0].mime_type}: {blobs[0].data!r}."
        yield types.Part(inline_data=types.Blob(data=b"\x89PNG...", mime_type="image/png"))

    agent = serve(adk_executor(scripted_agent(script)))
    parts = [{"text": "describe"}, {"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "hello.txt"}]
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts}
    task = agent._post("/message:send", {"message": message}, "alice")["task"]  # conftest's send is text only

    assert answer_text(task) == "Got 1 file of text/plain: b'hello'."
    outputs = [a for a in task["artifacts"] if a["name"] == "output"]
    assert [(p["mediaType"], base64.b64decode(p["raw"])) for a in outputs for p in a["parts"]] == [
        ("image/png", b"\x89PNG...")
    ]


def test_a_file_a_tool_saves_as_an_adk_artifact_is_an_artifact_of_the_task(serve: Any) -> None:
    async def chart(tool_context: ToolContext) -> str:
        """Draws the chart."""
        png = types.Part(inline_data=types.Blob(data=b"\x89PNG chart", mime_type="image/png"))
        await tool_context.save_artifact("chart.png", png)
        return "saved"

    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        if returned(request):
            yield "Here is the chart."
            return
        yield types.FunctionCall(id="c1", name="chart", args={})

    task = serve(adk_executor(scripted_agent(script, tools=[chart]))).send("draw")

    files = [p for a in task["artifacts"] if a["name"] == "output" for p in a["parts"]]
    assert [(p["filename"], p["mediaType"], base64.b64decode(p["raw"])) for p in files] == [
        ("chart.png", "image/png", b"\x89PNG chart")
    ]
    assert answer_text(task) == "Here is the chart."
