"""Bad input on both bindings: every rejection is a spec-shaped error, and changes nothing.

Each case is a request that must fail. It is sent over JSON-RPC (``POST /``) and over the REST
binding where the operation has one, in process, against a memory runtime. Every response is
checked for the exact wire shape (A2A specification, sections 9.5 and 11.6 Error Handling):

* JSON-RPC: HTTP 200, ``{"jsonrpc":"2.0","id":<echoed or null>,"error":{code,message,data}}``;
* REST: the mapped HTTP status, ``{"error":{"code":<http status>,"status":<gRPC name>,"message",
  "details"}}``;
* ``data``/``details`` starts with a ``google.rpc.ErrorInfo`` (reason, domain
  ``a2a-protocol.org``, string-only metadata), then a ``google.rpc.BadRequest`` naming the field
  for validation errors;
* never a 5xx, never a Python traceback or exception text;
* and the store saw no write: the tasks are exactly as before.

The expected codes come from the spec's table (A2A specification, section 5.4 Error Code Mappings), not from the
product's error classes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest
import pytest_asyncio
from starlette.requests import Request

from a2a_serverless.config import Settings
from a2a_serverless.errors import FieldViolation, InvalidParamsError, TaskNotFoundError
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport import app as app_module
from a2a_serverless.transport import jsonrpc as jsonrpc_module
from a2a_serverless.transport import rows as rows_module
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.stores import LEAK_MARKERS, SpyStore

V1 = {"A2A-Version": "1.0"}
ALICE = {**V1, "Authorization": "Bearer key-a"}
BOB = {**V1, "Authorization": "Bearer key-b"}
API_KEYS = {"key-a": "alice", "key-b": "bob"}

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
DOMAIN = "a2a-protocol.org"
HOOK = "https://example.com/hook"


# --------------------------------------------------------------------------- expectations


@dataclass(frozen=True)
class Expect:
    """One row of the spec's error table (A2A specification, section 5.4), optionally with the field at fault."""

    code: int
    http: int
    grpc: str
    reason: str
    field: str | None = None

    def on(self, field_path: str) -> Expect:
        return replace(self, field=field_path)


