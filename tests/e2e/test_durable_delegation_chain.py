"""A chain of durable delegations on the local stack (issue 33), in durable mode
(``A2A_EXECUTION_MODE=durable``): our agent -> another of our agents (the same stack) -> the a2a-sdk
reference agent, each hop of ours ``tests/delegation/relay_agents.DurableDelegatingAgent``, whose
orders are JSON naming the next hop. Each hop sends its message with a push config naming the
stack's push receiver (``POST /_a2a/delegations/{ref}``, at the stack's public URL) and then waits
as a durable callback, with no invocation of the durable worker running, until a push wakes it.

Pushes, not polls, do the waking: with a remote that pushes, the next read without a push is
300 s away (``durable.delegation_wait.PUSH_RECHECK_SECONDS``), far past every hang guard here, and the
durable worker runs a few invocations per task (``GET /_local/durable``) however long the remote
works. A remote without push support is polled with durable waits."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_stack import StackProcess, running_stack
from test_delegation_chain import CARD, V1, call, user

from testkit.reference_agent import reference_agent
from testkit.waiting import wait_until

pytestmark = pytest.mark.e2e

AGENTS = Path(__file__).resolve().parents[1] / "delegation"
WAIT = 60.0
"""Hang guard (seconds); never a measured expectation. Well under the 300 s a lost push costs."""
PUSHED = re.compile(r'"POST /_a2a/delegations/([A-Za-z0-9_-]+) HTTP/1\.1" 200')
"""The stack's access log line of a push its receiver accepted, with the delegation's reference."""
REFERENCE = "'reference echo agent'"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, StackProcess]]:
    settings = {
        "A2A_EXECUTION_MODE": "durable",
        "A2A_EXECUTOR": "relay_agents:DurableDelegatingAgent",
        # The agents' module, and whatever path this run had (a worktree's code first, say)
        "PYTHONPATH": os.pathsep.join(filter(None, [str(AGENTS), os.environ.get("PYTHONPATH", "")])),
    }
    with running_stack(tmp_path_factory.mktemp("durable-delegation-stack"), settings) as running:
        yield running


@pytest.fixture(scope="module")
def base(stack: tuple[str, StackProcess]) -> str:
    return stack[0]


@pytest.fixture(scope="module")
def pushing() -> Iterator[str]:
    with reference_agent(push=True) as url:
        yield url


@pytest.fixture(scope="module")
def silent() -> Iterator[str]:
    with reference_agent() as url:
        yield url


def chain(base: str, reference: str, order: str, **last_hop: Any) -> str:
    """Orders for the stack's agent: ask the stack's agent to ask the reference agent ``order``
    (``last_hop``: more orders for that second hop, e.g. its ``limit``)."""
    second = {"to": reference + CARD, "send": order, **last_hop}
    return json.dumps({"to": base + CARD, "send": json.dumps(second)})


def start(base: str, text: str) -> str:
    params = {"message": user(text), "configuration": {"returnImmediately": True}}
    task_id: str = call(base, "SendMessage", params)["task"]["id"]
    return task_id


def ended(base: str, task_id: str, state: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        task: dict[str, Any] = call(base, "GetTask", {"id": task_id})
        return task if task["status"]["state"] == state else None

    return wait_until(reached, f"{task_id} to be {state}", within=WAIT)


def durable_status(base: str) -> dict[str, Any]:
    status: dict[str, Any] = httpx.get(base + "/_local/durable", timeout=10).json()
    return status


def idle(base: str) -> dict[str, Any]:
    """The durable worker's status once no invocation of it runs."""
    return wait_until(
        lambda: (s := durable_status(base))["invocationsRunning"] == 0 and s, "the durable worker idle", within=WAIT
    )


def task_ids(base: str) -> set[str]:
    return {t["id"] for t in call(base, "ListTasks", {})["tasks"]}


def working(base: str, old: set[str]) -> list[str]:
    tasks = call(base, "ListTasks", {})["tasks"]
    return [t["id"] for t in tasks if t["id"] not in old and t["status"]["state"] == "TASK_STATE_WORKING"]


def pushed_to(lines: list[str]) -> set[str]:
    """The references (one per delegation, opaque: ``delegation.hook.new_ref``) the stack's push
    receiver accepted pushes for, by its access log."""
    return {m.group(1) for line in lines if (m := PUSHED.search(line))}


