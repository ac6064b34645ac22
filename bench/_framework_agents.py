"""Executors for ``bench/framework_writes.py``: one answer streamed a token at a time, by a
hand-written streaming executor and by each framework adapter on its framework's scripted model.

The user's message says what to stream: ``tokens N PACE`` (N tokens, PACE seconds between two),
and its metadata who streams it (``{"streamer": NAME}``, a name of :data:`STREAMERS`). Every
streamer emits the same tokens (:func:`answer_tokens`: ``TOKEN_CHARS`` characters each, about a
real model's token):

* ``handwritten``: what a hand-written streaming executor emits: WORKING, one artifact appended
  token by token (the first chunk ``append=False``, the last marked ``lastChunk``), COMPLETED;
* ``pydantic-ai``, ``langgraph``, ``strands``, ``openai-agents``, ``google-adk``: the framework's
  adapter (``a2a_serverless.frameworks``) running a one-step agent whose model streams the tokens,
  PACE seconds apart, as a model's stream gives them: Pydantic AI's ``FunctionModel``, a LangChain
  fake chat model that streams, the scripted models of ``tests/frameworks`` for the OpenAI Agents
  SDK and ADK, and a Strands model streaming Bedrock's ConverseStream events.

The framework agents are built on first use (importing a framework takes seconds)."""

from __future__ import annotations

import asyncio
import functools
import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part
from bench._stream_agents import CHUNK_BYTES, chunk_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/frameworks' scripted models

from testkit.routing import MetadataRouter

TOKEN_CHARS = 4
"""Characters per token: about what a model's tokenizer averages on English text."""
HANDWRITTEN = "handwritten"
FRAMEWORKS = ("pydantic-ai", "langgraph", "strands", "openai-agents", "google-adk")
"""The framework extras (``bench/framework_costs.py`` names their adapters' modules)."""
STREAMERS = (HANDWRITTEN, *FRAMEWORKS)
_ORDER = re.compile(r"^\s*tokens\s+(\d+)\s+(\d+(?:\.\d+)?)\s*$")


def answer_tokens(count: int) -> list[str]:
    """``count`` tokens of ``TOKEN_CHARS`` characters: the text of ``bench/_stream_agents``'
    chunks (common English words, about as compressible as a model's answer) cut in pieces."""
    chunks = -(-count * TOKEN_CHARS // CHUNK_BYTES)
    text = "".join(chunk_text(i) for i in range(chunks))
    return [text[i : i + TOKEN_CHARS] for i in range(0, count * TOKEN_CHARS, TOKEN_CHARS)]


def order(text: str) -> tuple[int, float]:
    """``tokens N PACE`` -> (N, PACE)."""
    match = _ORDER.match(text.strip().splitlines()[-1] if text.strip() else "")
    if match is None:
        raise ValueError(f"not a 'tokens N PACE' order: {text!r}")
    return int(match.group(1)), float(match.group(2))


async def paced(text: str) -> AsyncIterator[str]:
    """The tokens ``text`` orders, PACE seconds apart (none before the first)."""
    count, pace = order(text)
    for i, token in enumerate(answer_tokens(count)):
        if i and pace > 0:
            await asyncio.sleep(pace)
        yield token


class Handwritten(AgentExecutor):
    """A hand-written streaming executor: each token an artifact chunk as the model gives it."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        count, _ = order(context.get_user_input())
        await updater.start_work()
        i = 0
        async for token in paced(context.get_user_input()):
            await updater.add_artifact(
                [Part(text=token)],
                artifact_id="answer",
                name="answer" if i == 0 else "",
                append=i > 0,
                last_chunk=i == count - 1,
            )
            i += 1
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


# The five frameworks: a one-step agent each, whose model streams the ordered tokens.


def _pydantic_ai() -> AgentExecutor:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        said = [
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ]
        async for token in paced(said[-1]):
            yield token

    return pydantic_ai_executor(Agent(FunctionModel(stream_function=stream)))


def _langgraph() -> AgentExecutor:
    from frameworks.langchain_models import streamed
    from langchain_core.messages import BaseMessage, HumanMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    from a2a_serverless.frameworks.langgraph import langgraph_executor

    def tokens(messages: list[BaseMessage]) -> AsyncIterator[str]:
        return paced([str(m.content) for m in messages if isinstance(m, HumanMessage)][-1])

    model = streamed(tokens)

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return langgraph_executor(graph.compile())


def _strands() -> AgentExecutor:
    from strands import Agent
    from strands.models import Model
    from strands.types.content import Messages
    from strands.types.streaming import StreamEvent

    from a2a_serverless.frameworks.strands import strands_executor

    class TokenModel(Model):
        """Streams the ordered tokens as Bedrock's ConverseStream events (``strands.models.Model.stream``)."""

        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {}

        def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def stream(self, messages: Messages, *args: Any, **kwargs: Any) -> AsyncIterator[StreamEvent]:
            said = [b["text"] for m in messages if m["role"] == "user" for b in m["content"] if "text" in b]
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockStart": {"start": {}}}
            async for token in paced(said[-1]):
                yield {"contentBlockDelta": {"delta": {"text": token}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}

    model = TokenModel()
    return strands_executor(lambda: Agent(model=model, callback_handler=None))


def _openai_agents() -> AgentExecutor:
    from agents import Agent, RunConfig, TResponseInputItem
    from frameworks.openai_agents_model import ScriptedModel, said_by_user

    from a2a_serverless.frameworks.openai_agents import openai_agents_executor

    async def script(items: list[TResponseInputItem]) -> AsyncIterator[str]:
        async for token in paced(said_by_user(items)[-1]):
            yield token

    agent = Agent(name="assistant", model=ScriptedModel(script))
    return openai_agents_executor(agent, run_config=RunConfig(tracing_disabled=True))


def _google_adk() -> AgentExecutor:
    from frameworks.adk_models import said, scripted_agent
    from google.adk.models.llm_request import LlmRequest

    from a2a_serverless.frameworks.google_adk import adk_executor

    async def script(request: LlmRequest) -> AsyncIterator[str]:
        async for token in paced(said(request)[-1]):
            yield token

    return adk_executor(scripted_agent(script))


_MAKERS: dict[str, Callable[[], AgentExecutor]] = {
    HANDWRITTEN: Handwritten,
    "pydantic-ai": _pydantic_ai,
    "langgraph": _langgraph,
    "strands": _strands,
    "openai-agents": _openai_agents,
    "google-adk": _google_adk,
}


@functools.cache
def streamer(name: str) -> AgentExecutor:
    """The executor ``name`` streams with (built once)."""
    return _MAKERS[name]()


executor = MetadataRouter("streamer", streamer, default=HANDWRITTEN)