PARSE_ERROR = Expect(-32700, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
INVALID_REQUEST = Expect(-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
METHOD_NOT_FOUND = Expect(-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND")
INVALID_PARAMS = Expect(-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
TASK_NOT_FOUND = Expect(-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND")
TASK_NOT_CANCELABLE = Expect(-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
PUSH_NOT_SUPPORTED = Expect(-32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED")
UNSUPPORTED = Expect(-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
VERSION_NOT_SUPPORTED = Expect(-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
PAYLOAD_TOO_LARGE = Expect(-32600, 413, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE")


def assert_no_leak(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    for marker in LEAK_MARKERS:
        assert marker not in response.text, f"{marker!r} leaked: {response.text}"


def assert_details(details: Any, expect: Expect) -> None:
    assert isinstance(details, list)
    assert details, "details must not be empty"
    info = details[0]
    assert info["@type"] == ERROR_INFO
    assert info["reason"] == expect.reason
    assert info["domain"] == DOMAIN
    metadata = info.get("metadata", {})
    assert isinstance(metadata, dict)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()), metadata
    for entry in details:
        assert isinstance(entry.get("@type"), str), entry
    if expect.field is None:
        return
    bad = [d for d in details if d["@type"] == BAD_REQUEST]
    assert len(bad) == 1, details
    violations = bad[0]["fieldViolations"]
    assert all(isinstance(v["description"], str) and v["description"] for v in violations), violations
    assert expect.field in [v["field"] for v in violations], violations


def assert_rpc_error(response: httpx.Response, expect: Expect, rpc_id: Any, *, http: int = 200) -> None:
    assert_no_leak(response)
    assert response.status_code == http, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"}, body
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == rpc_id
    assert type(body["id"]) is type(rpc_id)
    error = body["error"]
    assert set(error) == {"code", "message", "data"}, error
    assert error["code"] == expect.code, error
    assert isinstance(error["message"], str)
    assert error["message"]
    assert_details(error["data"], expect)


def assert_rest_error(response: httpx.Response, expect: Expect) -> None:
    assert_no_leak(response)
    assert response.status_code == expect.http, response.text
    assert response.headers["content-type"].startswith("application/a2a+json")
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}, error
    assert error["code"] == response.status_code
    assert error["status"] == expect.grpc
    assert isinstance(error["message"], str)
    assert error["message"]
    assert_details(error["details"], expect)


def assert_error(response: httpx.Response, expect: Expect, binding: str, rpc_id: Any) -> None:
    if binding == "jsonrpc":
        assert_rpc_error(response, expect, rpc_id)
    else:
        assert_rest_error(response, expect)


# --------------------------------------------------------------------------- the harness


def message(text: str = "hello", message_id: str = "m-case", **extra: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


@dataclass
class Harness:
    http: httpx.AsyncClient
    runtime: Runtime
    store: SpyStore
    headers: dict[str, str]
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def fill(self, value: Any) -> Any:
        """Replace ``{done}``/``{done_ctx}``/``{waiting}``/``{waiting_ctx}`` with the setup tasks."""
        if isinstance(value, str):
            for name, task in self.tasks.items():
                value = value.replace("{" + name + "}", task["id"]).replace("{" + name + "_ctx}", task["contextId"])
            return value
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    async def rpc(
        self, method: str, params: Any = None, *, rpc_id: Any = 1, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "method": method}
        if params is not None:
            body["params"] = self.fill(params)
        return await self.http.post("/", json=body, headers=self.headers if headers is None else headers)

    async def rest(
        self, verb: str, path: str, payload: Any = None, *, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        headers = self.headers if headers is None else headers
        path = self.fill(path)
        payload = self.fill(payload)
        if verb in ("GET", "DELETE"):
            return await self.http.request(verb, path, params=payload, headers=headers)
        return await self.http.request(verb, path, json=payload, headers=headers)

    async def send(self, text: str, message_id: str) -> dict[str, Any]:
        response = await self.rest("POST", "/message:send", {"message": message(text, message_id)})
        assert response.status_code == 200, response.text
        task: dict[str, Any] = response.json()["task"]
        return task

    async def state(self) -> tuple[int, Any, dict[str, Any]]:
        """Everything a rejected request must leave alone (as the harness's own principal)."""
        listing = await self.rest("GET", "/tasks", {"includeArtifacts": "true", "pageSize": "100"})
        assert listing.status_code == 200, listing.text
        tasks = {}
        for name, task in self.tasks.items():
            got = await self.rest("GET", f"/tasks/{task['id']}")
            assert got.status_code == 200, got.text
            configs = await self.rest("GET", f"/tasks/{task['id']}/pushNotificationConfigs")
            tasks[name] = (got.json(), configs.json() if configs.status_code == 200 else configs.status_code)
        return self.store.attempts, listing.json(), tasks


@asynccontextmanager
async def harness(headers: dict[str, str] = V1, **overrides: Any) -> AsyncIterator[Harness]:
    """A memory runtime behind the app, with a COMPLETED task ``done`` and an INPUT_REQUIRED task
    ``waiting``, both owned by the caller that ``headers`` authenticate."""
    store = SpyStore()
    settings = {"store": "memory", "poll_interval_seconds": 0.005, **overrides}
    runtime = build_runtime(Settings(**settings), store=store)
    transport = httpx.ASGITransport(app=create_app(runtime))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            h = Harness(http=http, runtime=runtime, store=store, headers=dict(headers))
            h.tasks["done"] = await h.send("hello", "setup-done")
            h.tasks["waiting"] = await h.send("ask me", "setup-waiting")
            assert h.tasks["done"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert h.tasks["waiting"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            yield h
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest_asyncio.fixture
async def h() -> AsyncIterator[Harness]:
    async with harness() as value:
        yield value


# --------------------------------------------------------------------------- the case matrix


@dataclass(frozen=True)
class Case:
    expect: Expect
    rpc: tuple[str, Any] | None = None
    """(method, params) for JSON-RPC."""
    rest: tuple[str, str, Any] | None = None
    """(verb, path, JSON body for POST or query parameters for GET/DELETE) for REST."""


def both(expect: Expect, method: str, params: Any, verb: str, path: str, payload: Any = None) -> Case:
    return Case(expect, rpc=(method, params), rest=(verb, path, payload))


def matrix(cases: dict[str, Case]) -> list[Any]:
    params = []
    for name, case in cases.items():
        if case.rpc is not None:
            params.append(pytest.param(case, "jsonrpc", name, id=f"jsonrpc-{name}"))
        if case.rest is not None:
            params.append(pytest.param(case, "rest", name, id=f"rest-{name}"))
    return params


async def run_case(h: Harness, case: Case, binding: str, rpc_id: Any, headers: dict[str, str] | None = None) -> None:
    before = await h.state()
    if binding == "jsonrpc":
        assert case.rpc is not None
        response = await h.rpc(case.rpc[0], case.rpc[1], rpc_id=rpc_id, headers=headers)
    else:
        assert case.rest is not None
        response = await h.rest(*case.rest, headers=headers)
    assert_error(response, case.expect, binding, rpc_id)
    assert await h.state() == before, "a rejected request changed the store"


def send(msg: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"message": msg, **extra}


def _without(d: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != key}


PARAM_CASES: dict[str, Case] = {
    # SendMessage: REQUIRED fields (A2A specification, section 5.7 Field Presence and Optionality).
    "send-missing-message": both(INVALID_PARAMS.on("message"), "SendMessage", {}, "POST", "/message:send", {}),
    "send-message-not-object": both(
        INVALID_PARAMS.on("message"), "SendMessage", {"message": "hello"}, "POST", "/message:send", {"message": "hello"}
    ),
    "send-missing-messageId": both(
        INVALID_PARAMS.on("message.messageId"),
        "SendMessage",
        send(_without(message(), "messageId")),
        "POST",
        "/message:send",
        send(_without(message(), "messageId")),
    ),
    "send-empty-messageId": both(
        INVALID_PARAMS.on("message.messageId"),
        "SendMessage",
        send(message(message_id="")),
        "POST",
        "/message:send",
        send(message(message_id="")),
    ),
    "send-missing-role": both(
        INVALID_PARAMS.on("message.role"),
        "SendMessage",
        send(_without(message(), "role")),
        "POST",
        "/message:send",
        send(_without(message(), "role")),
    ),
    "send-missing-parts": both(
        INVALID_PARAMS.on("message.parts"),
        "SendMessage",
        send(_without(message(), "parts")),
        "POST",
        "/message:send",
        send(_without(message(), "parts")),
    ),
    "send-empty-parts": both(
        INVALID_PARAMS.on("message.parts"),
        "SendMessage",
        send({**message(), "parts": []}),
        "POST",
        "/message:send",
        send({**message(), "parts": []}),
    ),
    # v0.3 enum spellings are invalid on the v1 path (A2A specification, section 5.5 JSON Field Naming Convention).
    "send-v03-role-user": both(
        INVALID_PARAMS.on("message.role"),
        "SendMessage",
        send({**message(), "role": "user"}),
        "POST",
        "/message:send",
        send({**message(), "role": "user"}),
    ),
    "send-v03-role-agent": both(
        INVALID_PARAMS.on("message.role"),
        "SendMessage",
        send({**message(), "role": "agent"}),
        "POST",
        "/message:send",
        send({**message(), "role": "agent"}),
    ),
    # Part: exactly one content member (A2A specification, section 4.1.6 Part).
    "send-part-two-contents": both(
        INVALID_PARAMS.on("message.parts[0]"),
        "SendMessage",
        send({**message(), "parts": [{"text": "a", "url": "https://example.com/a.txt"}]}),
        "POST",
        "/message:send",
        send({**message(), "parts": [{"text": "a", "data": {"k": "v"}}]}),
    ),
    "send-part-no-content": both(
        INVALID_PARAMS.on("message.parts[0]"),
        "SendMessage",
        send({**message(), "parts": [{"mediaType": "text/plain"}]}),
        "POST",
        "/message:send",
        send({**message(), "parts": [{}]}),
    ),
    "send-part-v03-file": both(
        INVALID_PARAMS.on("message.parts[0]"),
        "SendMessage",
        send({**message(), "parts": [{"kind": "file", "file": {"uri": "https://example.com/f"}}]}),
        "POST",
        "/message:send",
        send({**message(), "parts": [{"kind": "file", "file": {"uri": "https://x.org/f"}}]}),
    ),
    "send-second-part-empty": both(
        INVALID_PARAMS.on("message.parts[1]"),
        "SendMessage",
        send({**message(), "parts": [{"text": "ok"}, {}]}),
        "POST",
        "/message:send",
        send({**message(), "parts": [{"text": "ok"}, {}]}),
    ),
    "send-negative-historyLength": both(
        INVALID_PARAMS.on("configuration.historyLength"),
        "SendMessage",
        send(message(), configuration={"historyLength": -1}),
        "POST",
        "/message:send",
        send(message(), configuration={"historyLength": -1}),
    ),
    # A contextId that does not match the task's (A2A specification, section 3.4.3 Multi-Turn Conversation Patterns).
    "send-context-mismatch": both(
        INVALID_PARAMS.on("message.contextId"),
        "SendMessage",
        send(message("Ann", taskId="{waiting}", contextId="another-context")),
        "POST",
        "/message:send",
        send(message("Ann", taskId="{waiting}", contextId="another-context")),
    ),
    # ListTasks.
    "list-v03-status-completed": both(
        INVALID_PARAMS.on("status"), "ListTasks", {"status": "completed"}, "GET", "/tasks", {"status": "completed"}
    ),
    "list-v03-status-input-required": both(
        INVALID_PARAMS.on("status"),
        "ListTasks",
        {"status": "input-required"},
        "GET",
        "/tasks",
        {"status": "input-required"},
    ),
    "list-v03-status-cancelled": both(
        INVALID_PARAMS.on("status"),
        "ListTasks",
        {"status": "TASK_STATE_CANCELLED"},
        "GET",
        "/tasks",
        {"status": "TASK_STATE_CANCELLED"},
    ),
    "list-pageSize-0": both(
        INVALID_PARAMS.on("pageSize"), "ListTasks", {"pageSize": 0}, "GET", "/tasks", {"pageSize": "0"}
    ),
    "list-pageSize-101": both(
        INVALID_PARAMS.on("pageSize"), "ListTasks", {"pageSize": 101}, "GET", "/tasks", {"pageSize": "101"}
    ),
    "list-pageSize-not-a-number": both(
        INVALID_PARAMS.on("pageSize"), "ListTasks", {"pageSize": "ten"}, "GET", "/tasks", {"pageSize": "ten"}
    ),
    "list-negative-historyLength": both(
        INVALID_PARAMS.on("historyLength"), "ListTasks", {"historyLength": -1}, "GET", "/tasks", {"historyLength": "-1"}
    ),
    "list-bad-pageToken": both(
        INVALID_PARAMS.on("pageToken"),
        "ListTasks",
        {"pageToken": "not-a-token"},
        "GET",
        "/tasks",
        {"pageToken": "bm90LWEtdG9rZW4"},
    ),
    "list-bad-statusTimestampAfter": both(
        INVALID_PARAMS.on("statusTimestampAfter"),
        "ListTasks",
        {"statusTimestampAfter": "yesterday"},
        "GET",
        "/tasks",
        {"statusTimestampAfter": "yesterday"},
    ),
    # GetTask / CancelTask.
    "get-negative-historyLength": both(
        INVALID_PARAMS.on("historyLength"),
        "GetTask",
        {"id": "{done}", "historyLength": -1},
        "GET",
        "/tasks/{done}",
        {"historyLength": "-1"},
    ),
    "get-historyLength-not-a-number": both(
        INVALID_PARAMS.on("historyLength"),
        "GetTask",
        {"id": "{done}", "historyLength": "all"},
        "GET",
        "/tasks/{done}",
        {"historyLength": "all"},
    ),
    "get-missing-id": Case(INVALID_PARAMS.on("id"), rpc=("GetTask", {})),
    "get-empty-id": Case(INVALID_PARAMS.on("id"), rpc=("GetTask", {"id": ""})),
    "cancel-missing-id": Case(INVALID_PARAMS.on("id"), rpc=("CancelTask", {})),
    # Push configs.
    "push-create-missing-url": both(
        INVALID_PARAMS.on("url"),
        "CreateTaskPushNotificationConfig",
        {"taskId": "{done}"},
        "POST",
        "/tasks/{done}/pushNotificationConfigs",
        {},
    ),
    "push-create-missing-taskId": Case(
        INVALID_PARAMS.on("taskId"), rpc=("CreateTaskPushNotificationConfig", {"url": HOOK})
    ),
    "push-get-missing-id": Case(INVALID_PARAMS.on("id"), rpc=("GetTaskPushNotificationConfig", {"taskId": "{done}"})),
    "push-delete-missing-id": Case(
        INVALID_PARAMS.on("id"), rpc=("DeleteTaskPushNotificationConfig", {"taskId": "{done}"})
    ),
    "push-list-pageSize-101": both(
        INVALID_PARAMS.on("pageSize"),
        "ListTaskPushNotificationConfigs",
        {"taskId": "{done}", "pageSize": 101},
        "GET",
        "/tasks/{done}/pushNotificationConfigs",
        {"pageSize": "101"},
    ),
    "push-list-negative-pageSize": both(
        INVALID_PARAMS.on("pageSize"),
        "ListTaskPushNotificationConfigs",
        {"taskId": "{done}", "pageSize": -1},
        "GET",
        "/tasks/{done}/pushNotificationConfigs",
        {"pageSize": "-1"},
    ),
}

NOT_FOUND_CASES: dict[str, Case] = {
    "get-unknown-task": both(TASK_NOT_FOUND, "GetTask", {"id": "no-such-task"}, "GET", "/tasks/no-such-task"),
    "cancel-unknown-task": both(
        TASK_NOT_FOUND, "CancelTask", {"id": "no-such-task"}, "POST", "/tasks/no-such-task:cancel"
    ),
    "send-unknown-taskId": both(
        TASK_NOT_FOUND,
        "SendMessage",
        send(message(taskId="no-such-task")),
        "POST",
        "/message:send",
        send(message(taskId="no-such-task")),
    ),
    "push-create-unknown-task": both(
        TASK_NOT_FOUND,
        "CreateTaskPushNotificationConfig",
        {"taskId": "no-such-task", "url": HOOK},
        "POST",
        "/tasks/no-such-task/pushNotificationConfigs",
        {"url": HOOK},
    ),
    "push-get-unknown-task": both(
        TASK_NOT_FOUND,
        "GetTaskPushNotificationConfig",
        {"taskId": "no-such-task", "id": "c1"},
        "GET",
        "/tasks/no-such-task/pushNotificationConfigs/c1",
    ),
    "push-list-unknown-task": both(
        TASK_NOT_FOUND,
        "ListTaskPushNotificationConfigs",
        {"taskId": "no-such-task"},
        "GET",
        "/tasks/no-such-task/pushNotificationConfigs",
    ),
    "push-delete-unknown-task": both(
        TASK_NOT_FOUND,
        "DeleteTaskPushNotificationConfig",
        {"taskId": "no-such-task", "id": "c1"},
        "DELETE",
        "/tasks/no-such-task/pushNotificationConfigs/c1",
    ),
    "push-get-unknown-config": both(
        TASK_NOT_FOUND,
        "GetTaskPushNotificationConfig",
        {"taskId": "{done}", "id": "no-such-config"},
        "GET",
        "/tasks/{done}/pushNotificationConfigs/no-such-config",
    ),
    # Another tenant's task looks like a missing one (A2A specification, section 13.1 Data Access and Authorization
    # Scoping).
    "other-tenant-get": both(
        TASK_NOT_FOUND, "GetTask", {"id": "{done}", "tenant": "acme"}, "GET", "/acme/tasks/{done}"
    ),
    "other-tenant-cancel": both(
        TASK_NOT_FOUND, "CancelTask", {"id": "{waiting}", "tenant": "acme"}, "POST", "/acme/tasks/{waiting}:cancel"
    ),
    "other-tenant-send": both(
        TASK_NOT_FOUND,
        "SendMessage",
        send(message("Ann", taskId="{waiting}"), tenant="acme"),
        "POST",
        "/acme/message:send",
        send(message("Ann", taskId="{waiting}")),
    ),
    "other-tenant-push-create": both(
        TASK_NOT_FOUND,
        "CreateTaskPushNotificationConfig",
        {"tenant": "acme", "taskId": "{done}", "url": HOOK},
        "POST",
        "/acme/tasks/{done}/pushNotificationConfigs",
        {"url": HOOK},
    ),
    "other-tenant-push-list": both(
        TASK_NOT_FOUND,
        "ListTaskPushNotificationConfigs",
        {"tenant": "acme", "taskId": "{done}"},
        "GET",
        "/acme/tasks/{done}/pushNotificationConfigs",
    ),
    "tenant-with-slash": Case(TASK_NOT_FOUND, rpc=("GetTask", {"id": "{done}", "tenant": "a/b"})),
}

STATE_CASES: dict[str, Case] = {
    # A message to a terminal task is UnsupportedOperation (A2A specification, section 3.1.1 Send Message).
    "send-to-completed-task": both(
        UNSUPPORTED,
        "SendMessage",
        send(message("again", taskId="{done}")),
        "POST",
        "/message:send",
        send(message("again", taskId="{done}")),
    ),
    "send-to-completed-task-with-context": both(
        UNSUPPORTED,
        "SendMessage",
        send(message("again", taskId="{done}", contextId="{done_ctx}")),
        "POST",
        "/message:send",
        send(message("again", taskId="{done}", contextId="{done_ctx}")),
    ),
    "cancel-completed-task": both(TASK_NOT_CANCELABLE, "CancelTask", {"id": "{done}"}, "POST", "/tasks/{done}:cancel"),
    # Capability gates with the default settings (digest checklist 24).
    "extended-card-not-declared": both(UNSUPPORTED, "GetExtendedAgentCard", {}, "GET", "/extendedAgentCard"),
    "extended-card-no-params": Case(UNSUPPORTED, rpc=("GetExtendedAgentCard", None)),
    # SubscribeToTask on a terminal task (spec 3.1.6), before any stream starts.
    "subscribe-to-completed-task": both(
        UNSUPPORTED, "SubscribeToTask", {"id": "{done}"}, "POST", "/tasks/{done}:subscribe"
    ),
    "subscribe-get-to-completed-task": Case(UNSUPPORTED, rest=("GET", "/tasks/{done}:subscribe", None)),
}

STREAMING_OFF_CASES: dict[str, Case] = {
    "streaming-send": both(
        UNSUPPORTED, "SendStreamingMessage", send(message()), "POST", "/message:stream", send(message())
    ),
    "streaming-subscribe": both(
        UNSUPPORTED, "SubscribeToTask", {"id": "{waiting}"}, "POST", "/tasks/{waiting}:subscribe"
    ),
    "streaming-subscribe-get": Case(UNSUPPORTED, rest=("GET", "/tasks/{waiting}:subscribe", None)),
}

WEBHOOK_URLS = {
    "loopback-v4": "https://127.0.0.1/hook",
    "loopback-v6": "https://[::1]/hook",
    "localhost": "https://localhost:8443/hook",
    "link-local-metadata": "https://169.254.169.254/latest/meta-data",
    "private-10": "https://10.0.0.5/hook",
    "private-192-168": "https://192.168.1.20/hook",
    "unique-local-v6": "https://[fd00::1]/hook",
    "ipv4-mapped-loopback": "https://[::ffff:127.0.0.1]/hook",
    "plain-http": "http://example.com/hook",
    "credentials-in-url": "https://user:secret@example.com/hook",
    "not-a-url": "hook",
}

WEBHOOK_CASES: dict[str, Case] = {
    f"webhook-{name}": both(
        INVALID_PARAMS.on("url"),
        "CreateTaskPushNotificationConfig",
        {"taskId": "{done}", "url": url},
        "POST",
        "/tasks/{done}/pushNotificationConfigs",
        {"url": url},
    )
    for name, url in WEBHOOK_URLS.items()
}
WEBHOOK_CASES.update(
    {
        f"send-inline-webhook-{name}": both(
            INVALID_PARAMS.on("configuration.taskPushNotificationConfig.url"),
            "SendMessage",
            send(message(), configuration={"taskPushNotificationConfig": {"url": url}}),
            "POST",
            "/message:send",
            send(message(), configuration={"taskPushNotificationConfig": {"url": url}}),
        )
        for name, url in WEBHOOK_URLS.items()
        if name in ("loopback-v4", "link-local-metadata", "private-10")
    }
)


# Values that travel in HTTP headers (a stored part's Content-Type and Content-Disposition, a
# notification's token and Authorization): what no header can carry is refused where it enters.
HEADER_BREAKERS = {
    "crlf": "text/plain\r\nX-Injected: 1",
    "lf": "text/plain\nX: 1",
    "nul": "text/plain\u0000",
    "del": "text/\u007fplain",
    "non-ascii": "text/pl\u00e4in",
}


def _hook(**fields: Any) -> dict[str, Any]:
    return {"url": HOOK, **fields}


def _bad_part(field: str, **fields: str) -> Case:
    """SendMessage of one text part with ``fields``, refused naming the part's ``field``."""
    body = send(message(parts=[{"text": "hello", **fields}]))
    return both(INVALID_PARAMS.on(f"message.parts[0].{field}"), "SendMessage", body, "POST", "/message:send", body)


def _bad_config(field: str, **fields: Any) -> Case:
    """CreateTaskPushNotificationConfig with ``fields``, refused naming ``field``."""
    config = _hook(**fields)
    rpc = {"taskId": "{done}", **config}
    path = "/tasks/{done}/pushNotificationConfigs"
    return both(INVALID_PARAMS.on(field), "CreateTaskPushNotificationConfig", rpc, "POST", path, config)


FILENAME_BREAKERS = {"crlf": "a\r\nb.txt", "nul": "a\u0000.txt", "c1": "a\u0085.txt", "long": "a" * 256}
HEADER_CASES: dict[str, Case] = {
    **{f"send-media-type-{name}": _bad_part("mediaType", mediaType=v) for name, v in HEADER_BREAKERS.items()},
    "send-media-type-too-long": _bad_part("mediaType", mediaType="text/" + "x" * 1020),
    **{f"send-filename-{name}": _bad_part("filename", filename=v) for name, v in FILENAME_BREAKERS.items()},
    **{f"push-create-token-{name}": _bad_config("token", token=v) for name, v in HEADER_BREAKERS.items()},
    "push-create-credentials-crlf": _bad_config(
        "authentication.credentials", authentication={"scheme": "Bearer", "credentials": "a\r\nX: 1"}
    ),
    "push-create-scheme-non-ascii": _bad_config("authentication.scheme", authentication={"scheme": "B\u00e9arer"}),
    "push-create-url-lf": _bad_config("url", url=HOOK + "\n"),
    "send-inline-token-crlf": both(
        INVALID_PARAMS.on("configuration.taskPushNotificationConfig.token"),
        "SendMessage",
        send(message(), configuration={"taskPushNotificationConfig": _hook(token="t\r\nX: 1")}),
        "POST",
        "/message:send",
        send(message(), configuration={"taskPushNotificationConfig": _hook(token="t\r\nX: 1")}),
    ),
}


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(HEADER_CASES))
async def test_values_no_header_can_carry_are_invalid_params(h: Harness, case: Case, binding: str, name: str) -> None:
    await run_case(h, case, binding, f"rq-{name}")


@pytest.mark.asyncio
async def test_header_values_that_fit_are_kept(h: Harness) -> None:
    """What headers carry is accepted as sent: media type parameters, any file name without control
    characters, a token with spaces and punctuation."""
    part = {
        "text": "hi",
        "mediaType": 'text/plain; charset=utf-8; name="a b"',
        "filename": "r\u00e9sum\u00e9 \U0001f600.txt",
    }
    sent = await h.rest("POST", "/message:send", send(message("hi", "m-header-ok", parts=[part])))
    assert sent.status_code == 200, sent.text
    assert sent.json()["task"]["history"][0]["parts"] == [part]
    config = _hook(
        id="c-ok", token="t0k3n with spaces!~", authentication={"scheme": "Basic", "credentials": "dXNlcjpw=="}
    )
    created = await h.rest("POST", "/tasks/{done}/pushNotificationConfigs", config)
    assert created.status_code == 200, created.text
    assert {k: created.json()[k] for k in ("url", "token", "authentication")} == {
        k: config[k] for k in ("url", "token", "authentication")
    }


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(PARAM_CASES))
async def test_invalid_params(h: Harness, case: Case, binding: str, name: str) -> None:
    await run_case(h, case, binding, f"rq-{name}")


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(NOT_FOUND_CASES))
async def test_task_not_found(h: Harness, case: Case, binding: str, name: str) -> None:
    await run_case(h, case, binding, f"rq-{name}")


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(STATE_CASES))
async def test_state_and_capability_errors(h: Harness, case: Case, binding: str, name: str) -> None:
    await run_case(h, case, binding, 7)


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(WEBHOOK_CASES))
async def test_webhook_url_rejected(h: Harness, case: Case, binding: str, name: str) -> None:
    await run_case(h, case, binding, f"rq-{name}")


# --------------------------------------------------------------------------- malformed envelopes


RPC_ENVELOPES = [
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", ', PARSE_ERROR, None, id="invalid-json"),
    pytest.param(b"\xff\xfe\x00garbage", PARSE_ERROR, None, id="not-utf8"),
    pytest.param(b"", PARSE_ERROR, None, id="empty-body"),
    pytest.param(b"5", INVALID_REQUEST, None, id="number-body"),
    pytest.param(b'"GetTask"', INVALID_REQUEST, None, id="string-body"),
    pytest.param(b"null", INVALID_REQUEST, None, id="null-body"),
    pytest.param(
        b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}]', INVALID_REQUEST, None, id="batch"
    ),
    pytest.param(b"[]", INVALID_REQUEST, None, id="empty-batch"),
    pytest.param(
        b'{"jsonrpc": "1.0", "id": 3, "method": "GetTask", "params": {}}', INVALID_REQUEST, 3, id="jsonrpc-1.0"
    ),
    pytest.param(b'{"id": "a", "method": "GetTask", "params": {}}', INVALID_REQUEST, "a", id="jsonrpc-missing"),
    pytest.param(b'{"jsonrpc": 2.0, "id": "b", "method": "GetTask"}', INVALID_REQUEST, "b", id="jsonrpc-number"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 4}', INVALID_REQUEST, 4, id="method-missing"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 5, "method": 17}', INVALID_REQUEST, 5, id="method-not-string"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 1.5, "method": "GetTask"}', INVALID_REQUEST, None, id="id-float"),
    pytest.param(b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "GetTask"}', INVALID_REQUEST, None, id="id-object"),
    pytest.param(b'{"jsonrpc": "2.0", "id": true, "method": "GetTask"}', INVALID_REQUEST, None, id="id-bool"),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": [1]}', INVALID_PARAMS, 6, id="params-array"
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": "x"}', INVALID_PARAMS, 8, id="params-string"
    ),
    # Unknown methods, including near-misses and v0.3 names asked for with A2A-Version 1.0 (which
    # has no such method: a v0.3 caller sends no version, see test_v03_bindings) (digest checklist 1).
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 9, "method": "message/send", "params": {}}',
        METHOD_NOT_FOUND,
        9,
        id="v03-message-send",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": "t", "method": "tasks/get", "params": {}}', METHOD_NOT_FOUND, "t", id="v03-tasks-get"
    ),
    pytest.param(b'{"jsonrpc": "2.0", "id": 10, "method": "sendMessage"}', METHOD_NOT_FOUND, 10, id="wrong-case"),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 11, "method": "ListTaskPushNotificationConfig"}',
        METHOD_NOT_FOUND,
        11,
        id="singular-configs",
    ),
    pytest.param(b'{"jsonrpc": "2.0", "id": 12, "method": ""}', METHOD_NOT_FOUND, 12, id="empty-method"),
    # Lone UTF-16 surrogates: json.loads accepts the escape, but the string cannot be encoded, so
    # it is a parse error wherever it is (it used to be a 500, in the REST shape).
    pytest.param(
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "GetTask", "params": {"id": "x"}}',
        PARSE_ERROR,
        None,
        id="surrogate-in-id",
    ),
    pytest.param(b'{"jsonrpc": "2.0", "id": 13, "method": "\\ud800"}', PARSE_ERROR, None, id="surrogate-in-method"),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 14, "method": "GetTask", "params": {"id": "x", "\\udfff": 1}}',
        PARSE_ERROR,
        None,
        id="surrogate-in-key",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 15, "method": "SendMessage", "params": {"message": {"messageId": "m",'
        b' "role": "ROLE_USER", "parts": [{"text": "a\\udc00b"}]}}}',
        PARSE_ERROR,
        None,
        id="surrogate-in-part-text",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 16, "method": "ListTasks", "params": {"tenant": "\\uDBFF"}}',
        PARSE_ERROR,
        None,
        id="surrogate-in-tenant",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 17, "method": "ListTasks", "params": {"contextId": "\\ude00\\ud83d"}}',
        PARSE_ERROR,
        None,
        id="surrogates-reversed",
    ),
    # Not JSON numbers (RFC 8259), though Python parses them.
    pytest.param(b'{"jsonrpc": "2.0", "id": NaN, "method": "GetTask"}', PARSE_ERROR, None, id="nan-id"),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 18, "method": "ListTasks", "params": {"pageSize": Infinity}}',
        PARSE_ERROR,
        None,
        id="infinity",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 19, "method": "ListTasks", "params": {"pageSize": -Infinity}}',
        PARSE_ERROR,
        None,
        id="minus-infinity",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 20, "method": "ListTasks", "params": {"pageSize": 1e400}}',
        PARSE_ERROR,
        None,
        id="float-overflow",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 21, "method": "ListTasks", "params": {"pageSize": ' + b"1" * 5000 + b"}}",
        PARSE_ERROR,
        None,
        id="integer-over-digit-limit",
    ),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("raw", "expect", "rpc_id"), RPC_ENVELOPES)
