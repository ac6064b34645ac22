"""A v0.3 JSON-RPC stream that fails before its first event: a 0.3-era client (no ``A2A-Version``,
like a2a-sdk 0.3.26) gets the error as the stream's only event, which is the only form it types; a
1.0-era client in its 0.3 mode (``A2A-Version: 0.3``, like @a2a-js/sdk) gets the plain JSON-RPC
error answered before any event, which is the only form it types. Both clients are driven for real in
``tests/e2e/test_interop_matrix.py`` (scenario ``errors``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from testkit.asgi import memory_app


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with memory_app() as client:
        yield client


CALLS = [
    pytest.param(
        "message/stream",
        {
            "message": {
                "kind": "message",
                "messageId": "m-1",
                "role": "user",
                "taskId": "no-such-task",
                "parts": [{"kind": "text", "text": "hi"}],
            }
        },
        id="message-stream",
    ),
    pytest.param("tasks/resubscribe", {"id": "no-such-task"}, id="resubscribe"),
]


def _body(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "s1", "method": method, "params": params}


def _assert_task_not_found(answer: dict[str, Any]) -> None:
    assert answer["id"] == "s1"
    assert answer["error"]["code"] == -32001
    assert answer["error"]["data"]["reason"] == "TASK_NOT_FOUND"


@pytest.mark.asyncio
@pytest.mark.parametrize(("method", "params"), CALLS)
async def test_a_client_without_a2a_version_gets_the_error_as_the_streams_event(
    http: httpx.AsyncClient, method: str, params: dict[str, Any]
) -> None:
    response = await http.post("/", json=_body(method, params), headers={"Accept": "text/event-stream"})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    frames = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    assert response.text.startswith("event: error\n")
    assert len(frames) == 1
    _assert_task_not_found(json.loads(frames[0]))


@pytest.mark.asyncio
@pytest.mark.parametrize(("method", "params"), CALLS)
async def test_a_client_that_says_0_3_gets_the_plain_error(
    http: httpx.AsyncClient, method: str, params: dict[str, Any]
) -> None:
    headers = {"Accept": "text/event-stream", "A2A-Version": "0.3"}
    response = await http.post("/", json=_body(method, params), headers=headers)

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    _assert_task_not_found(response.json())


@pytest.mark.asyncio
async def test_errors_before_the_method_is_known_stay_plain(http: httpx.AsyncClient) -> None:
    response = await http.post(
        "/", content=b"{not json", headers={"Accept": "text/event-stream", "Content-Type": "application/json"}
    )

    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == -32700
