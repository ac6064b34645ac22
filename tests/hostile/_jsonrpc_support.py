"""Shared by the hostile-input suites (``test_jsonrpc_fuzz``, ``test_limits``): a memory runtime
behind the app, driven in process, with a store that counts writes, and the checks every answer
must pass whatever was sent.

The harness is synchronous (it owns an event loop), so hypothesis can drive thousands of requests
through one app without rebuilding it per example.

The checks are the spec's wire shapes (A2A specification, section 9.5 Error Handling), stated independently of the
product's error classes: a JSON-RPC 2.0 response with the id echoed when it could be read, a code from the spec's
table (A2A specification, section 5.4), ``data`` in the caller's version's shape (1.0: a list of typed details with a
``google.rpc.ErrorInfo`` first; 0.3: one flat object), and nothing of Python's internals.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from a2a_serverless.adapters.memory_blobs import MemoryBlobStore
from a2a_serverless.blobs import PartOffloader
from a2a_serverless.config import Settings
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.stores import LEAK_MARKERS, SpyStore

V1 = {"A2A-Version": "1.0"}
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
DOMAIN = "a2a-protocol.org"
HOOK = "https://example.com/hook"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
VERSION_NOT_SUPPORTED = -32009
# What a well-formed call may fail with (A2A specification, section 5.4): the A2A errors. Never -32603.
OPERATION_CODES = frozenset({INVALID_PARAMS, *range(-32009, -32000)})
SPEC_CODES = frozenset({PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, *OPERATION_CODES})


def message(text: str = "hello", message_id: str = "m-case", **extra: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


@dataclass
class Rig:
    """A memory runtime behind the app with a COMPLETED task ``done`` and an INPUT_REQUIRED task
    ``waiting``; every call runs on the rig's own event loop."""

    loop: asyncio.AbstractEventLoop
    http: httpx.AsyncClient
    runtime: Runtime
    store: Any
    """A ``SpyStore`` unless the rig was built on another store."""
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def fill(self, value: Any) -> Any:
        """Replace ``{done}``/``{waiting}`` (and ``{done_ctx}``...) with the setup tasks' ids."""
        if isinstance(value, str):
            for name, task in self.tasks.items():
                value = value.replace("{" + name + "_ctx}", task["contextId"]).replace("{" + name + "}", task["id"])
            return value
        if isinstance(value, dict):
            return {self.fill(k): self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    def request(
        self, verb: str, path: str, *, content: Any = None, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        sent = content.decode(errors="replace") if isinstance(content, bytes) else str(content or "")
        SENT_MARKERS.update(marker for marker in LEAK_MARKERS if marker in sent + path)
        response: httpx.Response = self.run(self.http.request(verb, path, content=content, headers=headers, **kwargs))
        return response

    def post(self, body: bytes, headers: dict[str, str] | None = None, path: str = "/") -> httpx.Response:
        return self.request("POST", path, content=body, headers={"Content-Type": "application/json", **(headers or {})})

    def settle(self) -> None:
        """Wait for the workers of earlier requests, so the store only changes through the next one."""
        concurrent.futures.wait(list(self.runtime.queue.futures))  # type: ignore[attr-defined]

    def send(self, text: str, message_id: str, caller: dict[str, str] | None = None) -> dict[str, Any]:
        body = json.dumps({"message": message(text, message_id)}).encode()
        response = self.post(body, {**V1, **(caller or {})}, path="/message:send")
        assert response.status_code == 200, response.text
        task: dict[str, Any] = response.json()["task"]
        return task

    def state(self) -> Any:
        self.settle()
        return self.store.snapshot()


@contextmanager
def rig(task_store: Any = None, *, caller: dict[str, str] | None = None, **overrides: Any) -> Iterator[Rig]:
    """The rig on a new ``SpyStore``, or on ``task_store`` (then ``state()`` is not available);
    ``caller``: headers that authenticate the setup requests (``auth_mode="api-key"``)."""
    settings = {
        "store": "memory",
        "poll_interval_seconds": 0.002,
        "stream_poll_seconds": 0.01,
        "stream_max_seconds": 0.2,
        "blocking_wait_seconds": 5.0,
        **overrides,
    }
    config = Settings(**settings)
    # Large parts are stored aside as in production (memory objects: always sent back inline).
    offloader = PartOffloader(MemoryBlobStore(), config.blob_threshold_bytes)
    store = SpyStore(offloader) if task_store is None else task_store
    runtime = build_runtime(config, store=store, offloader=offloader if task_store is None else None)
    loop = asyncio.new_event_loop()
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(runtime)), base_url="http://testserver")
    try:
        r = Rig(loop=loop, http=http, runtime=runtime, store=store)
        r.tasks["done"] = r.send("hello", "setup-done", caller)
        r.tasks["waiting"] = r.send("ask me", "setup-waiting", caller)
        assert r.tasks["waiting"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        yield r
    finally:
        loop.run_until_complete(http.aclose())
        runtime.queue.shutdown()  # type: ignore[attr-defined]
        loop.close()


async def chunks(data: bytes, size: int = 4096) -> AsyncIterator[bytes]:
    """A body without Content-Length (chunked transfer)."""
    for i in range(0, len(data), size):
        yield data[i : i + size]


# --------------------------------------------------------------------------- checks


SENT_MARKERS: set[str] = set()
"""The leak markers some request of this process sent (:meth:`Rig.request` notes them). Hypothesis
draws strings from the constants of the code under test, so a fuzzed message may say "botocore" or
"ValueError" itself; its task keeps it, and a later ListTasks returns it as the caller's own data."""


def assert_no_leak(response: httpx.Response) -> None:
    """No 5xx, and no marker of an internal error in the answer, unless a request sent it."""
    assert response.status_code < 500, response.text[:2000]
    text = response.text
    for marker in LEAK_MARKERS:
        assert marker not in text or marker in SENT_MARKERS, f"{marker!r} leaked: {text[:2000]}"


def assert_v1_details(details: Any, reason: str | None = None) -> None:
    """The v1.0 ``data``/``details``: typed entries, a ``google.rpc.ErrorInfo`` first."""
    assert isinstance(details, list), details
    assert details, "details must not be empty"
    info = details[0]
    assert info["@type"] == ERROR_INFO, details
    assert info["domain"] == DOMAIN
    assert isinstance(info["reason"], str)
    assert info["reason"]
    if reason is not None:
        assert info["reason"] == reason, details
    metadata = info.get("metadata", {})
    assert isinstance(metadata, dict)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()), metadata
    for entry in details:
        assert isinstance(entry.get("@type"), str), entry
        if entry["@type"] == BAD_REQUEST:
            for violation in entry["fieldViolations"]:
                assert isinstance(violation["field"], str)
                assert isinstance(violation["description"], str)
                assert violation["description"]