async def test_malformed_jsonrpc_envelope(h: Harness, raw: bytes, expect: Expect, rpc_id: Any) -> None:
    before = await h.state()
    response = await h.http.post("/", content=raw, headers={**V1, "Content-Type": "application/json"})
    assert_rpc_error(response, expect, rpc_id)
    assert await h.state() == before


REST_BODIES = [
    pytest.param("/message:send", b'{"message": {', PARSE_ERROR, id="send-invalid-json"),
    pytest.param("/message:send", b"\xff\xfe", PARSE_ERROR, id="send-not-utf8"),
    pytest.param("/message:send", b'[{"message": {}}]', INVALID_REQUEST, id="send-array-body"),
    pytest.param("/message:send", b'"hello"', INVALID_REQUEST, id="send-string-body"),
    pytest.param("/tasks/{waiting}:cancel", b"{oops", PARSE_ERROR, id="cancel-invalid-json"),
    pytest.param("/tasks/{done}/pushNotificationConfigs", b"[1, 2]", INVALID_REQUEST, id="push-create-array-body"),
    # Lone surrogates and non-finite numbers, as on JSON-RPC (RPC_ENVELOPES).
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "\\ud800"}]}}',
        PARSE_ERROR,
        id="send-surrogate-in-part-text",
    ),
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "contextId": "\\udc00", "parts": [{"text": "a"}]}}',
        PARSE_ERROR,
        id="send-surrogate-in-contextId",
    ),
    pytest.param(
        "/message:send",
        b'{"tenant": "\\ud800", "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}]}}',
        PARSE_ERROR,
        id="send-surrogate-in-tenant",
    ),
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": {"\\ud800": 1}}]}}',
        PARSE_ERROR,
        id="send-surrogate-in-data-key",
    ),
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": NaN}]}}',
        PARSE_ERROR,
        id="send-nan",
    ),
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": [Infinity, -Infinity]}]}}',
        PARSE_ERROR,
        id="send-infinity",
    ),
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": 1e400}]}}',
        PARSE_ERROR,
        id="send-float-overflow",
    ),
    pytest.param(
        "/message:send",
        b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": ' + b"9" * 5000 + b"}]}}",
        PARSE_ERROR,
        id="send-integer-over-digit-limit",
    ),
    pytest.param("/tasks/{waiting}:cancel", b'{"metadata": {"k": "\\ud800"}}', PARSE_ERROR, id="cancel-surrogate"),
    pytest.param(
        "/tasks/{done}/pushNotificationConfigs",
        b'{"url": "https://example.com/hook", "token": "\\udfff"}',
        PARSE_ERROR,
        id="push-create-surrogate-in-token",
    ),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("path", "raw", "expect"), REST_BODIES)
