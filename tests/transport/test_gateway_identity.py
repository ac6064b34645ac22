"""The gateway function runs the app under the AWS Lambda Web Adapter, which forwards API
Gateway's request context (with the authorizer's principal) as the ``x-amzn-request-context``
header. Under the adapter the principal comes from it; anywhere else the header is a client's
and is ignored, so nobody can claim another caller's identity with it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import ANONYMOUS, token_principal
from a2a_serverless.config import Settings
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

V1 = {"A2A-Version": "1.0"}


def as_caller(principal: str) -> dict[str, str]:
    context = {"requestId": "req-1", "stage": "v1", "authorizer": {"principalId": principal}}
    return {**V1, "x-amzn-request-context": json.dumps(context)}


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    runtime = build_runtime(Settings(store="memory", auth_mode="apigateway"), store=MemoryTaskStore())
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client
    runtime.queue.shutdown()  # type: ignore[attr-defined]


async def send(http: httpx.AsyncClient, headers: dict[str, str], message_id: str) -> str:
    body = {
        "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"returnImmediately": True},
    }
    response = await http.post("/message:send", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return str(response.json()["task"]["id"])


async def listed(http: httpx.AsyncClient, headers: dict[str, str]) -> set[str]:
    return {t["id"] for t in (await http.get("/tasks", headers=headers)).json()["tasks"]}


@pytest.mark.asyncio
async def test_under_the_web_adapter_the_authorizers_principal_owns_the_task(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LWA_INVOKE_MODE", "response_stream")

    alices = await send(http, as_caller("alice"), "m-1")

    assert await listed(http, as_caller("alice")) == {alices}
    assert await listed(http, as_caller("bob")) == set()
    assert (await http.get(f"/tasks/{alices}", headers=as_caller("bob"))).status_code == 404


@pytest.mark.asyncio
async def test_elsewhere_the_header_is_ignored(http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LWA_INVOKE_MODE", raising=False)
    anonymous = await send(http, V1, "m-1")

    # A client sending the header to claim another identity is still anonymous
    assert await listed(http, as_caller("alice")) == {anonymous}


@pytest.mark.asyncio
async def test_a_token_whose_subject_is_anonymous_does_not_see_the_open_mode_tasks(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LWA_INVOKE_MODE", "response_stream")
    # Given a task sent while the API was Open (the authorizer named everyone "anonymous")
    open_task = await send(http, as_caller(ANONYMOUS), "m-1")
    # When a caller with a token whose sub is "anonymous" comes (as the JWT authorizer names it)
    token_caller = as_caller(token_principal("https://issuer.example/pool", ANONYMOUS))
    # Then it sees none of the anonymous tasks, and its own are its own
    assert await listed(http, token_caller) == set()
    assert (await http.get(f"/tasks/{open_task}", headers=token_caller)).status_code == 404
    its_own = await send(http, token_caller, "m-2")
    assert await listed(http, as_caller(ANONYMOUS)) == {open_task}
    assert await listed(http, token_caller) == {its_own}