def assert_v03_data(data: Any, reason: str | None = None) -> None:
    """The v0.3 ``data``: one flat object with the same facts."""
    assert isinstance(data, dict), data
    assert data["domain"] == DOMAIN
    assert isinstance(data["reason"], str)
    if reason is not None:
        assert data["reason"] == reason, data
    assert all(isinstance(v, str) for v in data.get("metadata", {}).values()), data
    for violation in data.get("fieldViolations", []):
        assert isinstance(violation["field"], str)
        assert isinstance(violation["description"], str)


def assert_rpc_error_body(
    body: Any, *, rpc_id: Any, codes: frozenset[int] | int, legacy: bool | None
) -> dict[str, Any]:
    """One JSON-RPC error object (a whole response body, or one SSE event's data)."""
    assert isinstance(body, dict), body
    assert set(body) == {"jsonrpc", "id", "error"}, body
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == rpc_id, (body["id"], rpc_id)
    assert type(body["id"]) is type(rpc_id)
    error = body["error"]
    assert set(error) == {"code", "message", "data"}, error
    allowed = codes if isinstance(codes, frozenset) else frozenset({codes})
    assert error["code"] in allowed, (error, sorted(allowed))
    assert isinstance(error["message"], str)
    assert error["message"]
    if legacy is None:
        legacy = isinstance(error["data"], dict)
    if legacy:
        assert_v03_data(error["data"])
    else:
        assert_v1_details(error["data"])
    result: dict[str, Any] = error
    return result


def assert_rpc_error(
    response: httpx.Response, *, rpc_id: Any, codes: frozenset[int] | int, legacy: bool | None
) -> dict[str, Any]:
    assert_no_leak(response)
    assert response.status_code == 200, response.text[:2000]
    if response.headers["content-type"].startswith("text/event-stream"):
        # A v0.3 streaming method answers an error as its stream's only event (how the 0.3
        # clients read it); v1.0 answers it as plain JSON.
        assert legacy is not False, response.text[:2000]
        events = sse_events(response)
        assert len(events) == 1, response.text[:2000]
        assert response.text.startswith("event: error\n"), response.text[:2000]
        return assert_rpc_error_body(events[0], rpc_id=rpc_id, codes=codes, legacy=legacy)
    assert response.headers["content-type"].startswith("application/json")
    return assert_rpc_error_body(response.json(), rpc_id=rpc_id, codes=codes, legacy=legacy)


def assert_rest_error(response: httpx.Response, status: int, reason: str | None = None) -> None:
    assert_no_leak(response)
    assert response.status_code == status, response.text[:2000]
    assert response.headers["content-type"].startswith(("application/a2a+json", "application/json"))
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}, error
    assert error["code"] == status
    assert isinstance(error["status"], str)
    assert isinstance(error["message"], str)
    assert error["message"]
    assert_v1_details(error["details"], reason)


def sse_events(response: httpx.Response) -> list[Any]:
    return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
