"""Responses honour ``Accept``: each binding's JSON type by default (v1.0 REST
``application/a2a+json``, as v1.0.1 recommends; JSON-RPC and v0.3 REST ``application/json``), the
other one to a client that prefers it, successes and errors alike, with ``Vary: Accept``; streams
stay ``text/event-stream``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from a2a_serverless.transport._http import A2A_JSON, JSON, choose_json_type
from testkit.asgi import memory_app

V1 = {"A2A-Version": "1.0"}


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with memory_app() as client:
        yield client


def _send_body(text: str, message_id: str) -> dict[str, Any]:
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"message": message, "configuration": {"returnImmediately": True}}


async def _call(http: httpx.AsyncClient, how: str, outcome: str, accept: str | None) -> httpx.Response:
    """One unary call as ``how`` makes it, that succeeds (a send) or fails (TaskNotFound)."""
    headers: dict[str, str] = {"Accept": accept} if accept is not None else {}
    if how == "v1-rest":
        if outcome == "ok":
            return await http.post("/message:send", json=_send_body("hi", f"m-{accept}"), headers=V1 | headers)
        return await http.get("/tasks/missing", headers=V1 | headers)
    if how == "v1-jsonrpc":
        method, params = (
            ("SendMessage", _send_body("hi", f"m-{accept}")) if outcome == "ok" else ("GetTask", {"id": "x"})
        )
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return await http.post("/", json=body, headers=V1 | headers)
    if how == "v03-rest":
        if outcome == "ok":
            message = {"messageId": f"m3-{accept}", "role": "ROLE_USER", "content": [{"text": "hi"}]}
            return await http.post("/v1/message:send", json={"message": message}, headers=headers)
        return await http.get("/v1/tasks/missing", headers=headers)
    params03: dict[str, Any] = {"id": "x"}
    method03 = "tasks/get"
    if outcome == "ok":
        method03 = "message/send"
        params03 = {
            "message": {
                "kind": "message",
                "messageId": f"m3j-{accept}",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
            },
            "configuration": {"blocking": False},
        }
    return await http.post(
        "/", json={"jsonrpc": "2.0", "id": 1, "method": method03, "params": params03}, headers=headers
    )


DEFAULTS = {"v1-rest": A2A_JSON, "v1-jsonrpc": JSON, "v03-rest": JSON, "v03-jsonrpc": JSON}


@pytest.mark.asyncio
@pytest.mark.parametrize("outcome", ["ok", "error"])
@pytest.mark.parametrize("how", list(DEFAULTS))
@pytest.mark.parametrize(
    ("accept", "wanted"),
    [
        pytest.param(None, "default", id="no-accept"),
        pytest.param("*/*", "default", id="anything"),
        pytest.param("application/json", JSON, id="json-only"),
        pytest.param("application/a2a+json", A2A_JSON, id="a2a-json-only"),
        pytest.param("application/a2a+json, application/json", "default", id="both"),
        pytest.param("application/a2a+json;q=0.4, application/json;q=0.9", JSON, id="json-preferred"),
        pytest.param("application/json;q=0.1, */*", A2A_JSON, id="json-disliked"),
        pytest.param("text/html", "default", id="neither"),
    ],
)
async def test_json_answers_follow_accept(
    http: httpx.AsyncClient, how: str, outcome: str, accept: str | None, wanted: str
) -> None:
    response = await _call(http, how, outcome, accept)

    expected = DEFAULTS[how] if wanted == "default" else wanted
    if outcome == "ok":
        assert response.status_code == 200, response.text
    else:
        assert response.status_code >= 400 or "error" in response.json(), response.text
    assert response.headers["content-type"] == expected
    assert "accept" in response.headers["vary"].lower()
    response.json()  # the body is JSON whatever the label


@pytest.mark.asyncio
@pytest.mark.parametrize("accept", ["application/json", "application/a2a+json", "*/*"])
async def test_streams_stay_event_streams(http: httpx.AsyncClient, accept: str) -> None:
    body = _send_body("hello", f"m-stream-{accept}")
    async with http.stream("POST", "/message:stream", json=body, headers=V1 | {"Accept": accept}) as response:
        await response.aread()
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")


@pytest.mark.asyncio
async def test_the_card_is_json_and_varies_by_accept(http: httpx.AsyncClient) -> None:
    plain = await http.get("/.well-known/agent-card.json")
    assert plain.headers["content-type"] == JSON
    assert "accept" in plain.headers["vary"].lower()


@pytest.mark.parametrize(
    ("accept", "default", "chosen"),
    [
        ("", A2A_JSON, A2A_JSON),
        ("application/*", JSON, JSON),
        ("application/*;q=0.5, application/a2a+json", JSON, A2A_JSON),
        ("APPLICATION/JSON", A2A_JSON, JSON),
        ("application/json; charset=utf-8; q=0.8, application/a2a+json; q=0.3", A2A_JSON, JSON),
        ("application/json;q=oops", A2A_JSON, A2A_JSON),
        ("garbage, ;;, application/json", A2A_JSON, JSON),
        ("application/a2a+json;q=0, application/json;q=0", A2A_JSON, A2A_JSON),
        ("*/*;q=0.2, application/a2a+json;q=0.1", A2A_JSON, JSON),
    ],
)
def test_choice_by_weight_and_specificity(accept: str, default: str, chosen: str) -> None:
    assert choose_json_type(accept, default) == chosen
