"""The push receiver's reference is hostile input (``POST /_a2a/delegations/{ref}`` is public): any
malformed one is answered 404 with one line at INFO, never 500, and logs no error or traceback
(issue 40, item 6); one of the right shape that stands for nothing is answered the same. Exercised
through the real app, as ``test_hook.py`` does."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from dataclasses import replace

import pytest
from starlette.testclient import TestClient
from starlette.types import Message

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.delegation.hook import hook_url, new_ref, token_digest
from a2a_serverless.ports import DelegationRef, Scope
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.tasks import a_task_with_events

SCOPE = Scope("acme", "alice")
TOKEN = "s3cret-token"
ENDED = json.dumps({"task": {"id": "r1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}).encode()


class RecordedRuns:
    def __init__(self) -> None:
        self.resumed: list[str] = []

    def start(self, name: str, payload: str) -> None:
        raise AssertionError("the receiver starts nothing")

    def resume(self, callback_id: str, payload: str) -> None:
        self.resumed.append(callback_id)

    def abandon(self, callback_id: str, reason: str) -> None:
        raise AssertionError("the receiver ends nothing")


REF = new_ref()


@pytest.fixture
def served() -> tuple[TestClient, RecordedRuns]:
    store = MemoryTaskStore()
    runs = RecordedRuns()
    runtime = build_runtime(Settings(store="memory", execution_mode="durable"), store=store, durable=runs)
    record = a_task_with_events(store, SCOPE, 2)  # WORKING, task t1
    store.commit(replace(record, waiting_callback="cb-7", waiting_token=token_digest(TOKEN)))
    store.put_delegation_ref(REF, DelegationRef(SCOPE, "t1", token_digest(TOKEN)))
    return TestClient(create_app(runtime), raise_server_exceptions=False), runs


def post(client: TestClient, ref: str, body: bytes, headers: dict[str, str]) -> int:
    """The status the app answers a POST to ``ref``'s receiver with, through its ASGI interface (an
    HTTP client refuses URLs this long; API Gateway would too, but the app must not rely on it)."""
    path = f"/_a2a/delegations/{ref}"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode("utf-8"),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    async def call() -> None:
        await client.app(scope, receive, send)

    asyncio.run(call())
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


HOSTILE = {
    "1,000 nested arrays": encoded(b"[" * 1000 + b"]" * 1000),
    "100,000 nested arrays": encoded(b"[" * 100_000 + b"]" * 100_000),
    "nested arrays after a string (parsed: recursion)": encoded(b'["a",' + b"[" * 1100),
    "nested arrays within the length bound": encoded(b'["a",' + b"[" * 1000 + b"]" * 1 + b"]"),
    "a huge reference": "A" * 1_000_000,
    "the reference and one more character": REF + "A",
    "the reference less one character": REF[:-1],
    "the reference with a padding character": REF[:-1] + "=",
    "the reference with a dot": REF[:-1] + ".",
    "the task's scope and id, as the receiver once named them": encoded(json.dumps(["acme", "alice", "t1"]).encode()),
    "not base64url": "%%%",
    "base64 of nothing": "",
    "not UTF-8": encoded(b'["\xff\xfe", "alice", "t1"]'),
    "not JSON": encoded(b'["acme", alice, t1]'),
    "a JSON number": encoded(b"12345"),
    "a JSON string": encoded(b'"acme"'),
    "an object": encoded(json.dumps({"tenant": "acme", "owner": "alice", "task": "t1"}).encode()),
    "wrong types": encoded(json.dumps(["acme", 7, ["t1"]]).encode()),
    "two fields": encoded(json.dumps(["alice", "t1"]).encode()),
    "four fields": encoded(json.dumps(["acme", "alice", "t1", "x"]).encode()),
    "an empty owner": encoded(json.dumps(["acme", "", "t1"]).encode()),
    "a lone surrogate": encoded(b'["acme", "alice", "t\\ud800"]'),
    "non-ASCII characters": "\u00e9\u00e9\u00e9\u00e9",
    "non-ASCII characters, the reference's length": "\u00e9" * len(REF),
    "the right shape, never made": new_ref(),
}


@pytest.mark.parametrize("ref", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_malformed_reference_is_not_found_with_one_line_and_no_traceback(
    served: tuple[TestClient, RecordedRuns], ref: str, caplog: pytest.LogCaptureFixture
) -> None:
    client, runs = served
    caplog.set_level(logging.DEBUG)
    assert post(client, ref, ENDED, {"X-A2A-Notification-Token": TOKEN}) == 404
    assert runs.resumed == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
    hook_lines = [r for r in caplog.records if r.name == "a2a_serverless.delegation.hook"]
    assert len(hook_lines) <= 1  # (none for the empty reference: no route matches)
    assert all(r.levelno == logging.INFO for r in hook_lines)


def test_a_reference_as_the_kit_makes_it_still_wakes_the_wait(served: tuple[TestClient, RecordedRuns]) -> None:
    client, runs = served
    answer = client.post(hook_url("", REF), content=ENDED, headers={"X-A2A-Notification-Token": TOKEN})
    assert (answer.status_code, answer.json()) == (200, {"status": "woken"})
    assert runs.resumed == ["cb-7"]


def test_a_deeply_nested_body_with_the_token_wakes_the_wait_without_an_error(
    served: tuple[TestClient, RecordedRuns], caplog: pytest.LogCaptureFixture
) -> None:
    # The body is only peeked at: one the receiver cannot read wakes the wait (the execution reads the task)
    client, runs = served
    caplog.set_level(logging.DEBUG)
    for body in (b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe" * 10):
        path = hook_url("", REF)
        answer = client.post(path, content=body, headers={"X-A2A-Notification-Token": TOKEN})
        assert answer.status_code == 200
    # (the second announces what the first did, unreadable: it wakes nothing more)
    assert runs.resumed == ["cb-7"]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
