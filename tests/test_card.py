"""The agent card's security (``a2a_serverless.card``): what the deployment checks, in both card forms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_serverless.card import extended_card, public_card
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.v03.card import merged_card

BASE = "https://agent.example/v1"
ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_AbCdEf123"


def card_of(**settings: Any) -> dict[str, Any]:
    return public_card(Settings(store="memory", **settings), BASE).to_wire()


def write_card_file(tmp_path: Path, fields: dict[str, Any]) -> str:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(fields))
    return str(path)


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
