"""A chain of delegations on the local stack (issue 33): our agent -> another of our agents (the
same stack) -> the a2a-sdk reference agent, each hop an executor using
``a2a_serverless.delegation.delegate`` (``tests/delegation/relay_agents.DelegatingAgent``, whose
orders are JSON naming the next hop). The reference agent's chunks reach the client's stream of the
first task chunk by chunk; canceling the first task cancels every task down the chain."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_stack import running_stack

from testkit.reference_agent import reference_agent
from testkit.waiting import wait_until

AGENTS = Path(__file__).resolve().parents[1] / "delegation"
CARD = "/.well-known/agent-card.json"
V1 = {"A2A-Version": "1.0"}
WAIT = 60.0
"""Hang guard (seconds); never a measured expectation."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {"A2A_EXECUTOR": "relay_agents:DelegatingAgent", "PYTHONPATH": str(AGENTS)}
    with running_stack(tmp_path_factory.mktemp("delegation-stack"), settings) as (base_url, _):
        yield base_url


@pytest.fixture(scope="module")
def reference() -> Iterator[str]:
    with reference_agent() as url:
        yield url


def call(base: str, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = httpx.post(base + "/", json=body, headers=V1, timeout=60).json()
    assert "result" in answer, answer
    return answer["result"]


def chain(stack: str, reference: str, order: str) -> str:
    """Orders for the stack's agent: ask the stack's agent to ask the reference agent ``order``."""
    second = {"to": reference + CARD, "send": order}
    return json.dumps({"to": stack + CARD, "send": json.dumps(second)})


def user(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def test_the_reference_agent_s_chunks_stream_through_two_hops(stack: str, reference: str) -> None:
    # When a client streams a task that delegates twice, down to the reference agent's "tick 3"
    message = user(chain(stack, reference, "tick 3 0.05"))
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
    with httpx.stream("POST", stack + "/", json=body, headers=V1, timeout=120) as response:
        events = [json.loads(line[5:])["result"] for line in response.iter_lines() if line.startswith("data:")]

    # Then its stream carried the reference agent's chunks, one by one, appended as it appended them
    chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["tick 0", "tick 1", "tick 2"]
    assert [bool(c.get("append")) for c in chunks] == [False, True, True]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # And the task holds the whole artifact, its appended text joined, under an id mapped at each hop
    task = call(stack, "GetTask", {"id": events[0]["task"]["id"]})
    [artifact] = task["artifacts"]
    assert [p["text"] for p in artifact["parts"]] == ["tick 0tick 1tick 2"]
    assert artifact["artifactId"].endswith(":ticks")
    assert artifact["artifactId"].count(":") == 2


def test_canceling_the_first_task_cancels_the_whole_chain(stack: str, reference: str) -> None:
    known = {t["id"] for t in call(stack, "ListTasks", {})["tasks"]}
    known_remote = {t["id"] for t in call(reference, "ListTasks", {})["tasks"]}
    # Given a chain whose last hop, the reference agent, streams for a long while
    message = user(chain(stack, reference, "tick 5000 0.05"))
    first = call(stack, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}})["task"]["id"]

    def working(base: str, old: set[str]) -> list[str]:
        tasks = call(base, "ListTasks", {})["tasks"]
        return [t["id"] for t in tasks if t["id"] not in old and t["status"]["state"] == "TASK_STATE_WORKING"]

    [last] = wait_until(lambda: working(reference, known_remote), "the reference agent to work", within=WAIT)
    [second] = wait_until(lambda: working(stack, known | {first}), "the middle hop to work", within=WAIT)

    # When the client cancels the first task
    call(stack, "CancelTask", {"id": first})

    # Then every task of the chain ends CANCELED
    for base, task_id in ((stack, first), (stack, second), (reference, last)):
        wait_until(
            lambda: call(base, "GetTask", {"id": task_id})["status"]["state"] == "TASK_STATE_CANCELED",  # noqa: B023
            f"{task_id} to be canceled",
            within=WAIT,
        )
