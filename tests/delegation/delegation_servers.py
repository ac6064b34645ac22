"""The servers of the delegation tests, each on 127.0.0.1 under uvicorn in a thread of the test
process: our app on a memory runtime (its worker runs the executor on threads), and the a2a-sdk
reference server (``bench/_reference_server.py``). The agents are in ``relay_agents``."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from a2a_serverless.config import Settings
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.reference_agent import reference_agent as reference_server
from testkit.served import served
from testkit.waiting import wait_until

CARD = "/.well-known/agent-card.json"
WAIT = 30.0
"""Hang guard (seconds) for a task to reach a state; never a measured expectation."""


@dataclass
class Agent:
    """A served agent and a plain JSON-RPC client of it."""

    url: str
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    """(method, path, headers) of each request it got."""
    faults: FailOnce | None = None
    holds: HoldCancels | None = None

    @property
    def card_url(self) -> str:
        return self.url + CARD

    def call(self, method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = httpx.post(self.url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60).json()
        assert "result" in answer, answer
        return answer["result"]

    def send(self, text: str, *, wait: bool = True) -> dict[str, Any]:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        params: dict[str, Any] = {"message": message, "configuration": {"returnImmediately": not wait}}
        task: dict[str, Any] = self.call("SendMessage", params)["task"]
        return task

    def task(self, task_id: str) -> dict[str, Any]:
        task: dict[str, Any] = self.call("GetTask", {"id": task_id})
        return task

    def tasks(self) -> list[dict[str, Any]]:
        tasks: list[dict[str, Any]] = self.call("ListTasks", {})["tasks"]
        return tasks

    def wait_for(self, task_id: str, state: str) -> dict[str, Any]:
        return wait_until(
            lambda: (t := self.task(task_id))["status"]["state"] == state and t, f"{task_id} {state}", within=WAIT
        )


class Recorder:
    """Notes each request's method, path and headers in ``requests``."""

    def __init__(self, app: ASGIApp, requests: list[tuple[str, str, dict[str, str]]]) -> None:
        self.app = app
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.requests.append((scope["method"], scope["path"], headers))
        await self.app(scope, receive, send)


class FailOnce:
    """Lets the first POST through to the app, then answers it 503 as if the reply were lost (the
    app did the work: a retry that is not recognised makes a second task)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.failed = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self.failed:
            await self.app(scope, receive, send)
            return
        self.failed += 1
        answered = asyncio.Event()

        async def swallow(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered.set()

        inner = asyncio.ensure_future(self.app(scope, receive, swallow))
        await asyncio.wait({inner, asyncio.ensure_future(answered.wait())}, return_when=asyncio.FIRST_COMPLETED)
        inner.cancel()  # a stream would go on: the client is gone
        await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"unavailable"})


class HoldCancels:
    """Holds each REST CancelTask until the test ``release``s it: ``arrived`` when one came,
    ``answered`` once the app answered it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.arrived, self.release, self.answered = threading.Event(), threading.Event(), threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith(":cancel"):
            await self.app(scope, receive, send)
            return
        self.arrived.set()
        for _ in range(int(WAIT * 100)):  # a hang guard, not a delay
            if self.release.is_set():
                break
            await asyncio.sleep(0.01)

        async def sending(message: Message) -> None:
            # Noted before the answer's last bytes go out: the client cannot have it unnoted.
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.answered.set()
            await send(message)

        await self.app(scope, receive, sending)


@contextlib.contextmanager
def our_agent(
    executor: str,
    *,
    fail_once: bool = False,
    hold_cancels: bool = False,
    wrap: Callable[[ASGIApp], ASGIApp] | None = None,
    **settings: Any,
) -> Iterator[Agent]:
    """Our app on a memory runtime serving ``executor`` (``relay_agents:Name``), ``wrap``ped if given."""
    runtime = build_runtime(Settings(store="memory", executor=executor, poll_interval_seconds=0.01, **settings))
    app: ASGIApp = create_app(runtime)
    app = wrap(app) if wrap else app
    faults = FailOnce(app) if fail_once else None
    holds = HoldCancels(app) if hold_cancels else None
    requests: list[tuple[str, str, dict[str, str]]] = []
    try:
        with served(Recorder(faults or holds or app, requests)) as url:
            yield Agent(url, requests, faults, holds)
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


@contextlib.contextmanager
def reference_agent() -> Iterator[Agent]:
    """The a2a-sdk 1.x reference server with its echo executor (``tick N SECONDS`` streams N chunks)."""
    with reference_server() as url:
        yield Agent(url)
