"""What ``a2a-serverless init --framework NAME`` writes instead of the plain executor: an agent
module built on that framework, wrapped by its adapter (:mod:`a2a_serverless.frameworks`), the
kit's extra that installs the framework, and a test of it. Each agent runs without a model key (a
placeholder model that streams back what it is sent) until the user puts theirs in.
``str.format`` templates: a literal brace is doubled."""

from __future__ import annotations

from dataclasses import dataclass

from a2a_serverless.lambda_.startup import FRAMEWORK_EXTRAS

__all__ = ["FRAMEWORKS", "FRAMEWORK_MODULES", "TEST", "ProjectFramework"]


@dataclass(frozen=True, slots=True)
class ProjectFramework:
    extra: str
    """The kit's extra that installs the framework (``a2a-serverless[<extra>]``)."""
    agent: str
    """``src/<package>/agent.py``, formatted with ``name`` and ``name_literal``."""


_PYDANTIC_AI = '''\
"""{name}: a Pydantic AI agent behind A2A (docs/frameworks.md in the kit). ``a2a-serverless dev``
serves it locally.

Put your model in place of the placeholder, e.g. ``Agent("bedrock:<model id>", instructions=...)``
(add the provider's extra beside the kit's: ``pydantic-ai-slim[bedrock]`` in kit/requirements.txt
and pyproject.toml). The placeholder streams back what it is sent, so the project runs and its test
passes without a model key. Tools declared ``requires_approval=True`` ask the caller first
(INPUT_REQUIRED); the conversation is remembered per A2A context.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor

NAME = {name_literal}


async def _placeholder(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    said = " ".join(str(p.content) for p in parts if isinstance(p, UserPromptPart))
    answer = f"{{NAME}} heard: {{said}}"
    for start in range(0, len(answer), 8):  # a model streams its answer in pieces
        yield answer[start : start + 8]


agent = Agent(FunctionModel(stream_function=_placeholder), instructions=f"You are {{NAME}}.")

executor = pydantic_ai_executor(agent)
'''

_LANGGRAPH = '''\
"""{name}: a LangGraph graph behind A2A (docs/frameworks.md in the kit). ``a2a-serverless dev``
serves it locally.

Put your model in place of the placeholder, e.g. ``ChatBedrockConverse(model=<model id>)`` from
``langchain-aws`` (add it beside the kit in kit/requirements.txt and pyproject.toml). The
placeholder streams back what it is sent, so the project runs and its test passes without a model
key. A node that calls ``interrupt(question)`` asks the caller (INPUT_REQUIRED) and the reply
resumes it; the graph's state is remembered per A2A context.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from a2a_serverless.frameworks.langgraph import langgraph_executor

NAME = {name_literal}


async def answer(state: MessagesState) -> dict[str, Any]:
    said = str(state["messages"][-1].content)
    model = GenericFakeChatModel(messages=iter([AIMessage(f"{{NAME}} heard: {{said}}")]))  # the placeholder
    return {{"messages": [await model.ainvoke(state["messages"])]}}


def make_graph() -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph.compile()


executor = langgraph_executor(make_graph)
'''

_STRANDS = '''\
"""{name}: a Strands agent behind A2A (docs/frameworks.md in the kit). ``a2a-serverless dev``
serves it locally.

Put your model in place of the placeholder, e.g. ``BedrockModel(model_id=<model id>)`` from
``strands.models``, made once at import (its boto3 client is reused); ``make_agent`` makes the
``Agent`` for each run. The placeholder streams back what it is sent, so the project runs and its
test passes without a model key. A hook or tool that calls ``interrupt(...)`` asks the caller
(INPUT_REQUIRED) and the reply resumes it; the conversation is remembered per A2A context.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from strands.agent import Agent
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent

from a2a_serverless.frameworks.strands import strands_executor

NAME = {name_literal}


class Placeholder(Model):
    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {{}}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the placeholder answers in text")

    async def stream(self, messages: Messages, *args: Any, **kwargs: Any) -> AsyncGenerator[StreamEvent, None]:
        said = " ".join(block["text"] for block in messages[-1]["content"] if "text" in block)
        answer = f"{{NAME}} heard: {{said}}"
        yield {{"messageStart": {{"role": "assistant"}}}}
        yield {{"contentBlockStart": {{"start": {{}}}}}}
        for start in range(0, len(answer), 8):  # a model streams its answer in pieces
            yield {{"contentBlockDelta": {{"delta": {{"text": answer[start : start + 8]}}}}}}
        yield {{"contentBlockStop": {{}}}}
        yield {{"messageStop": {{"stopReason": "end_turn"}}}}


model = Placeholder()


def make_agent() -> Agent:
    return Agent(model=model, system_prompt=f"You are {{NAME}}.")


executor = strands_executor(make_agent)
'''

