"""The Pydantic AI and LangGraph adapters end to end: ``a2a-serverless dev`` (DynamoDB and S3 on
moto, the SQS worker) serving an agent module as a user writes it, driven by the a2a-sdk client:
the streamed answer (chunks of one artifact, the last marked), memory across turns of a context
(kept in the table), and an interrupt answered on the task, resuming the same run."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from a2a.types import SendMessageRequest, StreamResponse, Task, TaskState

from testkit.devstack import DevStack
from testkit.sdk import sdk_session, send, user_message

pytestmark = pytest.mark.e2e

AGENTS = """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

from a2a_serverless.frameworks.langgraph import langgraph_executor
from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor


async def stream(messages, info):
    requests = [m for m in messages if isinstance(m, ModelRequest)]
    prompts = [str(p.content) for m in requests for p in m.parts if isinstance(p, UserPromptPart)]
    if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
        yield "Booked."
    elif "book" in prompts[-1]:
        yield {0: DeltaToolCall(name="book", json_args="{}", tool_call_id="b1")}
    else:
        for word in ("You ", "said: ", " | ".join(prompts)):
            yield word


bookings = Agent(FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests])


@bookings.tool_plain(requires_approval=True)
def book() -> str:
    return "booked"


pydantic_agent = pydantic_ai_executor(bookings)


async def answer(state):
    said = " | ".join(str(m.content) for m in state["messages"] if isinstance(m, HumanMessage))
    model = GenericFakeChatModel(messages=iter([AIMessage("You said: " + said)]))
    return {"messages": [await model.ainvoke(state["messages"])]}


def post(state):
    return {"messages": [AIMessage("Posted (" + interrupt("Shall I post it?") + ").")]}


def route(state):
    return "post" if "post" in str(state["messages"][-1].content) else "answer"


graph = StateGraph(MessagesState)
graph.add_node("answer", answer)
graph.add_node("post", post)
graph.add_conditional_edges(START, route)
graph.add_edge("answer", END)
graph.add_edge("post", END)
langgraph_agent = langgraph_executor(graph.compile())
"""

APPROVAL = "Approve calling tool book? Reply yes to approve, anything else to deny."
FRAMEWORKS = [
    pytest.param(("pydantic_agent", "book a room", APPROVAL, "Booked."), id="pydantic-ai"),
    pytest.param(("langgraph_agent", "post it", "Shall I post it?", "Posted (yes)."), id="langgraph"),
]


@dataclass(frozen=True)
class Served:
    base: str
    pausing: str
    """A message that makes the agent pause, the question it then asks, its answer once resumed."""
    question: str
    resumed: str


@pytest.fixture(scope="module", params=FRAMEWORKS)
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The local stack serving one framework's agent."""
    name, pausing, question, resumed = request.param
    home: Path = tmp_path_factory.mktemp(name)
    (home / "framework_agents.py").write_text(textwrap.dedent(AGENTS))
    with DevStack.running(home, {"A2A_EXECUTOR": f"framework_agents:{name}"}) as served:
        yield Served(served.base, pausing, question, resumed)


def _artifact_chunks(events: list[StreamResponse]) -> list[tuple[str, bool, bool]]:
    return [
        (
            "".join(p.text for p in e.artifact_update.artifact.parts),
            e.artifact_update.append,
            e.artifact_update.last_chunk,
        )
        for e in events
        if e.HasField("artifact_update")
    ]


def _text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


def test_the_answer_streams_in_chunks_and_the_next_turn_remembers_the_first(stack: Served) -> None:
    base = stack.base

    async def scenario() -> tuple[list[StreamResponse], Task]:
        async with sdk_session(base, streaming=True) as session:
            first = [e async for e in session.client.send_message(SendMessageRequest(message=user_message("hello")))]
        context = next(e.task.context_id for e in first if e.HasField("task"))
        async with sdk_session(base) as session:
            second = await send(session.client, SendMessageRequest(message=user_message("again", context_id=context)))
        return first, second

    events, second = asyncio.run(scenario())

    streamed = _artifact_chunks(events)
    assert len(streamed) > 1
    assert "".join(text for text, _, _ in streamed) == "You said: hello"
    assert [last for _, _, last in streamed] == [False] * (len(streamed) - 1) + [True]
    assert [append for _, append, _ in streamed] == [False] + [True] * (len(streamed) - 1)
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert _text(second) == "You said: hello | again"


def test_an_interrupt_is_input_required_and_the_answer_on_the_task_resumes_it(stack: Served) -> None:
    base = stack.base

    async def scenario() -> tuple[Task, Task]:
        async with sdk_session(base) as session:
            asked = await send(session.client, SendMessageRequest(message=user_message(stack.pausing)))
            reply = user_message("yes", task_id=asked.id, context_id=asked.context_id)
            return asked, await send(session.client, SendMessageRequest(message=reply))

    asked, done = asyncio.run(scenario())

    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert asked.status.message.parts[0].text == stack.question
    assert done.id == asked.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert _text(done) == stack.resumed
