"""The stories every framework adapter tells, told once: each test runs on each framework (the
``framework`` fixture, one parameter per adapter: ``[strands]``, ``[google-adk]``,
``[openai-agents]``, ``[langgraph]``, ``[pydantic-ai]``, and ``[scripted]``, the bridge alone on a
framework whose run is a script). A framework is a ``Framework``: how it makes, on its scripted
model, the agent each story needs, and what differs in what the task shows of it (the tool's
result with ``tool_details``). Its imports are its own: a framework whose extra is not installed
skips its stories. What only one framework does (its mapping of files and data, its way to ask a
person) is in its own suite, ``test_<framework>.py``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from a2a_serverless.execution import AgentExecutor
from a2a_serverless.json_types import Json
from a2a_serverless.models import TaskState
from a2a_serverless.transitions import FAILED_TEXT

from .conftest import answer_text, chunks, status_data, tool_statuses

PIECES = ("The ", "answer ", "is 42.")
SECRET_ARGUMENTS = {"city": "Paris", "token": "sk-SECRET"}
FORECAST = {"city": "Paris", "temp": 21}
APPROVAL = "Approve calling tool book? Reply yes to approve, anything else to "
TOOLS_ASKED = {"data": {"tools": [{"tool": "book", "toolCallId": "b1"}]}}  # the arguments only with tool_details
ERROR = "api key sk-live-SECRET rejected for prompt 'top secret plan'"


class Forecast(BaseModel):
    city: str
    temp: int


@dataclass(frozen=True)
class Framework:
    """How a framework makes the agent of each story (each an executor, on its scripted model)."""

    streaming: Callable[[tuple[str, ...]], AgentExecutor]
    """Streams these pieces as its answer."""
    weather: Callable[[bool], AgentExecutor]
    """Calls the tool ``weather`` (call id ``w1``) with ``SECRET_ARGUMENTS``, which returns "sunny in
    Paris", and answers "It is sunny in Paris." (``tool_details`` as the argument says)."""
    weather_result: Any
    """The tool's result as ``tool_details`` shows it."""
    remembering: Callable[[list[int]], AgentExecutor]
    """Answers with the user's texts of the conversation so far, joined by " | "; made by a
    function that appends to the list each time it makes the agent."""
    forever: Callable[[list[str]], AgentExecutor]
    """Streams without end; appends "closed" to the list when its stream is closed."""
    failing: Callable[[Exception], AgentExecutor]
    """Streams "Partial ", then its model fails with the exception."""
    forecast: Callable[[], AgentExecutor] | None = None
    """Answers with ``FORECAST`` as structured output (None: the framework has none of its own)."""
    output_name: str = "output"
    made_per_run: bool = False
    """Whether a function making the agent is called for every run."""
    booking: Callable[[list[int]], AgentExecutor] | None = None
    """Its tool ``book`` (appending the room to the list, and returning "room 7 booked") needs a
    person's approval: asked to book, it says "Booking needs your approval. " and calls
    ``book(room=7)`` (call id ``b1``), and answers "Done: <the tool's result>." once it has it.
    Asked anything else, it answers with the user's texts of the conversation, as ``remembering``."""
    approval_question: list[Json] | None = None
    """The parts of the question the approval asks."""
    denied: str = ""
    """The tool's result when the reply is not an approval."""


