"""Errors on the v0.3 REST binding (``/v1/...``), in the shape both 0.3 clients type.

* ``a2a-sdk`` 0.3.26's Python REST client (``a2a.client.transports.rest.RestTransport``) reads only
  the HTTP status (``A2AClientHTTPError.status_code``): we answer the reference 0.3 server's status
  (``a2a.utils.error_handlers.A2AErrorToHttpStatus``, copied below as ``REFERENCE`` so a change on
  our side is caught).
* ``@a2a-js/sdk`` 1.3.0's ``LegacyRestTransport`` types an error from a body ``{code: number,
  message: string}``, ``code`` being the JSON-RPC code (``_errorFromLegacyBody``), in a response and
  in an SSE ``error`` event (``_parseSseErrorEvent``).

So the body is ``{code, message, data}`` with the reference server's status. The v1.0 routes keep
``{"error": {...}}``; a caller asking for 1.x on a ``/v1`` path is a 1.0 client and is answered in
its shape.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from google.protobuf import json_format

from a2a_serverless import errors
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.errors import A2AError
from a2a_serverless.models import StreamResponse
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport import rows, sse
from a2a_serverless.transport._render import V03_REST_STATUS, rest_error, v03_rest_error
from a2a_serverless.transport.app import create_app
from a2a_serverless.transport.rest import error_response
from a2a_serverless.wiring import build_runtime

# a2a-sdk 0.3.26, a2a/utils/error_handlers.py A2AErrorToHttpStatus (by JSON-RPC code; -32007 is
# AuthenticatedExtendedCardNotConfiguredError there).
REFERENCE = {
    -32700: 400,
    -32600: 400,
    -32601: 404,
    -32602: 422,
    -32603: 500,
    -32001: 404,
    -32002: 409,
    -32003: 501,
    -32004: 501,
    -32005: 415,
    -32006: 502,
    -32007: 404,
}
# @a2a-js/sdk 1.3.0, JSON_RPC_CODE_TO_ERROR: the codes its v0.3 REST client turns into typed errors.
JS_TYPED = {
    -32001: "TaskNotFoundError",
    -32002: "TaskNotCancelableError",
    -32003: "PushNotificationNotSupportedError",
    -32004: "UnsupportedOperationError",
    -32005: "ContentTypeNotSupportedError",
    -32006: "InvalidAgentResponseError",
    -32007: "ExtendedAgentCardNotConfiguredError",
    -32008: "ExtensionSupportRequiredError",
    -32009: "VersionNotSupportedError",
    -32602: "RequestMalformedError",
}
V1 = {"A2A-Version": "1.0"}
V1_SEND = '{"message": {"messageId": "m-v1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}'


def all_errors() -> Iterator[type[A2AError]]:
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, A2AError):
            yield value


def js_parse(body: Any) -> str:
    """What ``LegacyRestTransport._errorFromLegacyBody`` makes of a body (the class name), or
    ``Error`` where it falls back to a plain error (``_isLegacyRestErrorBody`` false, unknown code)."""
    if not (isinstance(body, dict) and isinstance(body.get("code"), int) and isinstance(body.get("message"), str)):
        return "Error"
    return JS_TYPED.get(body["code"], "Error")


def v03_error(response: httpx.Response, code: int, reason: str, status: int | None = None) -> dict[str, Any]:
    """The response is the v0.3 REST error ``code``: the reference status (or ``status``, for an
    error the reference table does not have), the body both clients read."""
    assert response.status_code == (REFERENCE[code] if status is None else status), response.text
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body: dict[str, Any] = response.json()
    assert set(body) == {"code", "message", "data"}, body
    assert body["code"] == code, body
    assert isinstance(body["message"], str), body
    assert body["message"], body
    assert body["data"]["reason"] == reason, body
    assert body["data"]["domain"] == errors.ERROR_DOMAIN
    assert js_parse(body) == JS_TYPED.get(code, "Error")
    return body


def app_client(runtime: Runtime, **app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(runtime, **app), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def make_runtime(**settings: Any) -> Runtime:
    defaults: dict[str, Any] = {"store": "memory", "poll_interval_seconds": 0.005, "push_notifications": True}
    return build_runtime(Settings(**{**defaults, **settings}), store=MemoryTaskStore())


@pytest_asyncio.fixture
async def runtime() -> AsyncIterator[Runtime]:
    built = make_runtime()
    try:
        yield built
    finally:
        built.queue.shutdown()  # type: ignore[attr-defined]


@pytest_asyncio.fixture
async def http(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(runtime) as client:
        yield client


def send_body(text: str, **configuration: Any) -> dict[str, Any]:
    request = pb03.SendMessageRequest(
        request=pb03.Message(message_id=f"m-{text}", role=pb03.ROLE_USER, content=[pb03.Part(text=text)]),
        configuration=pb03.SendMessageConfiguration(**configuration),
    )
    return json_format.MessageToDict(request)


async def completed_task(http: httpx.AsyncClient) -> str:
    sent = await http.post("/v1/message:send", json=send_body("hello", blocking=True))
    assert sent.status_code == 200, sent.text
    task = sent.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    return str(task["id"])


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("error_class", list(all_errors()), ids=lambda c: c.__name__)
def test_every_error_renders_in_the_v03_shape_with_the_reference_status(error_class: type[A2AError]) -> None:
    error = error_class(metadata={"taskId": "t-1"})
    response = error_response(error, legacy=True)
    body = json.loads(response.body)
    assert body == {
        "code": error.jsonrpc_code,
        "message": error.message,
        "data": {"reason": error.reason, "domain": errors.ERROR_DOMAIN, "metadata": {"taskId": "t-1"}},
    }
    # The reference status where the reference server knows the error, else our own.
    if error_class in V03_REST_STATUS:
        assert response.status_code == REFERENCE[error.jsonrpc_code]
    else:
        assert response.status_code == error.http_status
    assert response.media_type == "application/json"
    # The v1.0 rendering is untouched.
    v1 = error_response(error)
    assert v1.status_code == error.http_status
    assert set(json.loads(v1.body)) == {"error"}


def test_the_v03_table_is_the_reference_table() -> None:
    assert {cls.jsonrpc_code: status for cls, status in V03_REST_STATUS.items()} == REFERENCE
    # Errors sharing a JSON-RPC code with a table entry but meaning something else keep their status.
    assert errors.PayloadTooLargeError not in V03_REST_STATUS  # 413, not InvalidRequest's 400
    assert errors.UnauthenticatedError not in V03_REST_STATUS  # 401 + WWW-Authenticate
    assert errors.ContentUnavailableError not in V03_REST_STATUS  # 503: retry


def test_field_violations_travel_in_data() -> None:
    error = errors.InvalidParamsError(violations=[errors.FieldViolation("message.content[0]", "bad")])
    body = json.loads(error_response(error, legacy=True).body)
    assert body["data"]["fieldViolations"] == [{"field": "message.content[0]", "description": "bad"}]


# --------------------------------------------------------------------------- through the app


@pytest.mark.asyncio
async def test_task_not_found(http: httpx.AsyncClient) -> None:
    v03_error(await http.get("/v1/tasks/nope"), -32001, "TASK_NOT_FOUND")
    v03_error(await http.post("/v1/tasks/nope:cancel", json={}), -32001, "TASK_NOT_FOUND")
    v03_error(await http.get("/v1/tasks/nope/pushNotificationConfigs"), -32001, "TASK_NOT_FOUND")


@pytest.mark.asyncio
async def test_cancel_of_a_terminal_task_is_409_task_not_cancelable(http: httpx.AsyncClient) -> None:
    task_id = await completed_task(http)
    v03_error(await http.post(f"/v1/tasks/{task_id}:cancel", json={}), -32002, "TASK_NOT_CANCELABLE")


@pytest.mark.asyncio
async def test_second_cancel_is_409_and_v1_cancel_stays_400(http: httpx.AsyncClient) -> None:
    started = await http.post("/v1/message:send", json=send_body("sleep 20"))
    task_id = started.json()["task"]["id"]
    first = await http.post(f"/v1/tasks/{task_id}:cancel", json={})
    assert first.status_code == 200, first.text
    assert first.json()["status"]["state"] == "TASK_STATE_CANCELLED"
    v03_error(await http.post(f"/v1/tasks/{task_id}:cancel", json={}), -32002, "TASK_NOT_CANCELABLE")
    # The same task, cancelled again over v1.0 REST: v1.0's status (A2A specification, section 5.4 Error Code
    # Mappings) and shape.
    again = await http.post(f"/tasks/{task_id}:cancel", json={}, headers=V1)
    assert again.status_code == 400, again.text
    assert again.headers["content-type"].startswith("application/a2a+json")
    error = again.json()["error"]
    assert (error["code"], error["status"]) == (400, "FAILED_PRECONDITION")
    assert error["details"][0]["reason"] == "TASK_NOT_CANCELABLE"


@pytest.mark.asyncio
async def test_invalid_params_is_422(http: httpx.AsyncClient) -> None:
    body = v03_error(await http.get("/v1/tasks/x", params={"historyLength": "many"}), -32602, "INVALID_PARAMS")
    assert body["data"]["fieldViolations"][0]["field"] == "historyLength"
    bad_part = {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"file": {}}]}}
    body = v03_error(await http.post("/v1/message:send", json=bad_part), -32602, "INVALID_PARAMS")
    assert body["data"]["fieldViolations"]


@pytest.mark.asyncio
async def test_unreadable_bodies(http: httpx.AsyncClient) -> None:
    as_json = {"Content-Type": "application/json"}
    v03_error(await http.post("/v1/message:send", content=b"{", headers=as_json), -32700, "INVALID_REQUEST")
    v03_error(await http.post("/v1/message:send", content=b"[]", headers=as_json), -32600, "INVALID_REQUEST")


@pytest.mark.asyncio
async def test_extended_card_not_configured_is_404(http: httpx.AsyncClient) -> None:
    v03_error(await http.get("/v1/card"), -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")


@pytest.mark.asyncio
async def test_push_not_supported_is_501() -> None:
    runtime = make_runtime(push_notifications=False)
    try:
        async with app_client(runtime) as http:
            task_id = await completed_task(http)
            config = {"pushNotificationConfig": {"id": "c", "url": "https://example.com/hook"}}
            v03_error(
                await http.post(f"/v1/tasks/{task_id}/pushNotificationConfigs", json=config),
                -32003,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            )
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_unsupported_operation_is_501(runtime: Runtime) -> None:
    async with app_client(runtime, methods={"SendMessage"}) as http:
        v03_error(await http.get("/v1/tasks/x"), -32004, "UNSUPPORTED_OPERATION")


@pytest.mark.asyncio
async def test_version_not_supported(http: httpx.AsyncClient) -> None:
    # An unknown version on a v0.3 path: the v0.3 shape (the JS client types it).
    v03_error(await http.get("/v1/tasks/x", headers={"A2A-Version": "2.0"}), -32009, "VERSION_NOT_SUPPORTED", 400)
    # A caller that asked for 1.0 is a 1.0 client that took /v1 for a tenant: its own shape.
    response = await http.get("/v1/tasks/x", headers=V1)
    assert response.status_code == 400
    assert response.json()["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"


@pytest.mark.asyncio
async def test_unauthenticated_keeps_401_and_its_challenge() -> None:
    runtime = make_runtime(auth_mode="api-key", api_keys={"k-123": "alice"})
    try:
        async with app_client(runtime) as http:
            response = await http.get("/v1/tasks/x")
            assert response.status_code == 401, response.text
            assert response.headers["www-authenticate"] == 'Bearer realm="a2a"'
            body = v03_error(response, -32600, "UNAUTHENTICATED", status=401)
            assert js_parse(body) == "Error"  # 0.3 has no code for it; the status says it
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


class FailingStore(MemoryTaskStore):
    def get_task(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store is on fire")


@pytest.mark.asyncio
async def test_unexpected_failure_is_a_500_internal_error() -> None:
    runtime = build_runtime(Settings(store="memory"), store=FailingStore())
    try:
        async with app_client(runtime) as http:
            response = await http.get("/v1/tasks/x")
            body = v03_error(response, -32603, "INTERNAL_ERROR")
            assert "fire" not in response.text
            assert js_parse(body) == "Error"
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- streams


@pytest.mark.asyncio
async def test_stream_errors_before_the_first_byte_are_plain_v03_errors(http: httpx.AsyncClient) -> None:
    for verb in ("GET", "POST"):
        response = await http.request(verb, "/v1/tasks/nope:subscribe")
        assert not response.headers["content-type"].startswith("text/event-stream")
        v03_error(response, -32001, "TASK_NOT_FOUND")
    bad = {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"file": {}}]}}
    v03_error(await http.post("/v1/message:stream", json=bad), -32602, "INVALID_PARAMS")
    task_id = await completed_task(http)
    v03_error(await http.get(f"/v1/tasks/{task_id}:subscribe"), -32004, "UNSUPPORTED_OPERATION")


@pytest.mark.asyncio
async def test_stream_errors_after_the_first_byte_are_v03_error_events(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A v0.3 stream gets the v0.3 error renderer (a v1.0 stream keeps its own), and an error in
    the stream is an ``error`` event whose data is the v0.3 body, which
    ``LegacyRestTransport._parseSseErrorEvent`` types."""
    given: list[Any] = []
    original = rows.sse_response

    def spy(stream: Any, render: Any, render_error: Any, **kwargs: Any) -> Any:
        given.append(render_error)
        return original(stream, render, render_error, **kwargs)

    monkeypatch.setattr(rows, "sse_response", spy)
    async with http.stream("POST", "/v1/message:stream", json=send_body("hello")) as response:
        assert response.status_code == 200
        await response.aread()
    async with http.stream("POST", "/message:stream", json=json.loads(V1_SEND), headers=V1) as response:
        assert response.status_code == 200
        await response.aread()
    assert given == [v03_rest_error, rest_error]

    class Broken:
        async def events(self) -> AsyncIterator[Any]:
            raise errors.TaskNotFoundError(metadata={"taskId": "t"})
            yield  # pragma: no cover

    def render(event: StreamResponse) -> Any:
        return event.to_wire()

    framed = sse.sse_response(Broken(), render, v03_rest_error, ping_seconds=5)  # type: ignore[arg-type]
    frames = [f if isinstance(f, str) else bytes(f).decode() async for f in framed.body_iterator]
    assert len(frames) == 1, frames
    assert frames[0].startswith("event: error\ndata: "), frames
    body = json.loads(frames[0].split("data: ", 1)[1])
    assert js_parse(body) == "TaskNotFoundError"
    assert body["data"]["metadata"] == {"taskId": "t"}


@pytest.mark.asyncio
async def test_an_unknown_v03_path_is_a_v03_not_found(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/no-such-route")

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == -32601
    assert response.json()["data"]["reason"] == "METHOD_NOT_FOUND"
    # A 1.0 client that took /v1 for a tenant is answered in its own shape
    v1 = await http.get("/v1/no-such-route", headers={"A2A-Version": "1.0"})
    assert v1.status_code == 404
    assert set(v1.json()) == {"error"}


@pytest.mark.asyncio
async def test_a_wrong_verb_on_a_v03_route_is_a_v03_405_with_allow(http: httpx.AsyncClient) -> None:
    response = await http.delete("/v1/message:send")

    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["code"] == -32601
    assert isinstance(response.json()["message"], str)
