"""No message text in any span the kit exports unless content capture is on, whoever made the span
(issue 40, docs/tracing.md "No content by default").

Each adapter runs its framework's scripted model with the framework's own instrumentation on, where
it has one, under the kit's tracing (``A2A_TRACING=memory``): Strands' built-in tracer (on the
global provider, always on), Pydantic AI's ``Instrumentation`` capability (OpenTelemetry, no Logfire),
Google ADK's spans (``gcp.vertex.agent``, always on). The OpenAI Agents SDK traces to its own
processors (the OpenAI backend), never to OpenTelemetry; LangGraph and LangChain have no
OpenTelemetry instrumentation of their own (LangSmith is theirs): for those two the kit's spans
are the only ones, and the test holds them to the same rule.

With capture off, neither the prompt nor the answer is anywhere in an exported span: its name,
attributes, events, links, status or resource (the span's whole JSON). With capture on, the prompt
is there (the kit's ``invoke_agent`` span), and the answer too where the framework records it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from a2a_serverless import telemetry
from a2a_serverless.execution import AgentExecutor

from .conftest import answer_text

PROMPT = "what does the zebra-7731 say"
ANSWER = "the quokka-4410 whispers"
PIECES = ("the quokka", "-4410 ", "whispers")


def _strands() -> AgentExecutor:
    from strands import Agent

    from a2a_serverless.frameworks.strands import strands_executor

    from .strands_scripted import ScriptedModel, Text

    model = ScriptedModel(Text(*PIECES))
    return strands_executor(lambda: Agent(model=model, callback_handler=None))


def _pydantic_ai() -> AgentExecutor:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in PIECES:
            yield piece

    # Pydantic AI's OpenTelemetry instrumentation (no Logfire): the global provider, content included.
    model = FunctionModel(stream_function=stream)
    return pydantic_ai_executor(Agent(model, capabilities=[Instrumentation(InstrumentationSettings())]))


def _google_adk() -> AgentExecutor:
    from google.adk.models.llm_request import LlmRequest

    from a2a_serverless.frameworks.google_adk import adk_executor

    from .adk_models import Step, scripted_agent

    async def script(request: LlmRequest) -> AsyncIterator[Step]:
        for piece in PIECES:
            yield piece

    return adk_executor(scripted_agent(script))


def _openai_agents() -> AgentExecutor:
    from agents import Agent, RunConfig

    from a2a_serverless.frameworks.openai_agents import openai_agents_executor

    from .openai_agents_model import ScriptedModel

    async def script(items: list[Any]) -> AsyncIterator[str]:
        for piece in PIECES:
            yield piece

    # Its tracing is the SDK's own (to OpenAI's backend, not OpenTelemetry): off, as offline tests run it.
    agent = Agent(name="assistant", model=ScriptedModel(script))
    return openai_agents_executor(agent, run_config=RunConfig(tracing_disabled=True))


def _langgraph() -> AgentExecutor:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    from a2a_serverless.frameworks.langgraph import langgraph_executor

    model = GenericFakeChatModel(messages=iter([AIMessage(ANSWER)]))

    async def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent_node)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return langgraph_executor(graph.compile())


ADK_LEGACY = {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"}
"""ADK's first span schema: ``call_llm`` carries the request and the response (content on by default)."""
ADK_SEMCONV = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}
"""ADK's current schema, with the GenAI conventions' content on its spans (off by default)."""

ADAPTERS: dict[str, tuple[Callable[[], AgentExecutor], dict[str, str], bool]] = {
    # name: (the executor, the framework's environment, whether its own spans record the answer)
    "strands": (_strands, {}, True),
    "pydantic_ai": (_pydantic_ai, {}, True),
    "google_adk-legacy-spans": (_google_adk, ADK_LEGACY, True),
    "google_adk-semconv-content": (_google_adk, ADK_SEMCONV, True),
    "openai_agents": (_openai_agents, {}, False),
    "langgraph": (_langgraph, {}, False),
}
FRAMEWORK_SPANS = ("strands", "pydantic_ai", "google_adk-legacy-spans", "google_adk-semconv-content")


@pytest.fixture(params=[False, True], ids=["capture-off", "capture-on"])
def capture(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    """Tracing on with spans in memory; content capture as the parameter says."""
    content: bool = request.param
    monkeypatch.setenv(telemetry.SWITCH_ENV, "memory")
    monkeypatch.setenv(telemetry.CONTENT_ENV, "true" if content else "false")
    telemetry.reset()
    from a2a_serverless.telemetry import _sdk

    assert telemetry.tracing_on()
    _sdk.MEMORY.clear()
    yield content
    _sdk.MEMORY.clear()
    monkeypatch.delenv(telemetry.SWITCH_ENV)
    monkeypatch.delenv(telemetry.CONTENT_ENV)
    telemetry.reset()


def _exported() -> tuple[list[str], str, str]:
    """The exported spans' tracer names, all of them as JSON (name, attributes, events, links,
    status, resource), and the framework's (not the kit's) as JSON."""
    from a2a_serverless.telemetry import _sdk

    deadline = time.monotonic() + 10  # the worker's run ends in its thread, just after the answer
    while not any(s.name == "process work" for s in _sdk.finished_spans()) and time.monotonic() < deadline:
        time.sleep(0.01)
    spans = _sdk.finished_spans()
    scopes = sorted({s.instrumentation_scope.name for s in spans if s.instrumentation_scope is not None})
    theirs = [s for s in spans if s.instrumentation_scope is None or s.instrumentation_scope.name != "a2a_serverless"]
    return scopes, "\n".join(s.to_json(indent=None) for s in spans), "\n".join(s.to_json(indent=None) for s in theirs)


def _words(text: str) -> list[str]:
    """The distinctive words of a text (a span may hold it whole, in pieces, or re-quoted)."""
    return [w for w in text.split() if any(c.isdigit() for c in w)]


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_no_prompt_or_answer_in_any_exported_span_unless_content_capture_is_on(
    serve: Any, capture: bool, adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, environment, records_answer = ADAPTERS[adapter]
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    task = serve(make()).send(PROMPT)

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == ANSWER
    scopes, exported, framework = _exported()
    assert "a2a_serverless" in scopes
    if adapter in FRAMEWORK_SPANS:
        assert len(scopes) > 1, f"{adapter}'s own spans were not exported: {scopes}"
    if not capture:
        for word in _words(PROMPT) + _words(ANSWER) + [PROMPT, ANSWER, "zebra", "quokka", "whispers"]:
            assert word not in exported, f"{word!r} in a span exported with capture off ({scopes})"
        return
    assert "zebra-7731" in exported  # the kit's invoke_agent span: gen_ai.input.messages
    if records_answer:  # and the framework's own spans: the prompt and the answer
        assert "zebra-7731" in framework
        assert "quokka" in framework
        assert "whispers" in framework