_OPENAI_AGENTS = '''\
"""{name}: an OpenAI Agents SDK agent behind A2A (docs/frameworks.md in the kit).
``a2a-serverless dev`` serves it locally.

Put your model in place of the placeholder: ``Agent(..., model="<model name>")`` with
``OPENAI_API_KEY`` in the functions' environment. The placeholder streams back what it is sent, so
the project runs and its test passes without a model key. Tracing is off: on, the SDK sends
prompts and tool data to OpenAI (docs/frameworks.md says how to choose). Tools declared
``needs_approval=True`` ask the caller first (INPUT_REQUIRED); the conversation is remembered per
A2A context.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, RunConfig, TResponseInputItem
from agents.items import ModelResponse, TResponseStreamEvent
from agents.models.interface import Model
from agents.testing import assistant_message
from openai.types.responses import Response, ResponseCompletedEvent, ResponseTextDeltaEvent

from a2a_serverless.frameworks.openai_agents import openai_agents_executor

NAME = {name_literal}


class Placeholder(Model):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the adapter streams")

    async def stream_response(
        self, system_instructions: str | None, input: str | list[TResponseInputItem], *args: Any, **kwargs: Any
    ) -> AsyncIterator[TResponseStreamEvent]:
        last: Any = input if isinstance(input, str) else input[-1].get("content", "")
        said = last if isinstance(last, str) else " ".join(str(c.get("text", "")) for c in last)
        answer = f"{{NAME}} heard: {{said}}"
        for n, start in enumerate(range(0, len(answer), 8)):  # a model streams its answer in pieces
            delta = answer[start : start + 8]
            yield ResponseTextDeltaEvent(
                type="response.output_text.delta",
                item_id="placeholder",
                output_index=0,
                content_index=0,
                delta=delta,
                logprobs=[],
                sequence_number=n,
            )
        response = Response(
            id="placeholder",
            created_at=0,
            model="placeholder",
            object="response",
            output=[assistant_message(answer)],
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=False,
            status="completed",
        )
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=len(answer))


agent = Agent(name="assistant", instructions=f"You are {{NAME}}.", model=Placeholder())

executor = openai_agents_executor(agent, run_config=RunConfig(tracing_disabled=True))
'''

_GOOGLE_ADK = '''\
"""{name}: a Google ADK agent behind A2A (docs/frameworks.md in the kit). ``a2a-serverless dev``
serves it locally.

Put your model in place of the placeholder, e.g. ``LlmAgent(model="<model name>", ...)`` with the
provider's key in the functions' environment. The placeholder streams back what it is sent, so the
project runs and its test passes without a model key. ``FunctionTool(f,
require_confirmation=True)`` asks the caller first (INPUT_REQUIRED); the session is remembered per
A2A context.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from a2a_serverless.frameworks.google_adk import adk_executor

NAME = {name_literal}


class Placeholder(BaseLlm):
    model: str = "placeholder"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts or [] if llm_request.contents else []
        said = " ".join(part.text for part in last if part.text)
        answer = f"{{NAME}} heard: {{said}}"
        if stream:  # a model streams its answer in pieces, then the whole of it
            for start in range(0, len(answer), 8):
                piece = types.Content(role="model", parts=[types.Part(text=answer[start : start + 8])])
                yield LlmResponse(content=piece, partial=True)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=answer)]), partial=False)


root_agent = LlmAgent(name="assistant", model=Placeholder(), instruction=f"You are {{NAME}}.")

executor = adk_executor(root_agent)
'''

FRAMEWORKS = {
    "pydantic-ai": ProjectFramework(extra="pydantic-ai", agent=_PYDANTIC_AI),
    "langgraph": ProjectFramework(extra="langgraph", agent=_LANGGRAPH),
    "strands": ProjectFramework(extra="strands", agent=_STRANDS),
    "openai-agents": ProjectFramework(extra="openai-agents", agent=_OPENAI_AGENTS),
    "google-adk": ProjectFramework(extra="google-adk", agent=_GOOGLE_ADK),
}
"""The frameworks ``init --framework`` knows, by the name it takes."""

FRAMEWORK_MODULES = frozenset(module.split(".")[0] for module in FRAMEWORK_EXTRAS)
"""The frameworks' top-level modules: an agent package of one of these names would hide it."""

TEST = '''\
"""The agent on the in-memory runtime: the whole protocol path (HTTP+JSON binding, the operations,
the worker running your framework's agent), no AWS, no local stack, no model key (the placeholder
model). One conversation is one app: each ``send`` continues the task of the answer before while it
is open (INPUT_REQUIRED, say), else starts a new task in the same context, as a chat client does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_serverless_dev.testing import AgentConversation, agent_conversation

CARD = Path(__file__).parents[1] / "src" / "agent.json"


@pytest.fixture
def conversation() -> Iterator[AgentConversation]:
    with agent_conversation("{executor}", card_file=CARD) as conversation:
        # The agent made now, before the first send waits for its answer: importing a framework can
        # take seconds, longer than a blocking send waits (blocking_wait_seconds).
        assert conversation.runtime.executor is not None
        yield conversation


def answer(task: dict[str, object]) -> str:
    """The streamed answer: the text of the answer artifact's chunks, joined."""
    (artifact,) = task["artifacts"]  # type: ignore[misc]
    return "".join(part.get("text", "") for part in artifact["parts"])  # type: ignore[index]


def test_the_card_is_the_agents(conversation: AgentConversation) -> None:
    card = conversation.card()
    assert card["name"] == {name!r}


def test_the_agent_streams_its_answer(conversation: AgentConversation) -> None:
    task = conversation.send("hello")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer(task) == {name!r} + " heard: hello"


def test_a_second_turn_stays_in_the_conversation(conversation: AgentConversation) -> None:
    first = conversation.send("hello")
    second = conversation.send("and again")
    assert second["contextId"] == first["contextId"]
    assert answer(second) == {name!r} + " heard: and again"
'''
