"""OpenAI Agents SDK agents behind the app (``frameworks.openai_agents``), on a scripted model (a
subclass of the SDK's ``Model`` streaming what each test scripts: text deltas, function calls): no
network, no key, and the SDK's tracing off for every run (``RunConfig(tracing_disabled=True)``), so
nothing is exported. How the SDK maps to A2A and what only it does; the stories every adapter
tells are in ``test_stories``."""

from __future__ import annotations

import base64
import itertools
import json
import uuid
from collections.abc import Callable
from typing import Any

from agents import (
    Agent,
    RunConfig,
    RunContextWrapper,
    ToolOutputFileContent,
    ToolOutputImage,
    ToolOutputText,
    TResponseInputItem,
    function_tool,
)
from agents.testing import function_call
from pydantic import BaseModel

from a2a_serverless.execution import RequestContext
from a2a_serverless.frameworks.openai_agents import AgentSource, OpenAIAgentsExecutor, openai_agents_executor

from .conftest import ServedAgent, answer_text, assert_stored_as_object, chunks
from .openai_agents_model import ScriptedModel, Stream, drawing_agent, said_by_user, tool_outputs

NO_TRACING = RunConfig(tracing_disabled=True)
Script = Callable[[list[TResponseInputItem]], Stream]


class Forecast(BaseModel):
    city: str
    temp: int


def executor(agent: AgentSource, **options: Any) -> OpenAIAgentsExecutor:
    """The adapter as a user writes it, with the SDK's tracing off."""
    return openai_agents_executor(agent, run_config=NO_TRACING, **options)


def an_agent(script: Script, name: str = "assistant", **fields: Any) -> Agent[Any]:
    return Agent(name=name, model=ScriptedModel(script), **fields)


def _booking_agent(booked: list[int], model: list[ScriptedModel]) -> Agent[Any]:
    @function_tool(needs_approval=True)
    def book(room: int) -> str:
        """Book a room."""
        booked.append(room)
        return f"room {room} booked"

    async def script(items: list[TResponseInputItem]) -> Stream:
        if returned := tool_outputs(items):
            yield f"Done: {returned[0]}."
            return
        if not said_by_user(items)[-1].startswith("book"):
            yield "Nothing to book."
            return
        yield "Booking needs your approval. "
        yield function_call("book", {"room": 7}, call_id="b1")

    agent = an_agent(script, tools=[book])
    model.append(agent.model)  # type: ignore[arg-type]
    return agent


def test_the_approved_run_goes_on_from_its_paused_model_call_and_the_reply_is_no_new_prompt(serve: Any) -> None:
    # (asking and resuming, as every framework whose tools ask for approval: test_stories)
    booked: list[int] = []
    models: list[ScriptedModel] = []
    agent = serve(executor(lambda: _booking_agent(booked, models)))
    asked = agent.send("book room 7")
    done = agent.reply(asked, "yes")

    assert booked == [7]
    assert "Done: room 7 booked." in answer_text(done)
    # The same run went on: the resumed model call continues the paused one (its call, then the
    # tool's output), and the reply was an approval, not a new prompt.
    resumed = models[-1].inputs[-1]
    assert said_by_user(resumed) == ["book room 7"]
    assert [i.get("type") for i in resumed[-2:] if isinstance(i, dict)] == ["function_call", "function_call_output"]


def test_with_tool_details_the_question_shows_the_arguments_and_the_resumed_run_the_named_result(
    serve: Any,
) -> None:
    agent = serve(executor(lambda: _booking_agent([], []), tool_details=True))
    asked = agent.send("book room 7")
    agent.send("yes", task_id=asked["id"], context_id=asked["contextId"])

    assert asked["status"]["message"]["parts"][1] == {
        "data": {"tools": [{"tool": "book", "toolCallId": "b1", "arguments": {"room": 7}}]}
    }
    results = [
        e.status_update.metadata
        for e in agent.events(asked["id"])
        if e.status_update and e.status_update.metadata and e.status_update.status.message
        if "returned" in (e.status_update.status.message.parts[0].text or "")
    ]
    assert results == [{"tool": "book", "toolCallId": "b1"}]  # named, though the call was made before the pause


