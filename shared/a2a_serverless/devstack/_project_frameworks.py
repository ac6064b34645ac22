"""What ``a2a-serverless init --framework NAME`` writes instead of the plain executor: an agent
module built on that framework, wrapped by its adapter (:mod:`a2a_serverless.frameworks`), the
kit's extra that installs the framework, and a test of it. Each agent runs without a model key (a
placeholder model that streams back what it is sent) until the user puts theirs in.
``str.format`` templates: a literal brace is doubled."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FRAMEWORKS", "TEST", "ProjectFramework"]


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

FRAMEWORKS = {
    "pydantic-ai": ProjectFramework(extra="pydantic-ai", agent=_PYDANTIC_AI),
    "langgraph": ProjectFramework(extra="langgraph", agent=_LANGGRAPH),
}
"""The frameworks ``init --framework`` knows, by the name it takes."""

TEST = '''\
"""The agent on the in-memory runtime: the whole protocol path (HTTP+JSON binding, the operations,
the worker running your framework's agent), no AWS, no local stack, no model key (the placeholder
model). One conversation is one app: each ``send`` continues the task of the answer before while it
is open (INPUT_REQUIRED, say), else starts a new task in the same context, as a chat client does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_serverless.devstack.testing import AgentConversation, agent_conversation

CARD = Path(__file__).parents[1] / "src" / "agent.json"


@pytest.fixture
def conversation() -> Iterator[AgentConversation]:
    with agent_conversation("{executor}", card_file=CARD) as conversation:
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
