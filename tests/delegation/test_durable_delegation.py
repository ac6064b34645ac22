"""Durable delegation: in durable mode an executor with steps delegates with no function running
while the remote works (``a2a_serverless.durable.delegation``).

Our delegating agent runs on the official local runner of durable executions (checkpoints, replay,
callback waits, as on Lambda) and is served over HTTP, so the remote's pushes reach its push
receiver. The remote is the a2a-sdk 1.x reference server, with push notifications (the SDK's own
sender) or without them (we poll it with durable waits). Every wait is a real one: what the test
checks is what ended it (a push, a poll) and what ran meanwhile (the durable worker's invocations).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from aws_durable_execution_sdk_python.exceptions import SuspendExecution
from delegation_servers import WAIT, Agent, Recorder, our_agent
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.durable.steps import _CallbackWait
from a2a_serverless.ports import Scope as StoreScope
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.durable import DurableLimits, LocalDurableWorker
from testkit.reference_agent import reference_agent
from testkit.served import Later, served
from testkit.waiting import wait_until

DELEGATOR = "relay_agents:DurableDelegatingAgent"


@dataclass
class DurableAgent:
    agent: Agent
    worker: LocalDurableWorker
    store: MemoryTaskStore

    def invocations(self) -> int:
        return int(self.worker.status()["invocations"])

    def pushes(self) -> list[str]:
        """The paths of the pushes our receiver got."""
        return [path for method, path, _ in self.agent.requests if path.startswith("/_a2a/delegations/")]


@contextlib.contextmanager
def durable_agent(
    executor: str = DELEGATOR, *, invocation_timeout: int = 900, **settings: Any
) -> Iterator[DurableAgent]:
    """Our agent in durable mode, served on 127.0.0.1 (its public URL: where pushes reach it).
    ``invocation_timeout``: the durable worker's timeout (the local runner ends an invocation that
    outlives it, and runs the execution on in a new one, as Lambda does)."""
    later = Later()
    requests: list[tuple[str, str, dict[str, str]]] = []
    with served(Recorder(later, requests)) as url:
        store = MemoryTaskStore()
        config = Settings(
            store="memory",
            execution_mode="durable",
            executor=executor,
            public_url=url,
            poll_interval_seconds=0.01,
            durable_invocation_seconds=invocation_timeout,
            **settings,
        )
        limits = DurableLimits(invocation_timeout=invocation_timeout, execution_timeout=300)
        worker = LocalDurableWorker(config, limits=limits, store=store)
        try:
            later.app = create_app(build_runtime(config, store=store, durable=worker.runs))
            yield DurableAgent(Agent(url, requests), worker, store)
        finally:
            worker.close()


def orders(to: Agent, send: str, **more: Any) -> str:
    return json.dumps({"to": to.card_url, "send": send, **more})


@pytest.fixture
def pushing() -> Iterator[Agent]:
    with reference_agent(push=True) as url:
        yield Agent(url)


@pytest.fixture
def silent() -> Iterator[Agent]:
    with reference_agent() as url:
        yield Agent(url)


def the_remote_task(remote: Agent) -> dict[str, Any]:
    (task,) = remote.tasks()
    return task


def test_a_push_resumes_the_delegation_and_nothing_runs_while_the_remote_works(pushing: Agent) -> None:
    with durable_agent() as ours:
        # When our agent delegates a chore of three one-second ticks to an agent that pushes
        task = ours.agent.send(orders(pushing, "tick 3 1"), wait=False)
        done = ours.agent.wait_for(task["id"], "TASK_STATE_COMPLETED")
        # Then the remote's artifact is ours, whole
        (artifact,) = done["artifacts"]
        assert [p["text"] for p in artifact["parts"]] == ["tick 0", "tick 1", "tick 2"]
        # ... the remote pushed to our receiver, and its push (not a poll: the next one was 300 s
        # away) resumed the run: one invocation sent and suspended, the push's ran the rest
        assert ours.pushes()
        assert ours.invocations() == 2
        # ... and the remote got one message
        assert the_remote_task(pushing)["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_remote_without_push_is_polled_with_durable_waits(silent: Agent) -> None:
    with durable_agent() as ours:
        task = ours.agent.send(orders(silent, "tick 2 1"), wait=False)
        done = ours.agent.wait_for(task["id"], "TASK_STATE_COMPLETED")
        assert [p["text"] for p in done["artifacts"][0]["parts"]] == ["tick 0", "tick 1"]
        # Each poll was a new invocation after a durable wait (2 s, then 4 s ...): a few, not a
        # function held for the whole time
        assert 2 <= ours.invocations() <= 4
        assert ours.pushes() == []


def test_canceling_our_task_while_it_waits_cancels_the_remote_task(pushing: Agent) -> None:
    with durable_agent() as ours:
        task = ours.agent.send(orders(pushing, "tick 100 1"), wait=False)
        wait_until(lambda: _waiting(ours, task["id"]), "the delegation to wait", within=WAIT)
        ours.agent.call("CancelTask", {"id": task["id"]})
        ours.agent.wait_for(task["id"], "TASK_STATE_CANCELED")
        pushing.wait_for(the_remote_task(pushing)["id"], "TASK_STATE_CANCELED")


def test_a_remote_that_never_finishes_fails_our_task_at_the_limit_naming_it(silent: Agent) -> None:
    with durable_agent() as ours:
        task = ours.agent.send(orders(silent, "tick 100 1", limit=3), wait=False)
        failed = ours.agent.wait_for(task["id"], "TASK_STATE_FAILED")
        said = failed["status"]["message"]["parts"][0]["text"]
        assert said == "The remote agent 'reference echo agent' did not finish within the time it was given (3 s)."
        silent.wait_for(the_remote_task(silent)["id"], "TASK_STATE_CANCELED")


def test_a_push_without_the_token_wakes_nothing(pushing: Agent) -> None:
    with durable_agent() as ours:
        task = ours.agent.send(orders(pushing, "tick 100 1"), wait=False)
        hook = wait_until(lambda: _waiting(ours, task["id"]), "the delegation to wait", within=WAIT)
        body = {"task": {"id": "x", "status": {"state": "TASK_STATE_COMPLETED"}}}
        # (answered as a reference that stands for nothing: the caller learns nothing of our task)
        for headers in ({}, {"X-A2A-Notification-Token": "guess"}, {"Authorization": "Bearer guess"}):
            answer = httpx.post(ours.agent.url + hook, json=body, headers=headers, timeout=10)
            assert (answer.status_code, answer.json()) == (404, {"status": "no such delegation"})
        scoped = base64.urlsafe_b64encode(json.dumps(["", "anonymous", task["id"]]).encode()).decode().rstrip("=")
        for elsewhere in ("/_a2a/delegations/" + scoped, "/_a2a/delegations/!!", hook + "A"):
            assert httpx.post(ours.agent.url + elsewhere, json=body, timeout=10).status_code == 404
        invocations = ours.invocations()
        assert ours.agent.task(task["id"])["status"]["state"] == "TASK_STATE_WORKING"
        assert ours.invocations() == invocations
        ours.agent.call("CancelTask", {"id": task["id"]})


def test_a_worker_that_dies_while_it_waits_goes_on_when_the_push_arrives(
    pushing: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a durable worker whose first invocation dies once its delegation's wait is recorded: it
    # hangs there until Lambda ends it at its timeout (3 s), as a frozen or killed worker would
    dead = threading.Event()
    real = _CallbackWait.result
    waits = itertools.count()

    async def dies_first(self: _CallbackWait) -> str:
        if next(waits) == 0:
            await asyncio.to_thread(dead.wait, WAIT)  # the hang; released when the test ends
            raise SuspendExecution("the dead invocation's thread ends")  # its outcome was long settled
        return await real(self)

    monkeypatch.setattr(_CallbackWait, "result", dies_first)
    try:
        with durable_agent(invocation_timeout=3) as ours:
            # When it delegates a chore of six one-second ticks to an agent that pushes
            task = ours.agent.send(orders(pushing, "tick 6 1"), wait=False)
            done = ours.agent.wait_for(task["id"], "TASK_STATE_COMPLETED")
            # Then the next invocation replayed the run (the send was not made again: the remote
            # has one task), waited, and the push resumed it to the end
            assert len(done["artifacts"][0]["parts"]) == 6
            assert the_remote_task(pushing)["status"]["state"] == "TASK_STATE_COMPLETED"
            assert ours.pushes()
            assert ours.invocations() >= 2  # the one that died, and the one that went on
    finally:
        dead.set()


class HoldSends:
    """Holds each answer to ``/message:send`` (the remote made its task, we do not know it yet)
    until the test ``release``s it; ``arrived`` once one is held."""

    def __init__(self) -> None:
        self.arrived, self.release = threading.Event(), threading.Event()

    def around(self, app: ASGIApp) -> ASGIApp:
        async def holding(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or not scope["path"].endswith("/message:send"):
                await app(scope, receive, send)
                return

            async def sending(message: AsgiMessage) -> None:
                if message["type"] == "http.response.start":
                    self.arrived.set()
                    await asyncio.to_thread(self.release.wait, WAIT)
                await send(message)

            await app(scope, receive, sending)

        return holding


def test_a_cancel_while_the_message_is_on_its_way_cancels_the_task_it_made() -> None:
    holds = HoldSends()
    chores_settings = {"allow_private_webhooks": True}  # it takes our push URL (http, on 127.0.0.1)
    with our_agent("relay_agents:ChoreAgent", wrap=holds.around, **chores_settings) as chores, durable_agent() as ours:
        # Given a delegation whose send made the remote's task, its answer not yet back
        chore = orders(chores, "hang", binding="HTTP+JSON", cancel_timeout=4)
        task = ours.agent.send(chore, wait=False)
        assert holds.arrived.wait(WAIT)
        remote = wait_until(lambda: _remote_of(chores), "the remote's task", within=WAIT)
        # When our task is canceled meanwhile (the run is stopped during its send step), and then
        # the answer comes
        cancel = threading.Thread(target=ours.agent.call, args=("CancelTask", {"id": task["id"]}), daemon=True)
        cancel.start()
        ours.agent.wait_for(task["id"], "TASK_STATE_CANCELED")
        holds.release.set()
        # Then the task the send made is canceled too
        chores.wait_for(remote["id"], "TASK_STATE_CANCELED")
        cancel.join(WAIT)


def test_a_remote_that_refuses_our_push_config_is_polled() -> None:
    # Given our own agent as the remote, which takes https push URLs only (ours is http here)
    with our_agent("relay_agents:ChoreAgent") as chores, durable_agent() as ours:
        # When our agent delegates to it
        task = ours.agent.send(orders(chores, "chunks 2"), wait=False)
        done = ours.agent.wait_for(task["id"], "TASK_STATE_COMPLETED")
        # Then the send went again without the push config (one remote task), and polls found the end
        assert [p["text"] for p in done["artifacts"][0]["parts"]] == ["chunk 0;chunk 1;"]
        (remote,) = chores.tasks()
        assert remote["status"]["state"] == "TASK_STATE_COMPLETED"


def test_the_receivers_url_given_to_the_remote_names_nothing_of_our_task(pushing: Agent) -> None:
    with durable_agent() as ours:
        task = ours.agent.send(orders(pushing, "tick 2 1"), wait=False)
        ours.agent.wait_for(task["id"], "TASK_STATE_COMPLETED")
        # The URL the remote was given (its push config) and the ones it pushed to
        remote = the_remote_task(pushing)
        configs = pushing.call("ListTaskPushNotificationConfigs", {"taskId": remote["id"]})["configs"]
        assert configs
        assert ours.pushes()
        for url in [c["url"] for c in configs] + [ours.agent.url + path for path in ours.pushes()]:
            ref = url.rsplit("/", 1)[1]
            assert url == f"{ours.agent.url}/_a2a/delegations/{ref}"
            assert re.fullmatch(r"[A-Za-z0-9_-]{43}", ref)
            for ours_alone in ("anonymous", task["id"], task["contextId"]):  # the owner, the task
                assert not [form for form in encodings(ours_alone) if form in ref], ours_alone
        # ... and once the delegation ended, its reference stands for nothing: even with the token
        path = ours.pushes()[-1]
        token = _token_of(ours, path)
        body = {"task": {"id": remote["id"], "status": {"state": "TASK_STATE_COMPLETED"}}}
        answer = httpx.post(ours.agent.url + path, json=body, headers={"X-A2A-Notification-Token": token}, timeout=10)
        assert (answer.status_code, answer.json()) == (404, {"status": "no such delegation"})


def encodings(value: str) -> set[str]:
    """``value`` as it could appear in a URL: itself, percent-encoded, hex, and the characters of its
    base64 and base64url encodings that do not depend on what stands beside it (at each alignment)."""
    raw = value.encode()
    forms = {value, quote(value, safe=""), raw.hex(), value.replace("-", "")}
    for pad in range(3):
        for encode in (base64.urlsafe_b64encode, base64.b64encode):
            text = encode(b"\0" * pad + raw).decode().rstrip("=")
            forms.add(text[(pad * 4 + 2) // 3 : -2])
    return {form for form in forms if len(form) >= 6}


def test_replays_of_one_push_wake_the_delegation_at_most_once_per_state(pushing: Agent) -> None:
    with durable_agent() as ours:
        # Given a delegation that waits while its remote works (for 100 s)
        task = ours.agent.send(orders(pushing, "tick 100 1"), wait=False)
        hook = wait_until(lambda: _waiting(ours, task["id"]), "the delegation to wait", within=WAIT)
        headers = {"X-A2A-Notification-Token": _token_of(ours, hook)}
        remote = the_remote_task(pushing)
        invocations = _settled(ours, task["id"])
        # When a push with the token, saying the remote task completed, comes 40 times (it did not)
        said = {
            "task": {"id": remote["id"], "contextId": remote["contextId"], "status": {"state": "TASK_STATE_COMPLETED"}}
        }
        answers = [_push(ours, hook, said, headers) for _ in range(40)]
        # Then it woke the delegation once: one invocation, which read the remote task and waits again
        assert answers.count("woken") == 1
        assert set(answers) == {"woken", "noted"}
        invocations = _settled(ours, task["id"], after=invocations, more=1)
        assert [_push(ours, hook, said, headers) for _ in range(40)] == ["noted"] * 40
        # ... a push announcing another state wakes it once more, and an unreadable one once
        for body in (
            {"statusUpdate": {**said["task"], "taskId": remote["id"], "status": {"state": "TASK_STATE_FAILED"}}},
            "?",
        ):
            answers = [_push(ours, hook, body, headers) for _ in range(20)]
            assert answers.count("woken") == 1
            invocations = _settled(ours, task["id"], after=invocations, more=1)
        assert ours.agent.task(task["id"])["status"]["state"] == "TASK_STATE_WORKING"
        ours.agent.call("CancelTask", {"id": task["id"]})
        ours.agent.wait_for(task["id"], "TASK_STATE_CANCELED")


def _push(ours: DurableAgent, path: str, body: Any, headers: dict[str, str]) -> str:
    answer = httpx.post(ours.agent.url + path, json=body, headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["status"])


def _settled(ours: DurableAgent, task_id: str, *, after: int = 0, more: int = 0) -> int:
    """The durable worker's invocations once it is idle, the task's wait open, and (with ``more``)
    ``after + more`` invocations made; never more (checked once idle)."""

    def idle() -> int | None:
        head = ours.store.get_head(StoreScope("", "anonymous"), task_id)
        count = ours.invocations()
        waiting = head is not None and head.waiting_callback and not ours.worker.running
        return count if waiting and count >= after + more else None

    count = wait_until(idle, "the worker to be idle, the task waiting", within=WAIT)
    if more:
        assert count == after + more
    return count


def _token_of(ours: DurableAgent, path: str) -> str:
    """The token the remote's pushes to ``path`` carried."""
    return next(h["x-a2a-notification-token"] for _, p, h in ours.agent.requests if p == path)


def _waiting(ours: DurableAgent, task_id: str) -> str | None:
    """Our push receiver's path for the task's delegation, once it waits (its head names the wait)
    and the remote pushed to it."""
    head = ours.store.get_head(StoreScope("", "anonymous"), task_id)
    pushes = ours.pushes()
    return pushes[-1] if head is not None and head.waiting_callback and head.waiting_token and pushes else None


def _remote_of(remote: Agent) -> dict[str, Any] | None:
    tasks = remote.tasks()
    return tasks[0] if len(tasks) == 1 else None