def test_calls_pending_together_are_asked_once_and_one_reply_approves_them_all(serve: Any) -> None:
    done: list[str] = []

    @function_tool(needs_approval=True)
    def book(room: int) -> str:
        """Book a room."""
        done.append(f"room {room}")
        return "booked"

    @function_tool(needs_approval=True)
    def pay(amount: int) -> str:
        """Pay."""
        done.append(f"paid {amount}")
        return "paid"

    async def script(items: list[TResponseInputItem]) -> Stream:
        if returned := tool_outputs(items):
            yield " and ".join(returned)
            return
        yield function_call("book", {"room": 7}, call_id="b1")
        yield function_call("pay", {"amount": 90}, call_id="p1")

    agent = serve(executor(an_agent(script, tools=[book, pay])))
    asked = agent.send("book room 7 and pay")
    finished = agent.send("ok", task_id=asked["id"], context_id=asked["contextId"])

    assert asked["status"]["message"]["parts"][0]["text"].startswith("Approve calling tools book and pay?")
    assert sorted(done) == ["paid 90", "room 7"]
    assert answer_text(finished) == "booked and paid"


def test_the_runs_context_is_made_from_the_request_and_made_again_when_the_run_resumes(serve: Any) -> None:
    made = itertools.count(1)

    @function_tool(needs_approval=True)
    def whoami(wrapper: RunContextWrapper[dict[str, Any]]) -> str:
        """Who is asking."""
        return f"{wrapper.context['caller']} (context #{wrapper.context['made']})"

    async def script(items: list[TResponseInputItem]) -> Stream:
        if returned := tool_outputs(items):
            yield f"You are {returned[0]}."
            return
        yield function_call("whoami", {}, call_id="c1")

    def context(request: RequestContext) -> dict[str, Any]:
        return {"caller": request.caller, "made": next(made)}

    agent = serve(executor(an_agent(script, tools=[whoami]), context=context))
    asked = agent.send("who am I?", as_="bob")
    done = agent.send("yes", as_="bob", task_id=asked["id"], context_id=asked["contextId"])

    # The paused run kept no context: the resumed run's is made again from its request.
    assert answer_text(done) == "You are bob (context #2)."


def test_after_a_handoff_the_new_agent_answers_in_the_same_streamed_answer(serve: Any) -> None:
    async def billing(items: list[TResponseInputItem]) -> Stream:
        yield "Billing "
        yield "here."

    async def triage(items: list[TResponseInputItem]) -> Stream:
        yield "Let me transfer you. "
        yield function_call("transfer_to_billing", {}, call_id="h1")

    agent = serve(executor(an_agent(triage, name="triage", handoffs=[an_agent(billing, name="billing")])))
    task = agent.send("my invoice is wrong")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert chunks(agent.events(task["id"])) == [
        ("Let me transfer you. ", False, False),
        ("Billing ", True, False),
        ("here.", True, True),
    ]


def test_after_a_handoff_to_an_agent_with_structured_output_its_json_is_not_streamed(serve: Any) -> None:
    async def forecaster(items: list[TResponseInputItem]) -> Stream:
        yield '{"city": "Paris", '
        yield '"temp": 21}'

    async def triage(items: list[TResponseInputItem]) -> Stream:
        yield "Asking the forecaster."
        yield function_call("transfer_to_forecaster", {}, call_id="h1")

    handoff = an_agent(forecaster, name="forecaster", output_type=Forecast)
    agent = serve(executor(an_agent(triage, name="triage", handoffs=[handoff])))
    task = agent.send("weather in Paris?")

    assert answer_text(task) == "Asking the forecaster."
    outputs = [a["parts"] for a in task["artifacts"] if a["name"] == "output"]
    assert outputs == [[{"data": {"city": "Paris", "temp": 21}}]]


def test_files_and_data_in_the_message_reach_the_model(serve: Any) -> None:
    async def script(items: list[TResponseInputItem]) -> Stream:
        yield "seen"

    model = ScriptedModel(script)
    agent: ServedAgent = serve(executor(Agent(name="assistant", model=model)))
    png = b"\x89PNG fake image"
    parts = [
        {"text": "what is this?"},
        {"raw": base64.b64encode(png).decode(), "mediaType": "image/png", "filename": "a.png"},
        {"raw": base64.b64encode(b"%PDF-1.7").decode(), "mediaType": "application/pdf", "filename": "a.pdf"},
        {"data": {"order": 17}},
    ]
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts}
    task = agent._post("/message:send", {"message": message}, "alice")["task"]  # conftest's send is text only

    content = model.inputs[0][-1]["content"]  # type: ignore[typeddict-item]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert content == [
        {"type": "input_text", "text": "what is this?"},
        {
            "type": "input_image",
            "image_url": "data:image/png;base64," + base64.b64encode(png).decode(),
            "detail": "auto",
        },
        {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0xLjc=", "filename": "a.pdf"},
        {"type": "input_text", "text": json.dumps({"order": 17})},
    ]


