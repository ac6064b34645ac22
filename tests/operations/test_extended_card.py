"""GetExtendedAgentCard on both bindings: declared only with an extended card file, served only to
authenticated callers (401 otherwise), with the extra fields the file adds."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

V1 = {"A2A-Version": "1.0"}
EXTRA_SKILL = {"id": "secret-skill", "name": "Secret", "description": "Only for signed-in callers", "tags": ["x"]}


@pytest_asyncio.fixture
async def http(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    card_file = tmp_path / "extended.json"
    card_file.write_text(json.dumps({"name": "Extended agent", "skills": [EXTRA_SKILL]}))
    settings = Settings(
        store="memory", auth_mode="api-key", api_keys={"k-alice": "alice"}, extended_card_file=str(card_file)
    )
    runtime = build_runtime(settings, store=MemoryTaskStore())
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=V1) as client:
        yield client
    runtime.queue.shutdown()  # type: ignore[attr-defined]


async def extended(http: httpx.AsyncClient, binding: str, headers: dict[str, str]) -> tuple[int, Any]:
    if binding == "rest":
        response = await http.get("/extendedAgentCard", headers=headers)
    else:
        body = {"jsonrpc": "2.0", "id": 7, "method": "GetExtendedAgentCard", "params": {}}
        response = await http.post("/", json=body, headers=headers)
    return response.status_code, response.json()


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", ["rest", "jsonrpc"])
async def test_an_authenticated_caller_gets_the_extended_card(http: httpx.AsyncClient, binding: str) -> None:
    status, body = await extended(http, binding, {"Authorization": "Bearer k-alice"})

    assert status == 200
    card = body if binding == "rest" else body["result"]
    assert card["name"] == "Extended agent"
    assert [s["id"] for s in card["skills"]] == ["secret-skill"]
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC", "HTTP+JSON"}
    # and the public card declares that it exists
    public = (await http.get("/.well-known/agent-card.json")).json()
    assert public["capabilities"]["extendedAgentCard"] is True


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", ["rest", "jsonrpc"])
@pytest.mark.parametrize(
    "headers",
    [pytest.param({}, id="no-credentials"), pytest.param({"Authorization": "Bearer wrong"}, id="unknown-key")],
)
async def test_an_unauthenticated_caller_is_refused(
    http: httpx.AsyncClient, binding: str, headers: dict[str, str]
) -> None:
    status, body = await extended(http, binding, headers)

    assert "Secret" not in json.dumps(body)
    if binding == "rest":
        assert status == 401
        assert body["error"]["code"] == 401
        assert body["error"]["status"] == "UNAUTHENTICATED"
    else:
        assert status == 401
        assert body["id"] == 7
        assert body["error"]["code"] == -32600
        assert body["error"]["data"][0]["reason"] == "UNAUTHENTICATED"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("{not json", "cannot read agent card file", id="not-json"),
        pytest.param("[1, 2]", "must hold a JSON object", id="not-an-object"),
        pytest.param('{"skills": [{"id": "s"}]}', "is not a valid AgentCard", id="invalid-skill"),
    ],
)
@pytest.mark.parametrize("variable", ["A2A_CARD_FILE", "A2A_EXTENDED_CARD_FILE"])
def test_a_bad_card_file_fails_the_cold_start(tmp_path: Path, variable: str, content: str, expected: str) -> None:
    card_file = tmp_path / "card.json"
    card_file.write_text(content)

    with pytest.raises(ConfigError, match=expected):
        Settings.from_env({"A2A_STORE": "memory", variable: str(card_file)})


def test_a_partial_extended_card_file_is_valid_at_cold_start(tmp_path: Path) -> None:
    card_file = tmp_path / "card.json"
    card_file.write_text(json.dumps({"skills": [EXTRA_SKILL]}))

    assert Settings.from_env({"A2A_STORE": "memory", "A2A_EXTENDED_CARD_FILE": str(card_file)}).extended_card_file