async def test_malformed_rest_body(h: Harness, path: str, raw: bytes, expect: Expect) -> None:
    before = await h.state()
    response = await h.http.post(h.fill(path), content=raw, headers={**V1, "Content-Type": "application/json"})
    assert_rest_error(response, expect)
    assert await h.state() == before


@pytest.mark.asyncio
async def test_surrogate_pairs_are_accepted(h: Harness) -> None:
    """Only lone surrogates are refused: an escaped pair is one character (U+1F600) on both bindings."""
    text = b'"\\ud83d\\ude00 caf\\u00e9"'
    msg = b'{"messageId": "m-pair-%s", "role": "ROLE_USER", "parts": [{"text": ' + text + b"}]}"
    json_v1 = {**V1, "Content-Type": "application/json"}
    rest = await h.http.post("/message:send", content=b'{"message": ' + msg % b"rest" + b"}", headers=json_v1)
    assert rest.status_code == 200, rest.text
    assert rest.json()["task"]["history"][0]["parts"][0]["text"] == "\U0001f600 caf\u00e9"
    rpc_body = b'{"jsonrpc": "2.0", "id": "p", "method": "SendMessage", "params": {"message": ' + msg % b"rpc" + b"}}"
    rpc = await h.http.post("/", content=rpc_body, headers=json_v1)
    assert rpc.status_code == 200, rpc.text
    assert rpc.json()["result"]["task"]["history"][0]["parts"][0]["text"] == "\U0001f600 caf\u00e9"


