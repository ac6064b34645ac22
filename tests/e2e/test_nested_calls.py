"""Agents that call agents on one local stack: a chain of five nested calls never stalls, since
the stack runs as many workers at once as the template allows (WorkerMaxConcurrency, 20), as
Lambda does (issue 33). With the stack's former four, the fifth call waited for a worker that
the four callers above it held."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2e_stack import running_stack

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {"A2A_EXECUTOR": "nesting_agent:NestingAgent", "PYTHONPATH": str(HERE)}
    with running_stack(tmp_path_factory.mktemp("nesting-stack"), settings) as (base_url, _):
        yield base_url


def test_a_chain_of_five_nested_calls_completes(stack: str) -> None:
    # Given the stack's agent, which answers "nest N" by asking itself "nest N-1" and waiting
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "nest 5"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}

    # When a client asks for five nested calls (six runs at once: the first and the five it starts)
    response = httpx.post(stack + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=120)

    # Then each call got a worker and answered, innermost first, within the blocking call
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert [part["text"] for part in task["artifacts"][0]["parts"]] == ["5>4>3>2>1>0"]
    # And the chain is six tasks, each completed
    listed = httpx.post(
        stack + "/",
        json={"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}},
        headers={"A2A-Version": "1.0"},
        timeout=30,
    ).json()["result"]
    states = [t["status"]["state"] for t in listed["tasks"]]
    assert states == ["TASK_STATE_COMPLETED"] * 6