def _strands() -> Framework:
    from strands import Agent, tool
    from strands.types.content import Messages

    from a2a_serverless.frameworks.strands import strands_executor

    from .strands_scripted import Call, Fail, Forever, Script, ScriptedModel, Text

    def on(*script: Script, made: list[int] | None = None, **options: Any) -> Any:
        model = ScriptedModel(*script)

        def make() -> Agent:
            if made is not None:
                made.append(1)
            return Agent(model=model, callback_handler=None, **options)

        return make

    @tool
    def weather(city: str, token: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    def returned(messages: Messages) -> Text:
        results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
        return Text(f"It is {results[-1]['content'][0]['text']}.")

    def said_so_far(messages: Messages) -> Text:
        said = [b["text"] for m in messages if m["role"] == "user" for b in m["content"] if "text" in b]
        return Text(" | ".join(said))

    return Framework(
        streaming=lambda pieces: strands_executor(on(Text(*pieces))),
        weather=lambda details: strands_executor(
            on(Call("weather", SECRET_ARGUMENTS, id="w1"), returned, tools=[weather]), tool_details=details
        ),
        weather_result={"status": "success", "content": [{"text": "sunny in Paris"}]},
        remembering=lambda made: strands_executor(on(*[said_so_far] * 4, made=made)),
        forever=lambda closed: strands_executor(on(Forever(closed))),
        failing=lambda error: strands_executor(on(Fail(error, before="Partial "))),
        forecast=lambda: strands_executor(on(Call("Forecast", FORECAST), structured_output_model=Forecast)),
        made_per_run=True,
    )


def _google_adk() -> Framework:
    from google.adk.models.llm_request import LlmRequest
    from google.adk.tools import FunctionTool
    from google.adk.workflow import START, Workflow
    from google.genai import types

    from a2a_serverless.frameworks.google_adk import adk_executor

    from .adk_models import Step, returned, said, scripted_agent

    def streaming(pieces: tuple[str, ...]) -> AgentExecutor:
        async def script(request: LlmRequest) -> AsyncIterator[Step]:
            for piece in pieces:
                yield piece

        return adk_executor(scripted_agent(script))

    def weather(city: str, token: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    async def weather_script(request: LlmRequest) -> AsyncIterator[Step]:
        if answers := returned(request):
            yield f"It is {answers[0]['result']}."
            return
        yield types.FunctionCall(id="w1", name="weather", args=SECRET_ARGUMENTS)

    def remembering(made: list[int]) -> AgentExecutor:
        async def script(request: LlmRequest) -> AsyncIterator[Step]:
            yield " | ".join(said(request))

        def make() -> Any:
            made.append(1)
            return scripted_agent(script)

        return adk_executor(make)

    def forever(closed: list[str]) -> AgentExecutor:
        async def script(request: LlmRequest) -> AsyncIterator[Step]:
            async for piece in _endless(closed):
                yield piece

        return adk_executor(scripted_agent(script))

    def failing(error: Exception) -> AgentExecutor:
        async def script(request: LlmRequest) -> AsyncIterator[Step]:
            yield "Partial "
            raise error

        return adk_executor(scripted_agent(script))

    def booking(booked: list[int]) -> AgentExecutor:
        def book(room: int) -> str:
            """Books a room."""
            booked.append(room)
            return f"room {room} booked"

        async def script(request: LlmRequest) -> AsyncIterator[Step]:
            if answers := returned(request):
                yield f"Done: {answers[0].get('result') or answers[0].get('error')}."
            elif said(request)[-1].startswith("book"):
                yield "Booking needs your approval. "
                yield types.FunctionCall(id="b1", name="book", args={"room": 7})
            else:
                yield " | ".join(said(request))

        return adk_executor(scripted_agent(script, tools=[FunctionTool(book, require_confirmation=True)]))

    def forecast() -> AgentExecutor:  # a workflow's data output
        def node(node_input: Any) -> dict[str, Any]:
            return dict(FORECAST)

        return adk_executor(Workflow(name="weather", edges=[(START, node)]))

    return Framework(
        streaming=streaming,
        weather=lambda details: adk_executor(scripted_agent(weather_script, tools=[weather]), tool_details=details),
        weather_result={"result": "sunny in Paris"},
        remembering=remembering,
        forever=forever,
        failing=failing,
        forecast=forecast,
        made_per_run=True,
        booking=booking,
        approval_question=[{"text": APPROVAL + "reject."}, TOOLS_ASKED],
        denied="This tool call is rejected.",
    )


def _openai_agents() -> Framework:
    from agents import Agent, RunConfig, TResponseInputItem, function_tool
    from agents.testing import function_call

    from a2a_serverless.frameworks.openai_agents import openai_agents_executor

    from .openai_agents_model import ScriptedModel, Stream, said_by_user, tool_outputs

    def executor(script: Callable[[list[TResponseInputItem]], Stream], **fields: Any) -> Any:
        details = fields.pop("tool_details", False)
        agent = Agent(name="assistant", model=ScriptedModel(script), **fields)
        return openai_agents_executor(agent, run_config=RunConfig(tracing_disabled=True), tool_details=details)

    def streaming(pieces: tuple[str, ...]) -> AgentExecutor:
        async def script(items: list[TResponseInputItem]) -> Stream:
            for piece in pieces:
                yield piece

        return executor(script)

    @function_tool
    def weather(city: str, token: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    async def weather_script(items: list[TResponseInputItem]) -> Stream:
        if returned := tool_outputs(items):
            yield f"It is {returned[0]}."
            return
        yield function_call("weather", SECRET_ARGUMENTS, call_id="w1")

    def remembering(made: list[int]) -> AgentExecutor:
        async def script(items: list[TResponseInputItem]) -> Stream:
            yield " | ".join(said_by_user(items))

        def make() -> Agent[Any]:
            made.append(1)
            return Agent(name="assistant", model=ScriptedModel(script))

        return openai_agents_executor(make, run_config=RunConfig(tracing_disabled=True))

    def forever(closed: list[str]) -> AgentExecutor:
        async def script(items: list[TResponseInputItem]) -> Stream:
            async for piece in _endless(closed):
                yield piece

        return executor(script)

    def failing(error: Exception) -> AgentExecutor:
        async def script(items: list[TResponseInputItem]) -> Stream:
            yield "Partial "
            raise error

        return executor(script)

    def booking(booked: list[int]) -> AgentExecutor:
        @function_tool(needs_approval=True)
        def book(room: int) -> str:
            """Book a room."""
            booked.append(room)
            return f"room {room} booked"

        async def script(items: list[TResponseInputItem]) -> Stream:
            if items[-1].get("type") == "function_call_output":  # the model is given the tool's result
                yield f"Done: {tool_outputs(items)[-1]}."
            elif said_by_user(items)[-1].startswith("book"):
                yield "Booking needs your approval. "
                yield function_call("book", {"room": 7}, call_id="b1")
            else:
                yield " | ".join(said_by_user(items))

        return executor(script, tools=[book])

    def forecast() -> AgentExecutor:  # its JSON is not streamed as the answer
        async def script(items: list[TResponseInputItem]) -> Stream:
            yield '{"city": "Paris", '
            yield '"temp": 21}'

        return executor(script, output_type=Forecast)

    return Framework(
        streaming=streaming,
        weather=lambda details: executor(weather_script, tools=[weather], tool_details=details),
        weather_result="sunny in Paris",
        remembering=remembering,
        forever=forever,
        failing=failing,
        forecast=forecast,
        booking=booking,
        approval_question=[{"text": APPROVAL + "deny."}, TOOLS_ASKED],
        denied="no, too expensive",
    )


def _langgraph() -> Framework:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from a2a_serverless.frameworks.langgraph import langgraph_executor

    from .langchain_models import streamed

    def on_model(pieces: Callable[[list[BaseMessage]], AsyncIterator[str]], **options: Any) -> AgentExecutor:
        model = streamed(pieces)

        async def agent_node(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        return langgraph_executor(_one_node(agent_node), **options)

    def _one_node(node: Any) -> Any:
        graph = StateGraph(MessagesState)
        graph.add_node("agent", node)
        graph.add_edge(START, "agent")
        graph.add_edge("agent", END)
        return graph.compile()

    def streaming(pieces: tuple[str, ...]) -> AgentExecutor:
        async def stream(messages: list[BaseMessage]) -> AsyncIterator[str]:
            for piece in pieces:
                yield piece

        return on_model(stream)

    @tool
    def weather(city: str, token: str) -> str:
        """Today's weather in a city."""
        return f"sunny in {city}"

    def weather_graph() -> Any:
        call = {"name": "weather", "args": SECRET_ARGUMENTS, "id": "w1"}
        answers = [AIMessage("", tool_calls=[call]), AIMessage("It is sunny in Paris.")]
        model = FakeMessagesListChatModel(responses=answers)

        async def agent_node(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent_node)
        graph.add_node("tools", ToolNode([weather]))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        return graph.compile()

    def remembering(made: list[int]) -> AgentExecutor:
        def echo(state: MessagesState) -> dict[str, Any]:
            said = [str(m.content) for m in state["messages"] if isinstance(m, HumanMessage)]
            return {"messages": [AIMessage(" | ".join(said))]}

        def make() -> Any:  # called on the first run only: the compiled graph serves every run
            made.append(1)
            return _one_node(echo)

        return langgraph_executor(make)

    def failing(error: Exception) -> AgentExecutor:
        async def stream(messages: list[BaseMessage]) -> AsyncIterator[str]:
            yield "Partial "
            raise error

        return on_model(stream)

    return Framework(
        streaming=streaming,
        weather=lambda details: langgraph_executor(weather_graph, tool_details=details),
        weather_result="sunny in Paris",
        remembering=remembering,
        forever=lambda closed: on_model(lambda messages: _endless(closed)),
        failing=failing,
    )


def _pydantic_ai() -> Framework:
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
    from pydantic_ai.models.test import TestModel

    from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor

    Stream = AsyncIterator[str | DeltaToolCalls]

    def streaming(pieces: tuple[str, ...]) -> AgentExecutor:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
            for piece in pieces:
                yield piece

        return pydantic_ai_executor(Agent(FunctionModel(stream_function=stream)))

    def weather(details: bool) -> AgentExecutor:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
            if returned := [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]:
                yield f"It is {returned[0].content}."
                return
            yield {
                0: DeltaToolCall(name="weather", json_args='{"city": "Paris", "token": "sk-SECRET"}', tool_call_id="w1")
            }

        agent = Agent(FunctionModel(stream_function=stream))

        @agent.tool_plain
        def weather(city: str, token: str) -> str:
            return f"sunny in {city}"

        return pydantic_ai_executor(agent, tool_details=details)

    def prompts(messages: list[ModelMessage]) -> list[str]:
        return [
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ]

    def remembering(made: list[int]) -> AgentExecutor:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
            yield " | ".join(prompts(messages))

        def make() -> Agent[None, str]:
            made.append(1)
            return Agent(FunctionModel(stream_function=stream))

        return pydantic_ai_executor(make)

    def forever(closed: list[str]) -> AgentExecutor:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
            async for piece in _endless(closed):
                yield piece

        return pydantic_ai_executor(Agent(FunctionModel(stream_function=stream)))

    def failing(error: Exception) -> AgentExecutor:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
            yield "Partial "
            raise error

        return pydantic_ai_executor(Agent(FunctionModel(stream_function=stream)))

    def booking(booked: list[int]) -> AgentExecutor:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> Stream:
            if returned := [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]:
                yield f"Done: {returned[0].content}."
            elif prompts(messages)[-1].startswith("book"):
                yield "Booking needs your approval. "
                yield {0: DeltaToolCall(name="book", json_args='{"room": 7}', tool_call_id="b1")}
            else:
                yield " | ".join(prompts(messages))

        agent = Agent(FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests])

        @agent.tool_plain(requires_approval=True)
        def book(room: int) -> str:
            booked.append(room)
            return f"room {room} booked"

        return pydantic_ai_executor(agent)

    def forecast() -> AgentExecutor:
        model = TestModel(custom_output_args=FORECAST)
        return pydantic_ai_executor(Agent(model, output_type=dict[str, Any]))

    return Framework(
        streaming=streaming,
        weather=weather,
        weather_result="sunny in Paris",
        remembering=remembering,
        forever=forever,
        failing=failing,
        forecast=forecast,
        booking=booking,
        approval_question=[{"text": APPROVAL + "deny."}, TOOLS_ASKED],
        denied="no, too expensive",
    )


def _scripted() -> Framework:
    from a2a_serverless.frameworks import FrameworkEvent, Output, TextDelta, ToolCall, ToolResult, Turn
    from a2a_serverless.models import Part

    from .scripted_framework import Scripted

    Run = AsyncGenerator[FrameworkEvent, None]

    def streaming(pieces: tuple[str, ...]) -> AgentExecutor:
        async def script(turn: Turn) -> Run:
            for piece in pieces:
                yield TextDelta(piece)

        return Scripted(script)

    async def weather(turn: Turn) -> Run:
        yield ToolCall("weather", "w1", dict(SECRET_ARGUMENTS))
        yield ToolResult("weather", "w1", "sunny in Paris")
        yield TextDelta("It is sunny in Paris.")

    def remembering(made: list[int]) -> AgentExecutor:
        async def script(turn: Turn) -> Run:  # its memory: the texts said so far, a line each
            said = [*(turn.memory or b"").decode().splitlines(), turn.text]
            turn.keep("\n".join(said).encode())
            yield TextDelta(" | ".join(said))

        return Scripted(script)

    def forever(closed: list[str]) -> AgentExecutor:
        async def script(turn: Turn) -> Run:
            async for piece in _endless(closed):
                yield TextDelta(piece)

        return Scripted(script)

    def failing(error: Exception) -> AgentExecutor:
        async def script(turn: Turn) -> Run:
            yield TextDelta("Partial ")
            raise error

        return Scripted(script)

    def forecast() -> AgentExecutor:
        async def script(turn: Turn) -> Run:
            yield Output([Part(data=dict(FORECAST))], name="forecast")

        return Scripted(script)

    return Framework(
        streaming=streaming,
        weather=lambda details: Scripted(weather, tool_details=details),
        weather_result="sunny in Paris",
        remembering=remembering,
        forever=forever,
        failing=failing,
        forecast=forecast,
        output_name="forecast",
    )


async def _endless(closed: list[str]) -> AsyncIterator[str]:
    """Text pieces without end (a pause between them), noting in ``closed`` when it is closed."""
    try:
        n = 0
        while True:
            n += 1
            yield f"chunk {n} "
            await asyncio.sleep(0.02)
    finally:
        closed.append("closed")


FRAMEWORKS = {
    # id: (the module its extra installs, how it tells the stories)
    "strands": ("strands", _strands),
    "google-adk": ("google.adk", _google_adk),
    "openai-agents": ("agents", _openai_agents),
    "langgraph": ("langgraph", _langgraph),
    "pydantic-ai": ("pydantic_ai", _pydantic_ai),
    "scripted": ("a2a_serverless.frameworks", _scripted),
}


@pytest.fixture(params=list(FRAMEWORKS))
def framework(request: pytest.FixtureRequest) -> Framework:
    """Each framework in turn; skipped where its extra is not installed."""
    module, tells = FRAMEWORKS[request.param]
    pytest.importorskip(module)
    return tells()


def test_the_answer_streams_as_one_artifact_chunk_by_chunk_with_the_last_marked(
    serve: Any, framework: Framework
) -> None:
    agent = serve(framework.streaming(PIECES))
    task = agent.send("question")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["name"] for a in task["artifacts"]] == ["answer"]
    assert answer_text(task) == "The answer is 42."
    assert chunks(agent.events(task["id"])) == [
        ("The ", False, False),
        ("answer ", True, False),
        ("is 42.", True, True),
    ]


@pytest.mark.parametrize("tool_details", [pytest.param(False, id="names-only"), pytest.param(True, id="details")])
def test_a_tool_call_is_a_working_status_naming_the_tool_its_arguments_and_result_only_when_opted_in(
    serve: Any, framework: Framework, tool_details: bool
) -> None:
    agent = serve(framework.weather(tool_details))
    task = agent.send("weather in Paris?")

    events = agent.events(task["id"])
    calls = [e.status_update for e in events if e.status_update and e.status_update.metadata]
    assert calls[0].metadata == {"tool": "weather", "toolCallId": "w1"}
    assert calls[0].status.state is TaskState.TASK_STATE_WORKING
    assert calls[0].status.message is not None
    assert calls[0].status.message.parts[0].text == "Calling tool weather"
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == "It is sunny in Paris."
    if not tool_details:
        assert tool_statuses(events) == [{"tool": "weather", "toolCallId": "w1"}]
        assert status_data(events) == []
        assert "SECRET" not in "".join(e.model_dump_json() for e in events)
        assert "sunny" not in "".join(e.status_update.model_dump_json() for e in events if e.status_update)
        return
    assert status_data(events) == [
        {"tool": "weather", "arguments": SECRET_ARGUMENTS},
        {"tool": "weather", "result": framework.weather_result},
    ]


def test_turns_of_one_context_share_the_conversation_and_two_owners_of_one_context_id_never_do(
    serve: Any, framework: Framework
) -> None:
    made: list[int] = []
    agent = serve(framework.remembering(made))

    first = agent.send("I am Alice", context_id="shared-context")
    second = agent.send("who am I?", context_id="shared-context")
    bobs = agent.send("I am Bob", as_="bob", context_id="shared-context")
    third = agent.send("and now?", context_id="shared-context")

    assert answer_text(first) == "I am Alice"
    assert answer_text(second) == "I am Alice | who am I?"
    assert bobs["contextId"] == "shared-context"
    assert answer_text(bobs) == "I am Bob"
    assert answer_text(third) == "I am Alice | who am I? | and now?"
    if framework.made_per_run:
        assert len(made) == 4  # the function making the agent is called for each run


def test_cancel_mid_stream_closes_the_model_stream_and_nothing_is_written_after_canceled(
    serve: Any, framework: Framework
) -> None:
    closed: list[str] = []
    agent = serve(framework.forever(closed))

    events = agent.cancel_mid_stream("go on forever")  # checks nothing was written after CANCELED

    assert closed == ["closed"]
    last = events[-1].status_update
    assert last is not None
    assert agent.task(last.task_id)["status"]["state"] == "TASK_STATE_CANCELED"


def test_a_model_failure_fails_the_task_with_the_generic_message_and_is_only_logged(
    serve: Any, framework: Framework, caplog: pytest.LogCaptureFixture
) -> None:
    agent = serve(framework.failing(ConnectionError(ERROR)))

    with caplog.at_level(logging.ERROR, logger="a2a_serverless.frameworks._bridge"):
        task = agent.send("go")

    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": FAILED_TEXT}]
    assert chunks(agent.events(task["id"])) == [("Partial ", False, True)]  # closed, not left open
    assert "SECRET" not in str(agent.task(task["id"]))
    assert any("sk-live-SECRET" in (r.exc_text or "") for r in caplog.records)


@pytest.mark.parametrize("framework", [name for name in FRAMEWORKS if name != "langgraph"], indirect=True)
def test_structured_output_is_an_artifact_of_its_own_and_not_streamed(serve: Any, framework: Framework) -> None:
    assert framework.forecast is not None  # LangGraph has none of its own: a graph's output is its state
    task = serve(framework.forecast()).send("forecast for Paris")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [(a["name"], a["parts"]) for a in task["artifacts"]] == [(framework.output_name, [{"data": FORECAST}])]


ASKING = ["google-adk", "openai-agents", "pydantic-ai"]
"""The frameworks whose tools ask a person's approval by a flag of the tool (Strands asks in a hook,
LangGraph in a node: their suites tell it)."""


@pytest.mark.parametrize("framework", ASKING, indirect=True)
def test_a_tool_needing_approval_asks_and_the_approval_resumes_the_same_run(serve: Any, framework: Framework) -> None:
    assert framework.booking is not None
    booked: list[int] = []
    agent = serve(framework.booking(booked))

    asked = agent.send("book room 7")

    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["parts"] == framework.approval_question
    assert answer_text(asked) == "Booking needs your approval. "
    assert chunks(agent.events(asked["id"])) == [("Booking needs your approval. ", False, True)]
    assert booked == []
    done = agent.reply(asked, "yes")

    assert done["id"] == asked["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert booked == [7]
    assert "Done: room 7 booked." in answer_text(done)


@pytest.mark.parametrize("framework", ASKING, indirect=True)
def test_a_reply_that_is_not_an_approval_resumes_the_run_with_the_tool_call_denied(
    serve: Any, framework: Framework
) -> None:
    assert framework.booking is not None
    booked: list[int] = []
    agent = serve(framework.booking(booked))

    asked = agent.send("book room 7")
    done = agent.reply(asked, "no, too expensive")

    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert booked == []
    assert f"Done: {framework.denied}." in answer_text(done)


@pytest.mark.parametrize("framework", ["openai-agents", "pydantic-ai"], indirect=True)
def test_a_paused_task_resumed_after_another_turn_of_its_context_keeps_both_in_the_memory(
    serve: Any, framework: Framework
) -> None:
    # (ADK keeps the turn that saved first: test_google_adk)
    assert framework.booking is not None
    agent = serve(framework.booking([]))

    agent.send("hello", context_id="ctx")
    paused = agent.send("book room 7", context_id="ctx")
    meanwhile = agent.send("meanwhile", context_id="ctx")  # another task of the context, while the first waits
    done = agent.reply(paused, "yes")
    later = agent.send("what happened?", context_id="ctx")

    assert answer_text(meanwhile) == "hello | meanwhile"  # the paused turn is not in the memory yet
    assert answer_text(done).endswith("Done: room 7 booked.")  # after what it said before asking
    # The paused task's exchange comes after the turn that ended while it waited.
    assert answer_text(later) == "hello | meanwhile | book room 7 | what happened?"
