"""The agent card (``a2a_serverless.card``): the agent's fields are the agent's (its card file, or its
executor class's ``card``; the demo's only for the demo), and its security is what the deployment checks.

Executors here are modules written to a temporary directory on ``sys.path``, each with a fresh name."""

from __future__ import annotations

import itertools
import json
import logging
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.card import extended_card, public_card
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.transport.app import create_app
from a2a_serverless.v03.card import merged_card
from a2a_serverless.wiring import build_runtime

BASE = "https://agent.example/v1"
ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_AbCdEf123"
_names = itertools.count()

EXECUTOR = """
from a2a_serverless.execution.api import AgentExecutor


class {cls}(AgentExecutor):
    {body}

    async def execute(self, context, event_queue):
        pass

    async def cancel(self, context, event_queue):
        pass
"""

TRIP_CARD = {
    "name": "Trip planner",
    "description": "Plans trips.",
    "version": "2.1.0",
    "provider": {"organization": "Example Travel", "url": "https://travel.example"},
    "iconUrl": "https://travel.example/icon.png",
    "skills": [{"id": "plan", "name": "Plan a trip", "description": "Plans a trip.", "tags": ["travel"]}],
}


@pytest.fixture
def agent_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """Writes a module with this source; returns its name (new each time, so nothing is cached)."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(source: str) -> str:
        name = f"card_test_agent_{next(_names)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    return write


def executor_with(agent_module: Callable[[str], str], body: str = "pass", cls: str = "MyAgent") -> str:
    return f"{agent_module(EXECUTOR.format(cls=cls, body=body))}:{cls}"


def card_of(**settings: Any) -> dict[str, Any]:
    return public_card(Settings(store="memory", **settings), BASE).to_wire()


def write_card_file(tmp_path: Path, fields: dict[str, Any]) -> str:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(fields))
    return str(path)


# --------------------------------------------------------------------------- the agent's fields


def test_the_demo_agent_has_the_demo_card() -> None:
    card = card_of()
    assert card["name"] == "a2a-serverless demo agent"
    assert [skill["id"] for skill in card["skills"]] == ["echo", "ask"]


def test_another_executor_never_gets_the_demo_card(agent_module: Callable[[str], str]) -> None:
    # Given an executor that says nothing about itself
    card = card_of(executor=executor_with(agent_module))
    # Then its card names its class, and has none of the demo's fields
    assert card["name"] == "MyAgent"
    assert card["description"] == "An A2A agent."
    assert card["version"] == "0.1.0"
    assert card.get("skills", []) == []


def test_the_executor_class_card_is_the_agents(agent_module: Callable[[str], str]) -> None:
    card = card_of(executor=executor_with(agent_module, body=f"card = {TRIP_CARD!r}"))
    assert {k: card[k] for k in TRIP_CARD} == TRIP_CARD
    assert [i["protocolBinding"] for i in card["supportedInterfaces"]][:2] == ["JSONRPC", "HTTP+JSON"]


def test_settings_name_description_and_version_override_the_class_card(agent_module: Callable[[str], str]) -> None:
    executor = executor_with(agent_module, body=f"card = {TRIP_CARD!r}")
    card = card_of(executor=executor, agent_name="Trips (staging)", agent_version="2.1.0-rc1")
    assert (card["name"], card["version"], card["description"]) == ("Trips (staging)", "2.1.0-rc1", "Plans trips.")
    assert [skill["id"] for skill in card["skills"]] == ["plan"]


def test_a_card_file_wins_and_the_executor_is_not_imported(agent_module: Callable[[str], str], tmp_path: Path) -> None:
    # Given an executor whose module cannot even be imported here (its heavy dependency is missing)
    module = agent_module("import a_heavy_llm_library_that_is_not_installed\n")
    # When the card is rendered with a card file
    card = card_of(executor=f"{module}:MyAgent", card_file=write_card_file(tmp_path, TRIP_CARD), agent_name="Ignored")
    # Then the card is the file's, and the module was never imported
    assert {k: card[k] for k in TRIP_CARD} == TRIP_CARD
    assert module not in sys.modules


def test_the_deployment_decides_interfaces_capabilities_and_security_not_the_card(
    agent_module: Callable[[str], str],
) -> None:
    claims = {
        **TRIP_CARD,
        "supportedInterfaces": [
            {"url": "https://elsewhere.example", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": False},
        "securitySchemes": {"none": {"httpAuthSecurityScheme": {"scheme": "Basic"}}},
        "securityRequirements": [{"schemes": {"none": {}}}],
    }
    executor = executor_with(agent_module, body=f"card = {claims!r}")
    card = card_of(executor=executor, auth_mode="apigateway", api_auth="aws_iam")
    assert {i["url"] for i in card["supportedInterfaces"]} == {BASE, BASE + "/"}
    assert card["capabilities"]["streaming"] is True
    assert set(card["securitySchemes"]) == {"sigv4"}
    assert card["securityRequirements"] == [{"schemes": {"sigv4": {}}}]


@pytest.mark.parametrize(
    ("source", "cause"),
    [
        pytest.param("def broken(:\n", "SyntaxError", id="syntax-error"),
        pytest.param("import os\nKEY = os.environ['OPENAI_API_KEY_NOT_SET_HERE']\n", "KeyError", id="missing-setting"),
        pytest.param("import a_library_that_is_not_installed\n", "ModuleNotFoundError", id="missing-module"),
    ],
)
def test_an_executor_that_fails_to_import_is_one_clear_line(
    agent_module: Callable[[str], str], source: str, cause: str
) -> None:
    module = agent_module(source)
    with pytest.raises(ConfigError) as caught:
        card_of(executor=f"{module}:MyAgent")
    message = str(caught.value)
    assert message.startswith(f"executor '{module}:MyAgent': cannot import module '{module}' ({cause}")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("card = ['not', 'a', 'mapping']", "must hold a JSON object", id="not-a-mapping"),
        pytest.param("card = {'skills': [{'id': 'x'}]}", "is not a valid AgentCard", id="invalid-skill"),
    ],
)
def test_an_invalid_class_card_says_whose_it_is(agent_module: Callable[[str], str], body: str, expected: str) -> None:
    executor = executor_with(agent_module, body=body)
    with pytest.raises(ConfigError, match=expected) as caught:
        card_of(executor=executor)
    assert str(caught.value).startswith(f"executor '{executor}': its card")


def test_a_missing_class_is_named(agent_module: Callable[[str], str]) -> None:
    module = agent_module("X = 1\n")
    with pytest.raises(ConfigError, match=f"module '{module}' has no attribute 'MyAgent'"):
        card_of(executor=f"{module}:MyAgent")


@pytest.mark.asyncio
async def test_the_card_endpoint_answers_a_generic_error_and_logs_the_one_line(
    agent_module: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    module = agent_module("raise RuntimeError('boom at import')\n")
    runtime = build_runtime(Settings(store="memory", executor=f"{module}:MyAgent"), store=MemoryTaskStore())
    transport = httpx.ASGITransport(app=create_app(runtime))
    with caplog.at_level(logging.ERROR):
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            response = await client.get("/.well-known/agent-card.json")
    runtime.queue.shutdown()  # type: ignore[attr-defined]
    assert response.status_code == 500
    assert "boom" not in response.text
    (record,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.getMessage() == (
        f"cannot serve the agent card: executor '{module}:MyAgent': cannot import module '{module}'"
        " (RuntimeError: boom at import)"
    )
    assert record.exc_info is None


# ------------------------------------------------------------------------------------ security


def jwt_settings(**extra: Any) -> dict[str, Any]:
    return {"auth_mode": "apigateway", "api_auth": "jwt", "jwt_issuer": ISSUER, **extra}


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({}, id="local-none"),
        pytest.param({"auth_mode": "apigateway", "api_auth": "open"}, id="gateway-open"),
        # Locally (auth_mode none) nothing is checked, whatever the template says the API does.
        pytest.param({"auth_mode": "none", "api_auth": "aws_iam"}, id="local-stack-of-an-iam-template"),
    ],
)
def test_when_everyone_is_let_in_the_card_declares_no_security(settings: dict[str, Any]) -> None:
    card = card_of(**settings)
    assert "securitySchemes" not in card
    assert "securityRequirements" not in card


def test_jwt_is_a_bearer_token_of_the_issuer_and_its_openid_discovery() -> None:
    card = card_of(**jwt_settings())
    assert card["securitySchemes"]["bearer"] == {
        "httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "bearerFormat": "JWT",
            "description": f"A JWT from the OpenID Connect issuer {ISSUER}, for this agent's audience.",
        }
    }
    oidc = card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]
    assert oidc["openIdConnectUrl"] == ISSUER + "/.well-known/openid-configuration"
    # Either one is enough (the same token)
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}, {"schemes": {"oidc": {}}}]


def test_aws_iam_is_a_sigv4_http_scheme() -> None:
    card = card_of(auth_mode="apigateway", api_auth="aws_iam")
    scheme = card["securitySchemes"]["sigv4"]["httpAuthSecurityScheme"]
    assert scheme["scheme"] == "AWS4-HMAC-SHA256"
    assert "Signature Version 4" in scheme["description"]
    assert "execute-api:Invoke" in scheme["description"]
    assert card["securityRequirements"] == [{"schemes": {"sigv4": {}}}]


def test_api_keys_are_a_bearer_scheme() -> None:
    card = card_of(auth_mode="api-key", api_keys={"k": "alice"})
    assert card["securitySchemes"]["apiKey"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"apiKey": {}}}]


def test_v03_clients_read_the_same_schemes() -> None:
    merged = merged_card(card_of(**jwt_settings()))
    assert merged["security"] == [{"bearer": []}, {"oidc": []}]
    assert merged["securitySchemes"]["bearer"]["type"] == "http"
    assert merged["securitySchemes"]["oidc"]["type"] == "openIdConnect"
    iam = merged_card(card_of(auth_mode="apigateway", api_auth="aws_iam"))
    assert iam["securitySchemes"]["sigv4"]["type"] == "http"
    assert iam["securitySchemes"]["sigv4"]["scheme"] == "AWS4-HMAC-SHA256"


def test_a_card_file_cannot_claim_other_security(tmp_path: Path) -> None:
    claims = {"securitySchemes": {"basic": {"httpAuthSecurityScheme": {"scheme": "Basic"}}}}
    card = card_of(auth_mode="apigateway", api_auth="aws_iam", card_file=write_card_file(tmp_path, claims))
    assert set(card["securitySchemes"]) == {"sigv4"}
    extended = extended_card(
        Settings(
            store="memory",
            auth_mode="apigateway",
            api_auth="aws_iam",
            extended_card_file=write_card_file(tmp_path, claims),
        ),
        BASE,
    )
    assert extended is not None
    assert set(extended.to_wire()["securitySchemes"]) == {"sigv4"}


# ------------------------------------------------------------------------------------ settings


@pytest.mark.parametrize(("value", "expected"), [("Open", "open"), ("Jwt", "jwt"), ("AWS_IAM", "aws_iam")])
def test_the_templates_auth_mode_is_read_as_spelled_there(value: str, expected: str) -> None:
    env = {"A2A_STORE": "memory", "A2A_API_AUTH": value, "A2A_JWT_ISSUER": ISSUER}
    assert Settings.from_env(env).api_auth == expected


@pytest.mark.parametrize("issuer", ["", "http://issuer.example/pool"])
def test_jwt_without_an_https_issuer_fails_the_cold_start(issuer: str) -> None:
    with pytest.raises(ConfigError, match=r"A2A_JWT_ISSUER .* is required when A2A_API_AUTH=jwt"):
        Settings.from_env({"A2A_STORE": "memory", "A2A_API_AUTH": "Jwt", "A2A_JWT_ISSUER": issuer})


def test_an_unknown_auth_mode_fails_the_cold_start() -> None:
    with pytest.raises(ConfigError, match="A2A_API_AUTH"):
        Settings.from_env({"A2A_STORE": "memory", "A2A_API_AUTH": "Cognito"})