def test_a_hosted_image_generation_result_is_an_artifact_with_the_image(serve: Any) -> None:
    png = b"\x89PNG\r\n\x1a\n a cat"
    agent = serve(executor(drawing_agent(png)))

    task = agent.send("draw a cat")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == "Here is your cat."
    outputs = [a["parts"] for a in task["artifacts"] if a["name"] == "output"]
    assert outputs == [[{"raw": base64.b64encode(png).decode(), "mediaType": "image/png", "filename": "ig1.png"}]]


def test_a_generated_image_above_the_blob_threshold_is_stored_as_an_object(serve: Any) -> None:
    large = b"\x89PNG" + bytes(range(256)) * 160  # 40 KiB, above blob_threshold_bytes (32 KiB)
    agent = serve(executor(drawing_agent(large)))

    task = agent.send("draw a large cat")

    assert_stored_as_object(agent, task["id"], large, "image/png")


PNG_URL = "data:image/png;base64," + base64.b64encode(b"\x89PNG chart").decode()


@function_tool
def chart(sales: str) -> list[Any]:
    """Chart the sales."""
    return [
        ToolOutputText(text="The chart and its report."),
        ToolOutputImage(image_url=PNG_URL),
        ToolOutputFileContent(file_data=base64.b64encode(b"%PDF-1.7").decode(), filename="report.pdf"),
    ]


def _calling(tool: str) -> Script:
    async def script(items: list[TResponseInputItem]) -> Stream:
        if returned := tool_outputs(items):
            yield f"The tool said: {returned[0][:40]}"
            return
        yield function_call(tool, {"sales": "Q3"}, call_id="c1")

    return script


def test_a_tools_images_and_files_that_end_the_run_are_an_artifact_its_text_the_answer(serve: Any) -> None:
    agent = serve(executor(an_agent(_calling("chart"), tools=[chart], tool_use_behavior="stop_on_first_tool")))

    task = agent.send("chart Q3")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == "The chart and its report."
    outputs = [a["parts"] for a in task["artifacts"] if a["name"] == "output"]
    assert outputs == [
        [
            {"raw": base64.b64encode(b"\x89PNG chart").decode(), "mediaType": "image/png"},
            {"raw": base64.b64encode(b"%PDF-1.7").decode(), "mediaType": "application/pdf", "filename": "report.pdf"},
        ]
    ]


def test_a_tools_text_that_ends_the_run_is_the_answer(serve: Any) -> None:
    @function_tool
    def total(sales: str) -> str:
        """Total the sales."""
        return f"{sales} total: 42"

    agent = serve(executor(an_agent(_calling("total"), tools=[total], tool_use_behavior="stop_on_first_tool")))

    task = agent.send("total Q3")

    assert answer_text(task) == "Q3 total: 42"
    assert [a["name"] for a in task["artifacts"]] == ["answer"]


def test_a_tools_images_for_the_model_are_not_an_artifact(serve: Any) -> None:
    agent = serve(executor(an_agent(_calling("chart"), tools=[chart])))  # the model is asked again

    task = agent.send("chart Q3")

    assert answer_text(task).startswith("The tool said: ")
    assert [a["name"] for a in task["artifacts"]] == ["answer"]


def test_a_file_in_above_the_blob_threshold_reaches_the_model_whole(serve: Any) -> None:
    async def script(items: list[TResponseInputItem]) -> Stream:
        yield "seen"

    model = ScriptedModel(script)
    agent: ServedAgent = serve(executor(Agent(name="assistant", model=model)))
    large = b"%PDF-1.7" + bytes(range(256)) * 160  # 40 KiB: the task stores it as an object
    parts = [{"raw": base64.b64encode(large).decode(), "mediaType": "application/pdf", "filename": "big.pdf"}]

    task = agent.send("", parts=parts)

    content = model.inputs[0][-1]["content"]  # type: ignore[typeddict-item]
    assert answer_text(task) == "seen"
    assert content[0]["file_data"] == "data:application/pdf;base64," + base64.b64encode(large).decode()
    assert agent.stored_object(task["id"], large) == large
