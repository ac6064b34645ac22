"""The five framework adapters in durable mode, on the official local runner of durable executions:
a framework run is one step (a turn), its pause is INPUT_REQUIRED and a callback wait holding no
invocation, and what survives the wait is the framework's state in the store (not a replay): the
answer's turn resumes the same run from it (what ran before the pause does not run again)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from aws_durable_execution_sdk_python.execution import InvocationStatus

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.models import Message, Part, Role, SendMessageConfiguration, SendMessageRequest, TaskState
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import TaskHead
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.durable import DurableLimits, LocalDurableWorker
from testkit.calls import CTX, SCOPE
from testkit.waiting import wait_until

from . import stack_agents
from .stack_agents import RAN

FRAMEWORKS = [
    pytest.param(("strands", "Done: posted (yes)."), id="strands"),
    pytest.param(("langgraph", "Draft. Posted (yes)."), id="langgraph"),
    pytest.param(("pydantic_ai", "Done: posted."), id="pydantic-ai"),
    pytest.param(("openai_agents", "Done: posted."), id="openai-agents"),
    pytest.param(("google_adk", "Done: posted."), id="google-adk"),
]
"""Each framework and its answer once the reply "yes" resumed the paused run."""


@pytest.fixture(params=FRAMEWORKS)
def durable(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, Any, LocalDurableWorker, MemoryTaskStore]]:
    """The durable worker running the framework's agent of ``stack_agents``, as ``A2A_EXECUTOR`` names it."""
    name, resumed = request.param
    store = MemoryTaskStore()
    executor = f"{stack_agents.__name__}:{name}_agent"
    config = Settings(store="memory", execution_mode="durable", poll_interval_seconds=0.01, executor=executor)
    worker = LocalDurableWorker(
        config, limits=DurableLimits(invocation_timeout=900, execution_timeout=120), store=store
    )
    RAN.clear()
    try:
        yield name, resumed, build_runtime(config, store=store, durable=worker.runs), worker, store
    finally:
        worker.close()


def _send(runtime: Any, text: str, message_id: str, task_id: str = "") -> str:
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)
    request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))
    return submit_message(request, CTX, runtime).task.id


def _waiting(head: TaskHead | None) -> TaskHead | None:
    return head if head is not None and head.waiting_callback else None


def test_a_pause_is_a_callback_wait_with_no_invocation_and_the_answer_resumes_the_same_run(durable: Any) -> None:
    # Given: the durable worker on the official local runner, running the framework's agent
    name, resumed, runtime, worker, store = durable

    # When: a message whose run pauses for a person, then the person's answer
    task_id = _send(runtime, "post it", "m-1")
    head = wait_until(lambda: _waiting(store.get_head(SCOPE, task_id)), "the callback wait", within=30, every=0.02)
    wait_until(lambda: worker.running == 0, "no invocation running while it waits", within=30, every=0.02)
    _send(runtime, "yes", "m-2", task_id)
    result = worker.runs.runner.wait_for_result(worker.runs.execution_arn(task_id) or "", timeout=30)

    # Then: INPUT_REQUIRED waited on a callback with nothing running, and the answer's turn resumed
    # the run from the framework's state in the store: what ran before the pause did not run again
    assert head.state is TaskState.TASK_STATE_INPUT_REQUIRED
    assert result.status is InvocationStatus.SUCCEEDED
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert "".join(p.text or "" for a in record.task.artifacts for p in a.parts) == resumed
    assert [name] == RAN
