"""The five framework adapters' agents for the tests that run them behind the local stack or the
durable worker: one agent per framework, each on its framework's scripted test model, all playing
the same script, chosen by the user's last message:

* ``weather ...``: a tool call (``weather``), then ``Done: <its result>.``;
* ``post ...``: a pause for a person (each framework's own: an approval, an ``interrupt()``, a
  confirmation), noted once in ``RAN`` before it; the reply resumes the run, which ends ``Done: ...``
  (LangGraph: ``Posted (<reply>).``);
* ``forever``: text chunks without end, one each 20 ms, until the run is cancelled (CancelTask's
  mark lands between the stream's commits: ``TaskStore.mark_cancel``);
* anything else: ``You said: <every user message of the context, joined by " | ">``, in chunks.

``executor`` (test scaffolding, not an adapter) serves the five in one local stack: it hands each
message to the framework its metadata names (``{"framework": "strands"}``), so one stack start
serves every framework's stories. Each adapter keeps its own state keys, so they never meet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent as OpenAIAgent
from agents import RunConfig, TResponseInputItem, function_tool
from agents.testing import function_call
from google.adk.models.llm_request import LlmRequest
from google.adk.tools import FunctionTool
from google.genai import types
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool as langchain_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from strands import Agent as StrandsAgent
from strands import ToolContext
from strands import tool as strands_tool
from strands.types.content import Messages

from a2a_serverless.execution import AgentExecutor
from a2a_serverless.frameworks.google_adk import adk_executor
from a2a_serverless.frameworks.langgraph import langgraph_executor
from a2a_serverless.frameworks.openai_agents import openai_agents_executor
from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor
from a2a_serverless.frameworks.strands import strands_executor
from testkit.routing import MetadataRouter

from .adk_models import Step, returned, said, scripted_agent
from .langchain_models import streamed
from .openai_agents_model import ScriptedModel as OpenAIScriptedModel
from .openai_agents_model import Stream, said_by_user
from .strands_scripted import Call, Forever, Reply, ScriptedModel, Text

RAN: list[str] = []
"""What each run did before its pause: once per task, however many invocations it took."""


def _echo(said: list[str]) -> tuple[str, ...]:
    return ("You ", "said: ", " | ".join(said))


def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


async def _forever() -> AsyncIterator[str]:
    n = 0
    while True:
        n += 1
        yield f"chunk {n} "
        await asyncio.sleep(0.02)


# Strands Agents: a tool that asks (``tool_context.interrupt``), on ``strands_scripted``.


@strands_tool(context=True)
def post(tool_context: ToolContext) -> str:
    """Post the draft, once a person says so."""
    return f"posted ({tool_context.interrupt('approve_post', reason='Shall I post it?')})"


def _strands_reply(messages: Messages) -> Reply:
    results = [b["toolResult"] for b in messages[-1]["content"] if "toolResult" in b]
    if results:
        return Text(f"Done: {results[-1]['content'][0]['text']}.")
    said = [b["text"] for m in messages if m["role"] == "user" for b in m["content"] if "text" in b]
    if said[-1].startswith("weather"):
        return Call("weather", {"city": "Paris"})
    if said[-1].startswith("post"):
        RAN.append("strands")
        return Call("post")
    return Forever() if said[-1] == "forever" else Text(*_echo(said))


def _strands_agent() -> StrandsAgent:
    tools = [strands_tool(weather), post]
    return StrandsAgent(model=ScriptedModel(*[_strands_reply] * 2), tools=tools, callback_handler=None)


# LangGraph: a graph routed by the last message, an ``interrupt()`` node, LangChain fake chat models.


def _said(state: MessagesState) -> list[str]:
    return [str(m.content) for m in state["messages"] if isinstance(m, HumanMessage)]


async def _answer(state: MessagesState) -> dict[str, Any]:
    last, said = state["messages"][-1], _said(state)
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(f"Done: {last.content}.")]}
    if said[-1].startswith("weather"):
        return {"messages": [AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "w1"}])]}
    if said[-1] == "forever":
        model: GenericFakeChatModel = streamed(lambda messages: _forever())
    else:
        model = GenericFakeChatModel(messages=iter([AIMessage("".join(_echo(said)))]))
    return {"messages": [await model.ainvoke(state["messages"])]}


def _draft(state: MessagesState) -> dict[str, Any]:
    RAN.append("langgraph")
    return {"messages": [AIMessage("Draft.")]}


def _post(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f" Posted ({interrupt('Shall I post it?')}).")]}


def _graph() -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("answer", _answer)
    graph.add_node("tools", ToolNode([langchain_tool(weather)]))
    graph.add_node("draft", _draft)
    graph.add_node("post", _post)
    graph.add_conditional_edges(START, lambda state: "draft" if _said(state)[-1].startswith("post") else "answer")
    graph.add_conditional_edges("answer", tools_condition)
    graph.add_edge("tools", "answer")
    graph.add_edge("draft", "post")
    graph.add_edge("post", END)
    return graph.compile()


# Pydantic AI: ``FunctionModel``, an approval-required tool (a deferred tool request).


async def _pydantic_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if returned_parts := [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]:
        yield f"Done: {returned_parts[-1].content}."
        return
    requests = [m for m in messages if isinstance(m, ModelRequest)]
    said = [str(p.content) for m in requests for p in m.parts if isinstance(p, UserPromptPart)]
    if said[-1].startswith("weather"):
        yield {0: DeltaToolCall(name="weather", json_args='{"city": "Paris"}', tool_call_id="w1")}
    elif said[-1].startswith("post"):
        RAN.append("pydantic_ai")
        yield {0: DeltaToolCall(name="post", json_args="{}", tool_call_id="p1")}
    else:
        async for piece in _forever() if said[-1] == "forever" else _pieces(_echo(said)):
            yield piece


async def _pieces(pieces: tuple[str, ...]) -> AsyncIterator[str]:
    for piece in pieces:
        yield piece


_pydantic = PydanticAgent(FunctionModel(stream_function=_pydantic_stream), output_type=[str, DeferredToolRequests])
_pydantic.tool_plain(weather)


@_pydantic.tool_plain(name="post", requires_approval=True)
def _post_approved() -> str:
    return "posted"


# OpenAI Agents SDK: ``openai_agents_model.ScriptedModel``, an approval-required function tool.


async def _openai_script(items: list[TResponseInputItem]) -> Stream:
    last: dict[str, Any] = dict(items[-1])
    if last.get("type") == "function_call_output":
        yield f"Done: {last['output']}."
        return
    said = said_by_user(items)
    if said[-1].startswith("weather"):
        yield function_call("weather", {"city": "Paris"}, call_id="w1")
    elif said[-1].startswith("post"):
        RAN.append("openai_agents")
        yield function_call("post", {}, call_id="p1")
    else:
        async for piece in _forever() if said[-1] == "forever" else _pieces(_echo(said)):
            yield piece


@function_tool(name_override="post", needs_approval=True)
def _openai_post() -> str:
    """Post the draft."""
    return "posted"


_openai = OpenAIAgent(
    name="assistant", model=OpenAIScriptedModel(_openai_script), tools=[function_tool(weather), _openai_post]
)


# Google ADK: ``adk_models.ScriptedLlm``, a tool that needs a confirmation.


async def _adk_script(request: LlmRequest) -> AsyncIterator[Step]:
    if answers := returned(request):
        yield f"Done: {answers[-1].get('result') or answers[-1].get('error')}."
        return
    said_so_far = said(request)
    if said_so_far[-1].startswith("weather"):
        yield types.FunctionCall(id="w1", name="weather", args={"city": "Paris"})
    elif said_so_far[-1].startswith("post"):
        RAN.append("google_adk")
        yield types.FunctionCall(id="p1", name="post", args={})
    else:
        async for piece in _forever() if said_so_far[-1] == "forever" else _pieces(_echo(said_so_far)):
            yield piece


def _adk_post() -> str:
    """Post the draft."""
    return "posted"


_adk_post.__name__ = "post"

strands_agent = strands_executor(_strands_agent)
langgraph_agent = langgraph_executor(_graph())
pydantic_ai_agent = pydantic_ai_executor(_pydantic)
openai_agents_agent = openai_agents_executor(_openai, run_config=RunConfig(tracing_disabled=True))
google_adk_agent = adk_executor(
    scripted_agent(_adk_script, tools=[weather, FunctionTool(_adk_post, require_confirmation=True)])
)
AGENTS: dict[str, AgentExecutor] = {
    "strands": strands_agent,
    "langgraph": langgraph_agent,
    "pydantic_ai": pydantic_ai_agent,
    "openai_agents": openai_agents_agent,
    "google_adk": google_adk_agent,
}
"""Each framework's agent, by the name a message's metadata gives (``{"framework": NAME}``)."""


executor = MetadataRouter("framework", AGENTS.__getitem__)