def artifacts_of(events: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The artifacts a stream built: each update replaces its artifact, or appends to it."""
    built: dict[str, list[str]] = {}
    for update in (e["artifactUpdate"] for e in events if "artifactUpdate" in e):
        artifact = update["artifact"]
        texts = [p["text"] for p in artifact["parts"]]
        built[artifact["artifactId"]] = (
            [*built.get(artifact["artifactId"], []), *texts] if update.get("append") else texts
        )
    return built


def test_a_stream_ends_completed_with_the_reference_agent_s_artifact_relayed_through_two_hops(
    stack: tuple[str, StackProcess], pushing: str
) -> None:
    base, process = stack
    known = task_ids(base)
    logged = len(process.stdout)
    before = idle(base)
    # When a client streams a task that delegates twice, down to a reference agent that pushes
    # (each of its six chunks, and its end)
    message = user(chain(base, pushing, "tick 6 0.5"))
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + WAIT  # a hang guard: a lost push would hold the chain for 300 s
    with httpx.stream("POST", base + "/", json=body, headers=V1, timeout=WAIT) as response:
        for line in response.iter_lines():
            assert time.monotonic() < deadline, f"the stream did not end within {WAIT} s: {events}"
            if line.startswith("data:"):
                events.append(json.loads(line[5:])["result"])

    # Then the stream ends COMPLETED, with the reference agent's artifact, under an id mapped at each hop
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events[-1]
    ticks = [f"tick {n}" for n in range(6)]
    built = artifacts_of(events)
    assert list(built.values()) == [ticks], built
    [artifact_id] = built
    assert artifact_id.endswith(":ticks")
    assert artifact_id.count(":") == 2
    first = events[0]["task"]["id"]
    [artifact] = call(base, "GetTask", {"id": first})["artifacts"]
    assert [p["text"] for p in artifact["parts"]] == ticks

    # And pushes did the waking: the stack's receiver, at its public URL, accepted pushes for both
    # hops (the reference agent's to the middle one, the middle one's to the first) ...
    [second] = task_ids(base) - known - {first}
    refs = pushed_to(process.stdout[logged:])
    assert len(refs) >= 2  # one delegation each
    assert all(len(ref) == 43 for ref in refs)  # random, opaque (delegation.hook.new_ref) ...
    assert not [ref for ref in refs for task_id in (first, second) if task_id in ref or task_id.replace("-", "") in ref]
    # ... and the durable worker ran a few invocations per task (one sends and suspends, the push
    # that says the remote ended runs the rest), not one per push or per chunk
    after = idle(base)
    assert after["executions"] == before["executions"] + 2
    assert after["invocations"] - before["invocations"] <= 2 * 3


def test_canceling_the_first_task_in_the_middle_cancels_the_whole_chain(base: str, pushing: str) -> None:
    known, known_remote = task_ids(base), task_ids(pushing)
    # Given a chain whose last hop, the reference agent, works for a long while
    first = start(base, chain(base, pushing, "tick 1000 1"))
    [last] = wait_until(lambda: working(pushing, known_remote), "the reference agent to work", within=WAIT)
    [second] = wait_until(lambda: working(base, known | {first}), "the middle hop to work", within=WAIT)
    idle(base)  # both hops wait, with no invocation running

    # When the client cancels the first task
    call(base, "CancelTask", {"id": first})

    # Then every task of the chain ends CANCELED
    for where, task_id in ((base, first), (base, second), (pushing, last)):
        ended(where, task_id, "TASK_STATE_CANCELED")


def test_a_remote_that_never_answers_fails_the_first_task_naming_it(base: str, pushing: str) -> None:
    known_remote = task_ids(pushing)
    # Given a chain whose last hop works far longer than the 4 s the middle hop gives it
    first = start(base, chain(base, pushing, "tick 1000 1", limit=4))

    # Then the first task fails, saying which remote did not finish in time
    failed = ended(base, first, "TASK_STATE_FAILED")
    said = failed["status"]["message"]["parts"][0]["text"]
    assert f"{REFERENCE} did not finish within the time it was given (4 s)" in said, said
    # And the reference agent's task was canceled
    [last] = task_ids(pushing) - known_remote
    ended(pushing, last, "TASK_STATE_CANCELED")


def test_a_reference_agent_without_push_is_polled_and_the_chain_completes(base: str, silent: str) -> None:
    known_remote = task_ids(silent)
    # When the chain's last hop is a reference agent that sends no pushes (its card says so)
    first = start(base, chain(base, silent, "tick 2 1"))

    # Then the middle hop polls it with durable waits, and the first task completes with its artifact
    done = ended(base, first, "TASK_STATE_COMPLETED")
    [artifact] = done["artifacts"]
    assert [p["text"] for p in artifact["parts"]] == ["tick 0", "tick 1"]
    # ... from the one task the reference agent was given (a poll reads it, never sends again)
    [last] = task_ids(silent) - known_remote
    assert call(silent, "GetTask", {"id": last})["status"]["state"] == "TASK_STATE_COMPLETED"
