"""A messageId reused for a different message is a new task by default, and InvalidParams naming it
with ``A2A_MESSAGE_ID_REUSE=reject``, on both bindings and both protocol versions, unary and
streaming; an identical re-send still answers with the first task. An ``Idempotency-Key`` header
does the same for its request everywhere: a re-send is the first task (a stream resumes its events),
another request under the key is InvalidParams naming the header. (The operation's rules are in
``tests/contract/test_message_ids.py``.)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from testkit.asgi import memory_app

pytestmark = pytest.mark.asyncio

V1 = {"A2A-Version": "1.0"}


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with memory_app() as client:
        yield client


@pytest_asyncio.fixture
async def strict() -> AsyncIterator[httpx.AsyncClient]:
    async with memory_app(message_id_reuse="reject") as client:
        yield client


def _v1_message(text: str, message_id: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


def _v03_message(text: str, message_id: str) -> dict[str, Any]:
    return {"kind": "message", "messageId": message_id, "role": "user", "parts": [{"kind": "text", "text": text}]}


async def _send(
    http: httpx.AsyncClient, how: str, text: str, message_id: str, key: str | None = None
) -> tuple[int, dict[str, Any]]:
    """One SendMessage (configuration: return at once) as ``how`` sends it, with ``key`` as its
    ``Idempotency-Key``: status and JSON body."""
    headers = {"Idempotency-Key": key} if key is not None else {}
    if how == "v1-jsonrpc":
        params = {"message": _v1_message(text, message_id), "configuration": {"returnImmediately": True}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
        response = await http.post("/", json=body, headers=V1 | headers)
    elif how == "v1-rest":
        body = {"message": _v1_message(text, message_id), "configuration": {"returnImmediately": True}}
        response = await http.post("/message:send", json=body, headers=V1 | headers)
    elif how == "v03-jsonrpc":
        params = {"message": _v03_message(text, message_id), "configuration": {"blocking": False}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
        response = await http.post("/", json=body, headers=headers)
    else:  # the v0.3 REST binding speaks the v0.3 proto's JSON
        message = {"messageId": message_id, "role": "ROLE_USER", "content": [{"text": text}]}
        body = {"message": message, "configuration": {"blocking": False}}
        response = await http.post("/v1/message:send", json=body, headers=headers)
    return response.status_code, response.json()


def _task_id(how: str, answer: dict[str, Any]) -> str:
    result = answer.get("result", answer)
    if how == "v03-jsonrpc":  # a bare v0.3 Task
        return str(result["id"])
    return str(result["task"]["id"])


HOW = ["v1-jsonrpc", "v1-rest", "v03-jsonrpc", "v03-rest"]


@pytest.mark.parametrize("how", HOW)
async def test_an_identical_resend_answers_with_the_first_task(http: httpx.AsyncClient, how: str) -> None:
    status, first = await _send(http, how, "hello", f"m-{how}")
    assert status == 200, first
    status, again = await _send(http, how, "hello", f"m-{how}")
    assert status == 200, again
    assert _task_id(how, again) == _task_id(how, first)


@pytest.mark.parametrize("how", HOW)
async def test_a_reused_message_id_is_a_new_task(http: httpx.AsyncClient, how: str) -> None:
    status, first = await _send(http, how, "hello", f"m-{how}")
    assert status == 200, first

    status, answer = await _send(http, how, "something else", f"m-{how}")

    assert status == 200, answer
    assert _task_id(how, answer) != _task_id(how, first)
    listed = await http.get("/tasks", headers=V1)
    assert listed.json()["totalSize"] == 2
    # and it is a re-send of itself from now on
    assert _task_id(how, (await _send(http, how, "something else", f"m-{how}"))[1]) == _task_id(how, answer)


@pytest.mark.parametrize("how", HOW)
async def test_with_reuse_rejected_a_reused_message_id_is_invalid_params_naming_it(
    strict: httpx.AsyncClient, how: str
) -> None:
    status, first = await _send(strict, how, "hello", f"m-{how}")
    assert status == 200, first

    status, answer = await _send(strict, how, "something else", f"m-{how}")

    text = str(answer)
    assert f"m-{how}" in text
    if how.endswith("jsonrpc"):
        assert status == 200
        assert answer["error"]["code"] == -32602
        assert f"m-{how}" in answer["error"]["message"]
    else:  # the status and shape of each binding's errors are tested with the binding
        assert 400 <= status < 500, answer
    listed = await strict.get("/tasks", headers=V1)
    assert listed.json()["totalSize"] == 1


async def test_a_reused_message_id_on_a_stream_is_a_new_task_s_stream(http: httpx.AsyncClient) -> None:
    _, first = await _send(http, "v1-rest", "hello", "m-s")
    body = {"message": _v1_message("other", "m-s")}
    async with http.stream("POST", "/message:stream", json=body, headers=V1) as response:
        raw = (await response.aread()).decode()
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "Echo: other" in raw
    assert _task_id("v1-rest", first) not in raw


async def test_with_reuse_rejected_a_reused_message_id_on_a_stream_is_refused_before_the_first_event(
    strict: httpx.AsyncClient,
) -> None:
    await _send(strict, "v1-rest", "hello", "m-s")
    body = {"message": _v1_message("other", "m-s")}
    async with strict.stream("POST", "/message:stream", json=body, headers=V1) as response:
        raw = (await response.aread()).decode()
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/")
    assert "m-s" in raw


# ------------------------------------------------------------------------------ Idempotency-Key


def _assert_invalid_params(how: str, status: int, answer: dict[str, Any], naming: str) -> None:
    assert naming in str(answer)
    if how.endswith("jsonrpc"):
        assert status == 200
        assert answer["error"]["code"] == -32602
        assert naming in answer["error"]["message"]
    else:  # 400 (v1.0 REST), 422 (v0.3 REST): each binding's mapping, tested with the binding
        assert 400 <= status < 500, answer


@pytest.mark.parametrize("how", HOW)
async def test_an_idempotency_key_answers_a_retry_with_the_first_task(http: httpx.AsyncClient, how: str) -> None:
    status, first = await _send(http, how, "hello", f"m-{how}", key=f"k-{how}")
    assert status == 200, first

    status, again = await _send(http, how, "hello", f"m-{how}", key=f"k-{how}")
    assert status == 200, again
    assert _task_id(how, again) == _task_id(how, first)

    status, other = await _send(http, how, "something else", f"m-{how}", key=f"k-{how}")
    _assert_invalid_params(how, status, other, "Idempotency-Key")
    assert f"k-{how}" in str(other)
    listed = await http.get("/tasks", headers=V1)
    assert listed.json()["totalSize"] == 1


@pytest.mark.parametrize("path", ["/message:stream", "/"])
async def test_a_streamed_retry_under_the_key_resumes_the_first_task_s_events(
    http: httpx.AsyncClient, path: str
) -> None:
    # Given a streamed send under a key, which ran to its end
    body: dict[str, Any] = {"message": _v1_message("hello", "m-s")}
    if path == "/":
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": body}
    headers = V1 | {"Idempotency-Key": "k-stream"}
    async with http.stream("POST", path, json=body, headers=headers) as response:
        first = (await response.aread()).decode()
    assert response.status_code == 200
    task_id = str((await http.get("/tasks", headers=V1)).json()["tasks"][0]["id"])

    # When the client retries it on a stream with the same key
    async with http.stream("POST", path, json=body, headers=headers) as response:
        again = (await response.aread()).decode()

    # Then it follows the first task (its events, from its snapshot on) and nothing else ran
    assert response.status_code == 200
    assert task_id in first
    assert task_id in again
    assert "Echo: hello" in again
    assert "TASK_STATE_COMPLETED" in again
    assert (await http.get("/tasks", headers=V1)).json()["totalSize"] == 1
    # and another message under the key is refused before the first event
    body_other: dict[str, Any] = {"message": _v1_message("other", "m-s")}
    if path == "/":
        body_other = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": body_other}
    async with http.stream("POST", path, json=body_other, headers=headers) as response:
        refused = json.loads(await response.aread())
    assert response.headers["content-type"].startswith("application/")
    _assert_invalid_params("v1-jsonrpc" if path == "/" else "v1-rest", response.status_code, refused, "k-stream")


async def test_a_malformed_idempotency_key_is_refused_naming_the_header(http: httpx.AsyncClient) -> None:
    status, answer = await _send(http, "v1-rest", "hello", "m-bad", key="x" * 300)
    _assert_invalid_params("v1-rest", status, answer, "Idempotency-Key")
    assert (await http.get("/tasks", headers=V1)).json()["totalSize"] == 0