URLS_NOT_UTF8 = [
    # %ED%A0%80 is U+D800 encoded as UTF-8: invalid, which Starlette silently turns into U+FFFD.
    pytest.param("GET", "/tasks?contextId=%ED%A0%80", id="query-value-surrogate"),
    pytest.param("GET", "/tasks?%ED%A0%80=1", id="query-key-surrogate"),
    pytest.param("GET", "/tasks?contextId=%FF", id="query-value-invalid-byte"),
    pytest.param("GET", "/tasks/{done}?unknown=%C3", id="query-truncated-sequence"),
    pytest.param("GET", "/tasks/%ED%A0%80", id="path-task-id"),
    pytest.param("GET", "/%ED%A0%80/tasks", id="path-tenant"),
    pytest.param("DELETE", "/tasks/{done}/pushNotificationConfigs/%ED%B0%80", id="path-config-id"),
    pytest.param("POST", "/tasks/%ED%A0%80:cancel", id="path-cancel"),
    pytest.param("POST", "/%ED%A0%80/message:send", id="path-tenant-send"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("verb", "path"), URLS_NOT_UTF8)
async def test_rest_url_not_utf8(h: Harness, verb: str, path: str) -> None:
    before = await h.state()
    body = send(message()) if verb == "POST" else None
    response = await h.http.request(verb, h.fill(path), json=body, headers=V1)
    assert_rest_error(response, INVALID_PARAMS)
    assert await h.state() == before


@pytest.mark.asyncio
async def test_jsonrpc_query_not_utf8(h: Harness) -> None:
    """JSON-RPC reads only ``A2A-Version`` from its query: a bad one is a version error, JSON-RPC
    shaped; elsewhere in the query it is ignored."""
    body = {"jsonrpc": "2.0", "id": "q", "method": "GetTask", "params": {"id": h.tasks["done"]["id"]}}
    response = await h.http.post("/?A2A-Version=%ED%A0%80", json=body)
    assert_rpc_error(response, VERSION_NOT_SUPPORTED, "q")
    ok = await h.http.post("/?x=%ED%A0%80", json=body, headers=V1)
    assert ok.json()["result"]["id"] == h.tasks["done"]["id"]


def _raise(error: Exception) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise error

    return fail


UNRENDERABLE_ERRORS = [
    pytest.param(TaskNotFoundError(metadata={"taskId": "\ud800"}), id="metadata"),
    pytest.param(InvalidParamsError("bad \udfff"), id="message"),
    pytest.param(InvalidParamsError(violations=[FieldViolation("id", "\ud800")]), id="violation"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("error", UNRENDERABLE_ERRORS)
async def test_unrenderable_error_keeps_the_binding_shape(
    h: Harness, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """An A2A error that cannot be encoded (a lone surrogate from somewhere) becomes a generic
    internal error in the binding's own shape: never an escape to the app-level handler, which
    answered a JSON-RPC call with a REST body."""
    monkeypatch.setattr(rows_module, "call_context", _raise(error))
    rpc = await h.rpc("GetTask", {"id": "{done}"}, rpc_id="keep-me")
    assert rpc.status_code == 200, rpc.text
    assert rpc.headers["content-type"].startswith("application/json")
    body = rpc.json()
    assert set(body) == {"jsonrpc", "id", "error"}
    assert body["id"] == "keep-me"
    assert body["error"]["code"] == -32603
    assert body["error"]["data"][0]["reason"] == "INTERNAL_ERROR"
    rest = await h.rest("GET", "/tasks/{done}")
    assert rest.status_code == 500, rest.text
    assert rest.headers["content-type"].startswith("application/a2a+json")
    assert rest.json()["error"]["status"] == "INTERNAL"
    assert rest.json()["error"]["details"][0]["reason"] == "INTERNAL_ERROR"


def test_jsonrpc_error_response_with_unencodable_id() -> None:
    request = Request({"type": "http", "method": "POST", "path": "/", "headers": [], "query_string": b""})
    response = jsonrpc_module.error_response(request, TaskNotFoundError(), "\ud800")
    body = json.loads(bytes(response.body))
    assert body["id"] is None
    assert body["error"]["code"] == -32603


@asynccontextmanager
async def unguarded_client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """A client that lets the app's last-resort handler answer (and does not re-raise)."""
    transport = httpx.ASGITransport(app=create_app(runtime), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.mark.asyncio
async def test_unexpected_on_jsonrpc_endpoint_is_jsonrpc_shaped(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "handle_jsonrpc", _raise(RuntimeError("secret detail")))
    async with unguarded_client(h.runtime) as http:
        response = await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"}, headers=V1)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert "secret detail" not in response.text
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"}
    assert body["id"] is None
    assert body["error"]["code"] == -32603
    assert_details(body["error"]["data"], Expect(-32603, 500, "INTERNAL", "INTERNAL_ERROR"))


@pytest.mark.asyncio
async def test_unexpected_elsewhere_is_rest_shaped(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "serve_card", _raise(RuntimeError("secret detail")))
    async with unguarded_client(h.runtime) as http:
        response = await http.get("/.well-known/agent-card.json")
    assert response.status_code == 500
    assert "secret detail" not in response.text
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (500, "INTERNAL")
    assert_details(error["details"], Expect(-32603, 500, "INTERNAL", "INTERNAL_ERROR"))


# --------------------------------------------------------------------------- the path wins (REST)


async def _config(h: Harness, task: str, config_id: str, url: str) -> None:
    response = await h.rest("POST", f"/tasks/{{{task}}}/pushNotificationConfigs", {"id": config_id, "url": url})
    assert response.status_code == 200, response.text


async def _configs(h: Harness, task: str) -> dict[str, str]:
    response = await h.rest("GET", f"/tasks/{{{task}}}/pushNotificationConfigs")
    assert response.status_code == 200, response.text
    return {c["id"]: c["url"] for c in response.json().get("configs", [])}


@pytest.mark.asyncio
@pytest.mark.parametrize("spelling", ["taskId", "task_id"])
async def test_body_task_id_cannot_override_path_on_create(h: Harness, spelling: str) -> None:
    response = await h.rest(
        "POST", "/tasks/{done}/pushNotificationConfigs", {spelling: "{waiting}", "id": "c1", "url": HOOK}
    )
    assert response.status_code == 200, response.text
    assert response.json()["taskId"] == h.tasks["done"]["id"]
    assert await _configs(h, "done") == {"c1": HOOK}
    assert await _configs(h, "waiting") == {}


@pytest.mark.asyncio
@pytest.mark.parametrize("spelling", ["taskId", "task_id"])
async def test_query_task_id_cannot_override_path_on_get(h: Harness, spelling: str) -> None:
    await _config(h, "done", "c1", "https://example.com/done")
    await _config(h, "waiting", "c1", "https://example.com/waiting")
    response = await h.rest("GET", "/tasks/{done}/pushNotificationConfigs/c1", {spelling: "{waiting}", "id": "c2"})
    assert response.status_code == 200, response.text
    assert response.json()["taskId"] == h.tasks["done"]["id"]
    assert response.json()["id"] == "c1"
    assert response.json()["url"] == "https://example.com/done"
    listing = await h.rest("GET", "/tasks/{done}/pushNotificationConfigs", {spelling: "{waiting}"})
    assert [c["url"] for c in listing.json()["configs"]] == ["https://example.com/done"]


@pytest.mark.asyncio
@pytest.mark.parametrize("spelling", ["taskId", "task_id"])
async def test_query_task_id_cannot_override_path_on_delete(h: Harness, spelling: str) -> None:
    await _config(h, "done", "c1", "https://example.com/done")
    await _config(h, "waiting", "c1", "https://example.com/waiting")
    response = await h.rest("DELETE", "/tasks/{done}/pushNotificationConfigs/c1", {spelling: "{waiting}", "id": "c9"})
    assert response.status_code == 200, response.text
    assert await _configs(h, "done") == {}
    assert await _configs(h, "waiting") == {"c1": "https://example.com/waiting"}


@pytest.mark.asyncio
async def test_body_and_query_id_cannot_override_path(h: Harness) -> None:
    got = await h.rest("GET", "/tasks/{done}", {"id": "{waiting}"})
    assert got.json()["id"] == h.tasks["done"]["id"]
    canceled = await h.rest("POST", "/tasks/{waiting}:cancel", {"id": "{done}"})
    assert canceled.status_code == 200, canceled.text
    assert canceled.json()["id"] == h.tasks["waiting"]["id"]
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"


@pytest.mark.asyncio
async def test_body_and_query_tenant_cannot_override_path(h: Harness) -> None:
    created = await h.http.post("/acme/message:send", json=send(message("hi", "m-acme"), tenant="globex"), headers=V1)
    assert created.status_code == 200, created.text
    acme = created.json()["task"]
    # Stored under the path's tenant, not the body's.
    assert (await h.http.get(f"/acme/tasks/{acme['id']}", headers=V1)).status_code == 200
    assert_rest_error(await h.http.get(f"/globex/tasks/{acme['id']}", headers=V1), TASK_NOT_FOUND)
    # A query or body tenant does not reach another tenant, with or without a path tenant.
    for path in (f"/tasks/{acme['id']}", f"/globex/tasks/{acme['id']}"):
        assert_rest_error(await h.http.get(path, params={"tenant": "acme"}, headers=V1), TASK_NOT_FOUND)
    listing = (await h.http.get("/globex/tasks", params={"tenant": "acme"}, headers=V1)).json()
    assert listing["tasks"] == []
    root = (await h.http.get("/tasks", params={"tenant": "acme"}, headers=V1)).json()
    assert acme["id"] not in {t["id"] for t in root["tasks"]}
    before = await h.state()
    for path in ("/globex/message:send", "/message:send"):
        response = await h.http.post(
            path, json=send(message("x", "m-cross", taskId=acme["id"]), tenant="acme"), headers=V1
        )
        assert_rest_error(response, TASK_NOT_FOUND)
    cancel = await h.http.post(f"/globex/tasks/{acme['id']}:cancel", json={"tenant": "acme"}, headers=V1)
    assert_rest_error(cancel, TASK_NOT_FOUND)
    assert await h.state() == before


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("verb", "path"),
    [
        pytest.param("GET", "/nope", id="unknown-path"),
        pytest.param("GET", "/tasks/{done}/frob", id="unknown-subresource"),
        pytest.param("GET", "/v1/nope", id="v1-prefix"),
        pytest.param("GET", "/.well-known/agent.json", id="old-card-path"),
        pytest.param("POST", "/a/b/message:send", id="two-segment-tenant"),
    ],
)
async def test_rest_unknown_route(h: Harness, verb: str, path: str) -> None:
    response = await h.http.request(verb, h.fill(path), headers=V1, json={})
    assert_rest_error(response, METHOD_NOT_FOUND)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("verb", "path", "allow"),
    [
        pytest.param("PUT", "/message:send", "POST", id="put-send"),
        pytest.param("GET", "/message:send", "POST", id="get-send"),
        pytest.param("DELETE", "/tasks", "GET", id="delete-tasks"),
        pytest.param("POST", "/tasks/{done}", "GET", id="post-task"),
        pytest.param("PUT", "/tasks/{done}:subscribe", "GET, POST", id="put-subscribe-two-routes"),
        pytest.param("PATCH", "/acme/tasks/{done}/pushNotificationConfigs", "GET, POST", id="tenant-patch-configs"),
        # A2A defines no HEAD: on operation routes it is refused, not run (HEAD /tasks ran ListTasks).
        pytest.param("HEAD", "/tasks", "GET", id="head-list-tasks"),
        pytest.param("HEAD", "/tasks/{done}", "GET", id="head-get-task"),
        pytest.param("HEAD", "/tasks/{done}:subscribe", "GET, POST", id="head-subscribe"),
        pytest.param("HEAD", "/tasks/{done}/pushNotificationConfigs", "GET, POST", id="head-list-configs"),
        pytest.param("HEAD", "/extendedAgentCard", "GET", id="head-extended-card"),
        pytest.param("HEAD", "/acme/tasks", "GET", id="head-tenant-list-tasks"),
        pytest.param("GET", "/", "POST", id="get-jsonrpc"),
    ],
)
async def test_rest_wrong_verb(h: Harness, verb: str, path: str, allow: str) -> None:
    """A known path with the wrong verb: 405 with ``Allow``, still the REST error shape, with
    ``error.code`` equal to the HTTP status and a gRPC status that agrees with it (UNIMPLEMENTED,
    as google.api.http transcoding answers; NOT_FOUND would claim the path does not exist)."""
    before = await h.state()
    response = await h.http.request(verb, h.fill(path), headers=V1)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == allow
    if verb == "HEAD":
        assert response.content == b""
        assert await h.state() == before
        return
    assert_no_leak(response)
    assert response.headers["content-type"].startswith("application/a2a+json")
    error = response.json()["error"]
    assert set(error) == {"code", "status", "message", "details"}
    assert error["code"] == 405
    assert error["status"] == "UNIMPLEMENTED"
    assert error["details"][0]["@type"] == ERROR_INFO
    assert error["details"][0]["reason"] == "METHOD_NOT_FOUND"
    assert await h.state() == before


@pytest.mark.asyncio
async def test_head_does_not_run_list_tasks(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = h.store.list_tasks

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("list_tasks")
        return original(*args, **kwargs)

    monkeypatch.setattr(h.store, "list_tasks", spy)
    assert (await h.http.head("/tasks", headers=V1)).status_code == 405
    assert calls == []
    assert (await h.http.get("/tasks", headers=V1)).status_code == 200
    assert calls == ["list_tasks"]


@pytest.mark.asyncio
async def test_head_on_agent_card_is_served(h: Harness) -> None:
    """Caches and CDNs probe the card with HEAD: it stays (same headers as GET, no body)."""
    got = await h.http.get("/.well-known/agent-card.json")
    head = await h.http.head("/.well-known/agent-card.json")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["etag"] == got.headers["etag"]
    assert head.headers["cache-control"] == got.headers["cache-control"]
    assert head.headers["content-type"] == got.headers["content-type"]


@pytest.mark.asyncio
async def test_integer_and_string_ids_are_echoed(h: Harness) -> None:
    for rpc_id in (0, 42, -1, "", "abc", "0"):
        response = await h.rpc("GetTask", {"id": "no-such-task"}, rpc_id=rpc_id)
        assert_rpc_error(response, TASK_NOT_FOUND, rpc_id)
        ok = await h.rpc("GetTask", {"id": "{done}"}, rpc_id=rpc_id)
        assert ok.status_code == 200
        assert ok.json()["id"] == rpc_id
        assert type(ok.json()["id"]) is type(rpc_id)


# --------------------------------------------------------------------------- version negotiation


VERSION_HEADERS = [
    pytest.param({}, id="missing"),
    pytest.param({"A2A-Version": ""}, id="empty"),
    pytest.param({"A2A-Version": "0.3"}, id="0.3"),
    pytest.param({"A2A-Version": "0.3.0"}, id="0.3.0"),
    pytest.param({"A2A-Version": "2.0"}, id="2.0"),
    pytest.param({"A2A-Version": "1.1"}, id="1.1"),
    pytest.param({"A2A-Version": "1"}, id="major-only"),
    pytest.param({"A2A-Version": "INVALID"}, id="garbage"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("headers", VERSION_HEADERS)
@pytest.mark.parametrize(
    ("binding", "operation"),
    [
        pytest.param("jsonrpc", ("GetTask", {"id": "{done}"}), id="jsonrpc-get"),
        pytest.param("jsonrpc", ("SendMessage", send(message())), id="jsonrpc-send"),
        pytest.param("rest", ("GET", "/tasks/{done}", None), id="rest-get"),
        pytest.param("rest", ("POST", "/message:send", send(message())), id="rest-send"),
        pytest.param("rest", ("GET", "/tasks", None), id="rest-list"),
    ],
)
async def test_unsupported_version(
    h: Harness, headers: dict[str, str], binding: str, operation: tuple[Any, ...]
) -> None:
    case = (
        Case(VERSION_NOT_SUPPORTED, rpc=operation)
        if binding == "jsonrpc"
        else Case(VERSION_NOT_SUPPORTED, rest=operation)
    )
    await run_case(h, case, binding, "v", headers=headers)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("headers", "query"),
    [
        pytest.param({"A2A-Version": "1.0"}, {}, id="header"),
        pytest.param({"a2a-version": "1.0"}, {}, id="header-lowercase"),
        pytest.param({"A2A-Version": "1.0.3"}, {}, id="patch-ignored"),
        pytest.param({}, {"A2A-Version": "1.0"}, id="query-parameter"),
    ],
)
async def test_version_accepted(h: Harness, headers: dict[str, str], query: dict[str, str]) -> None:
    done = h.tasks["done"]
    rest = await h.http.get(f"/tasks/{done['id']}", params=query, headers=headers)
    assert rest.status_code == 200, rest.text
    assert rest.json()["id"] == done["id"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": done["id"]}}
    rpc = await h.http.post("/", params=query, json=body, headers=headers)
    assert rpc.status_code == 200
    assert rpc.json()["result"]["id"] == done["id"]


@pytest.mark.asyncio
async def test_lenient_missing_version() -> None:
    async with harness(lenient_missing_version=True) as h:
        done = h.tasks["done"]
        rest = await h.http.get(f"/tasks/{done['id']}")
        assert rest.status_code == 200, rest.text
        rpc = await h.rpc("GetTask", {"id": done["id"]}, headers={})
        assert rpc.json()["result"]["id"] == done["id"]
        # Lenient only about a missing header: a wrong one is still refused.
        wrong = await h.rpc("GetTask", {"id": done["id"]}, rpc_id=2, headers={"A2A-Version": "0.3"})
        assert_rpc_error(wrong, VERSION_NOT_SUPPORTED, 2)


@pytest.mark.asyncio
async def test_card_is_served_without_version(h: Harness) -> None:
    response = await h.http.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    assert response.json()["supportedInterfaces"]


# --------------------------------------------------------------------------- body size limit


def _big_send(size: int) -> bytes:
    return json.dumps({"message": message("x" * size, "m-big")}).encode()


def _big_rpc(size: int) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 5, "method": "SendMessage", "params": {"message": message("x" * size)}}
    ).encode()


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    for i in range(0, len(data), 512):
        yield data[i : i + 512]


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True], ids=["content-length", "chunked"])
async def test_body_over_limit(streamed: bool) -> None:
    async with harness(max_body_bytes=2048) as h:
        headers = {**V1, "Content-Type": "application/json"}
        before = await h.state()

        rpc_body = _big_rpc(4096)
        response = await h.http.post("/", content=_chunks(rpc_body) if streamed else rpc_body, headers=headers)
        assert_rpc_error(response, PAYLOAD_TOO_LARGE, None)

        rest_body = _big_send(4096)
        response = await h.http.post(
            "/message:send", content=_chunks(rest_body) if streamed else rest_body, headers=headers
        )
        assert_rest_error(response, PAYLOAD_TOO_LARGE)

        assert await h.state() == before
        # Just under the limit is fine.
        small = _big_send(1500)
        assert len(small) < 2048
        ok = await h.http.post("/message:send", content=_chunks(small) if streamed else small, headers=headers)
        assert ok.status_code == 200, ok.text
        assert ok.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


# --------------------------------------------------------------------------- push notifications off


PUSH_OFF_CASES: dict[str, Case] = {
    "push-create": both(
        PUSH_NOT_SUPPORTED,
        "CreateTaskPushNotificationConfig",
        {"taskId": "{done}", "url": HOOK},
        "POST",
        "/tasks/{done}/pushNotificationConfigs",
        {"url": HOOK},
    ),
    "push-get": both(
        PUSH_NOT_SUPPORTED,
        "GetTaskPushNotificationConfig",
        {"taskId": "{done}", "id": "c1"},
        "GET",
        "/tasks/{done}/pushNotificationConfigs/c1",
    ),
    "push-list": both(
        PUSH_NOT_SUPPORTED,
        "ListTaskPushNotificationConfigs",
        {"taskId": "{done}"},
        "GET",
        "/tasks/{done}/pushNotificationConfigs",
    ),
    "push-delete": both(
        PUSH_NOT_SUPPORTED,
        "DeleteTaskPushNotificationConfig",
        {"taskId": "{done}", "id": "c1"},
        "DELETE",
        "/tasks/{done}/pushNotificationConfigs/c1",
    ),
    "send-with-inline-config": both(
        PUSH_NOT_SUPPORTED,
        "SendMessage",
        send(message(), configuration={"taskPushNotificationConfig": {"url": HOOK}}),
        "POST",
        "/message:send",
        send(message(), configuration={"taskPushNotificationConfig": {"url": HOOK}}),
    ),
}


@pytest_asyncio.fixture
async def push_off() -> AsyncIterator[Harness]:
    async with harness(push_notifications=False) as value:
        yield value


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(PUSH_OFF_CASES))
async def test_push_notifications_disabled(push_off: Harness, case: Case, binding: str, name: str) -> None:
    card = (await push_off.http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["pushNotifications"] is False
    await run_case(push_off, case, binding, f"rq-{name}")


@pytest_asyncio.fixture
async def streaming_off() -> AsyncIterator[Harness]:
    async with harness(streaming=False) as value:
        yield value


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(STREAMING_OFF_CASES))
async def test_streaming_disabled(streaming_off: Harness, case: Case, binding: str, name: str) -> None:
    card = (await streaming_off.http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["streaming"] is False
    await run_case(streaming_off, case, binding, f"rq-{name}")


# --------------------------------------------------------------------------- ownership (api-key mode)


@pytest_asyncio.fixture
async def alice() -> AsyncIterator[Harness]:
    """Tasks owned by alice; requests from bob must not see or touch them."""
    async with harness(ALICE, auth_mode="api-key", api_keys=API_KEYS) as value:
        yield value


OWNER_CASES: dict[str, Case] = {
    "get": both(TASK_NOT_FOUND, "GetTask", {"id": "{done}"}, "GET", "/tasks/{done}"),
    "cancel": both(TASK_NOT_FOUND, "CancelTask", {"id": "{waiting}"}, "POST", "/tasks/{waiting}:cancel"),
    "cancel-completed": both(TASK_NOT_FOUND, "CancelTask", {"id": "{done}"}, "POST", "/tasks/{done}:cancel"),
    "continue": both(
        TASK_NOT_FOUND,
        "SendMessage",
        send(message("Mallory", taskId="{waiting}")),
        "POST",
        "/message:send",
        send(message("Mallory", taskId="{waiting}")),
    ),
    "continue-with-context": both(
        TASK_NOT_FOUND,
        "SendMessage",
        send(message("Mallory", taskId="{waiting}", contextId="{waiting_ctx}")),
        "POST",
        "/message:send",
        send(message("Mallory", taskId="{waiting}", contextId="{waiting_ctx}")),
    ),
    "push-create": both(
        TASK_NOT_FOUND,
        "CreateTaskPushNotificationConfig",
        {"taskId": "{done}", "url": HOOK},
        "POST",
        "/tasks/{done}/pushNotificationConfigs",
        {"url": HOOK},
    ),
    "push-get": both(
        TASK_NOT_FOUND,
        "GetTaskPushNotificationConfig",
        {"taskId": "{done}", "id": "alice-config"},
        "GET",
        "/tasks/{done}/pushNotificationConfigs/alice-config",
    ),
    "push-list": both(
        TASK_NOT_FOUND,
        "ListTaskPushNotificationConfigs",
        {"taskId": "{done}"},
        "GET",
        "/tasks/{done}/pushNotificationConfigs",
    ),
    "push-delete": both(
        TASK_NOT_FOUND,
        "DeleteTaskPushNotificationConfig",
        {"taskId": "{done}", "id": "alice-config"},
        "DELETE",
        "/tasks/{done}/pushNotificationConfigs/alice-config",
    ),
}


@pytest.mark.asyncio
@pytest.mark.parametrize(("case", "binding", "name"), matrix(OWNER_CASES))
async def test_another_owners_task_is_not_found(alice: Harness, case: Case, binding: str, name: str) -> None:
    created = await alice.rest("POST", "/tasks/{done}/pushNotificationConfigs", {"id": "alice-config", "url": HOOK})
    assert created.status_code == 200, created.text
    await run_case(alice, case, binding, f"rq-{name}", headers=BOB)
    assert alice.tasks["waiting"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_another_owners_tasks_are_not_listed(alice: Harness, binding: str) -> None:
    queries: list[dict[str, Any]] = [
        {},
        {"contextId": alice.tasks["done"]["contextId"]},
        {"status": "TASK_STATE_INPUT_REQUIRED"},
        {"includeArtifacts": True, "pageSize": 100},
    ]
    for query in queries:
        if binding == "jsonrpc":
            response = await alice.rpc("ListTasks", query, headers=BOB)
            assert response.status_code == 200
            result = response.json()["result"]
        else:
            params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
            response = await alice.http.get("/tasks", params=params, headers=BOB)
            assert response.status_code == 200, response.text
            result = response.json()
        assert result["tasks"] == []
        assert result["totalSize"] == 0
        assert result["nextPageToken"] == ""
    mine = (await alice.rest("GET", "/tasks")).json()
    assert {t["id"] for t in mine["tasks"]} == {alice.tasks["done"]["id"], alice.tasks["waiting"]["id"]}


@pytest.mark.asyncio
async def test_same_message_id_from_another_owner_is_a_new_task(alice: Harness) -> None:
    """Idempotency keys are scoped too: bob reusing alice's messageId gets his own task."""
    response = await alice.rest("POST", "/message:send", {"message": message("hello", "setup-done")}, headers=BOB)
    assert response.status_code == 200, response.text
    assert response.json()["task"]["id"] != alice.tasks["done"]["id"]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param(V1, id="no-credentials"),
        pytest.param({**V1, "Authorization": "Bearer nope"}, id="unknown-key"),
        pytest.param({**V1, "Authorization": "Basic a2V5LWE="}, id="wrong-scheme"),
        pytest.param({**V1, "Authorization": "Bearer"}, id="empty-token"),
    ],
)
async def test_unauthenticated_is_401(alice: Harness, headers: dict[str, str]) -> None:
    before = await alice.state()
    rpc = await alice.rpc("GetTask", {"id": "{done}"}, rpc_id="auth", headers=headers)
    assert_no_leak(rpc)
    assert rpc.status_code == 401
    assert "www-authenticate" in rpc.headers
    assert rpc.json()["id"] == "auth"
    assert rpc.json()["error"]["data"][0]["@type"] == ERROR_INFO
    rest = await alice.rest("GET", "/tasks/{done}", headers=headers)
    assert_no_leak(rest)
    assert rest.status_code == 401
    assert "www-authenticate" in rest.headers
    assert rest.json()["error"]["code"] == 401
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"
    send_rest = await alice.rest("POST", "/message:send", send(message()), headers=headers)
    assert send_rest.status_code == 401
    assert await alice.state() == before


# --------------------------------------------------------------------------- tenants


@pytest.mark.asyncio
async def test_tenants_are_isolated(h: Harness) -> None:
    created = await h.http.post("/acme/message:send", json=send(message("hi acme", "m-acme")), headers=V1)
    assert created.status_code == 200, created.text
    acme_task = created.json()["task"]

    # Visible in its tenant, over both bindings.
    assert (await h.http.get(f"/acme/tasks/{acme_task['id']}", headers=V1)).status_code == 200
    rpc = await h.rpc("GetTask", {"id": acme_task["id"], "tenant": "acme"})
    assert rpc.json()["result"]["id"] == acme_task["id"]
    acme_list = (await h.http.get("/acme/tasks", headers=V1)).json()
    assert [t["id"] for t in acme_list["tasks"]] == [acme_task["id"]]

    # Invisible at the root and in another tenant.
    assert_rest_error(await h.http.get(f"/tasks/{acme_task['id']}", headers=V1), TASK_NOT_FOUND)
    assert_rest_error(await h.http.get(f"/globex/tasks/{acme_task['id']}", headers=V1), TASK_NOT_FOUND)
    assert_rpc_error(await h.rpc("GetTask", {"id": acme_task["id"]}, rpc_id=3), TASK_NOT_FOUND, 3)
    root = (await h.http.get("/tasks", headers=V1)).json()
    assert acme_task["id"] not in {t["id"] for t in root["tasks"]}
    globex = (await h.rpc("ListTasks", {"tenant": "globex"})).json()["result"]
    assert globex["tasks"] == []
    assert globex["totalSize"] == 0


@pytest.mark.asyncio
async def test_send_to_invalid_tenant_is_invalid_params(h: Harness) -> None:
    before = await h.state()
    response = await h.rpc("SendMessage", send(message(), tenant="a/b"), rpc_id="tenant")
    assert_rpc_error(response, INVALID_PARAMS, "tenant")
    assert await h.state() == before
