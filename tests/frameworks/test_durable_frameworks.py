"""The framework adapters in durable mode, on the official local runner of durable executions: a
framework run is one step (a turn), its pause is INPUT_REQUIRED and a callback wait holding no
invocation, and what survives the wait is the framework's state in the store (not a replay): the
answer's turn resumes the same run from it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from aws_durable_execution_sdk_python.execution import InvocationStatus
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.devstack.durable import DurableLimits, LocalDurableWorker
from a2a_serverless.frameworks.langgraph import langgraph_executor
from a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor
from a2a_serverless.models import Message, Part, Role, SendMessageConfiguration, SendMessageRequest, TaskState
from a2a_serverless.operations import CallContext
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope
from a2a_serverless.wiring import build_runtime

CTX = CallContext(principal=Principal("alice", authenticated=True))
SCOPE = Scope("", "alice")
RAN: list[str] = []
"""What ran before each pause: once, however many invocations the task took."""


def _draft(state: MessagesState) -> dict[str, Any]:
    RAN.append("draft")
    return {"messages": [AIMessage("Draft.")]}


def _post(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f" Posted ({interrupt('Shall I post it?')}).")]}


_graph = StateGraph(MessagesState)
_graph.add_node("draft", _draft)
_graph.add_node("post", _post)
_graph.add_edge(START, "draft")
_graph.add_edge("draft", "post")
_graph.add_edge("post", END)
langgraph_agent = langgraph_executor(_graph.compile())


async def _booking(messages: list[ModelMessage], info: AgentInfo) -> Any:
    if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
        yield "Posted (yes)."
        return
    RAN.append("draft")
    yield "Draft. "
    call: DeltaToolCalls = {0: DeltaToolCall(name="post", json_args="{}", tool_call_id="p1")}
    yield call


_agent = Agent(FunctionModel(stream_function=_booking), output_type=[str, DeferredToolRequests])


@_agent.tool_plain(requires_approval=True)
def post() -> str:
    return "posted"


pydantic_agent = pydantic_ai_executor(_agent)


@pytest.fixture(params=["langgraph_agent", "pydantic_agent"])
def durable(request: pytest.FixtureRequest) -> Iterator[tuple[Any, LocalDurableWorker, MemoryTaskStore]]:
    store = MemoryTaskStore()
    config = Settings(
        store="memory", execution_mode="durable", poll_interval_seconds=0.01, executor=f"{__name__}:{request.param}"
    )
    worker = LocalDurableWorker(
        config, limits=DurableLimits(invocation_timeout=900, execution_timeout=120), store=store
    )
    RAN.clear()
    try:
        yield build_runtime(config, store=store, durable=worker.runs), worker, store
    finally:
        worker.close()


def _send(runtime: Any, text: str, message_id: str, task_id: str = "") -> str:
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)
    request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))
    return submit_message(request, CTX, runtime).task.id


def test_a_pause_is_a_callback_wait_with_no_invocation_and_the_answer_resumes_the_same_run(durable: Any) -> None:
    runtime, worker, store = durable
    task_id = _send(runtime, "write and post", "m-1")
    deadline = time.monotonic() + 30
    while not ((head := store.get_head(SCOPE, task_id)) and head.waiting_callback):
        assert time.monotonic() < deadline, f"the task never waited: {head}"
        time.sleep(0.02)
    assert head.state is TaskState.TASK_STATE_INPUT_REQUIRED
    while worker.running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert worker.running == 0  # nothing runs while it waits

    _send(runtime, "yes", "m-2", task_id)
    result = worker.runs.runner.wait_for_result(worker.runs.execution_arn(task_id) or "", timeout=30)

    assert result.status is InvocationStatus.SUCCEEDED
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert "Posted (yes)." in "".join(p.text or "" for a in record.task.artifacts for p in a.parts)
    assert RAN == ["draft"]
