"""Who may call, on the template as CloudFormation receives it (SAM-translated offline): protected unless
Open is chosen, and then said plainly; Jwt refused without an issuer and an audience; every function told
the auth mode, so the agent card declares what the API checks."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cloudformation import Deployed

from a2a_serverless.card import public_card
from a2a_serverless.config import Settings

ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_AbCdEf123"
AUDIENCE = "3n4b5urk1ft4fl3mg5e62d9ado"
MODES = ["Open", "Jwt", "AWS_IAM"]


def _parameters(translated: dict[str, Any], **chosen: str) -> dict[str, str]:
    defaults = {k: str(v["Default"]) for k, v in translated["Parameters"].items() if "Default" in v}
    return {**defaults, **chosen}


def _holds(expression: Any, parameters: dict[str, str], conditions: dict[str, Any]) -> bool:
    """A condition (or rule assertion) of Fn::Equals / Fn::Not / Condition on parameter values."""
    if isinstance(expression, dict) and set(expression) == {"Condition"}:
        return _holds(conditions[expression["Condition"]], parameters, conditions)
    ((function, args),) = expression.items()
    if function == "Fn::Not":
        return not _holds(args[0], parameters, conditions)
    if function == "Fn::Equals":
        left, right = (parameters[a["Ref"]] if isinstance(a, dict) else str(a) for a in args)
        return bool(left == right)
    raise AssertionError(f"function {function} not understood here")


def _refusals(translated: dict[str, Any], parameters: dict[str, str]) -> list[str]:
    """What CloudFormation's Rules say when they refuse these parameter values (empty: accepted)."""
    refusals: list[str] = []
    for rule in translated.get("Rules", {}).values():
        if "RuleCondition" in rule and not _holds(rule["RuleCondition"], parameters, {}):
            continue
        refusals += [a["AssertDescription"] for a in rule["Assertions"] if not _holds(a["Assert"], parameters, {})]
    return refusals


def _route_security(translated: dict[str, Any]) -> set[str]:
    (api,) = [r for r in translated["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    return {
        name
        for path, ops in api["Properties"]["Body"]["paths"].items()
        if not path.startswith(("/.well-known/", "/_a2a/delegations/"))  # public; a push carries its token
        for op in ops.values()
        for requirement in op["security"]
        for name in requirement
    }


def test_a_deploy_that_does_not_choose_is_protected_by_iam(translated: dict[str, Any]) -> None:
    # Given the template's defaults (sam deploy without --parameter-overrides AuthMode=...)
    parameters = _parameters(translated)
    # Then the API checks SigV4 on every route but the public card and keys, and nothing says it is public
    assert parameters["AuthMode"] == "AWS_IAM"
    assert _route_security(translated) == {"AWS_IAM"}
    warning = translated["Outputs"]["PublicApiWarning"]
    assert not _holds({"Condition": warning["Condition"]}, parameters, translated["Conditions"])
    assert _refusals(translated, parameters) == []


@pytest.mark.parametrize("mode", MODES)
def test_only_open_has_an_output_saying_the_api_is_public(translated: dict[str, Any], mode: str) -> None:
    warning = translated["Outputs"]["PublicApiWarning"]
    parameters = _parameters(translated, AuthMode=mode)
    assert _holds({"Condition": warning["Condition"]}, parameters, translated["Conditions"]) == (mode == "Open")
    assert "PUBLIC" in warning["Value"]
    assert "anyone on the internet" in warning["Value"]


@pytest.mark.parametrize(
    ("chosen", "refused_for"),
    [
        pytest.param({}, ["JwtIssuer", "JwtAudience"], id="neither"),
        pytest.param({"JwtIssuer": ISSUER}, ["JwtAudience"], id="no-audience"),
        pytest.param({"JwtAudience": AUDIENCE}, ["JwtIssuer"], id="no-issuer"),
        pytest.param({"JwtIssuer": ISSUER, "JwtAudience": AUDIENCE}, [], id="both"),
    ],
)
def test_jwt_is_refused_without_an_issuer_and_an_audience(
    translated: dict[str, Any], chosen: dict[str, str], refused_for: list[str]
) -> None:
    refusals = _refusals(translated, _parameters(translated, AuthMode="Jwt", **chosen))
    assert [next(p for p in ("JwtIssuer", "JwtAudience") if p in r) for r in refusals] == refused_for
    assert all(r.startswith("AuthMode Jwt needs") for r in refusals)


@pytest.mark.parametrize("mode", ["Open", "AWS_IAM"])
def test_other_modes_need_no_issuer_nor_audience(translated: dict[str, Any], mode: str) -> None:
    assert _refusals(translated, _parameters(translated, AuthMode=mode)) == []


@pytest.mark.parametrize(
    ("issuer", "allowed"),
    [
        pytest.param("", True, id="empty"),
        pytest.param(ISSUER, True, id="https"),
        pytest.param("http://issuer.example/pool", False, id="http"),
        pytest.param("cognito-idp.us-east-1.amazonaws.com/pool", False, id="no-scheme"),
        pytest.param("https://issuer.example/a|b", False, id="principal-separator"),
    ],
)
def test_the_issuer_must_be_an_https_url(translated: dict[str, Any], issuer: str, allowed: bool) -> None:
    pattern = translated["Parameters"]["JwtIssuer"]["AllowedPattern"]
    assert (re.fullmatch(pattern, issuer) is not None) == allowed


def test_every_function_is_told_the_auth_mode_and_the_issuer(translated: dict[str, Any]) -> None:
    functions = {k: v for k, v in translated["Resources"].items() if v["Type"] == "AWS::Lambda::Function"}
    assert {"AgentCardFunction", "GetExtendedCardFunction", "GatewayFunction"} <= set(functions)
    for name, function in functions.items():
        env = function["Properties"]["Environment"]["Variables"]
        assert env["A2A_API_AUTH"] == {"Ref": "AuthMode"}, name
        assert env["A2A_JWT_ISSUER"] == {"Ref": "JwtIssuer"}, name
    authorizer = functions["AuthorizerFunction"]["Properties"]["Environment"]["Variables"]
    assert authorizer["A2A_JWT_AUDIENCE"] == {"Ref": "JwtAudience"}


@pytest.mark.parametrize(
    ("mode", "schemes"),
    [
        pytest.param("Open", set(), id="open"),
        pytest.param("Jwt", {"bearer", "oidc"}, id="jwt"),
        pytest.param("AWS_IAM", {"sigv4"}, id="iam"),
    ],
)
def test_the_card_functions_declare_what_the_deployed_mode_checks(
    translate: Callable[[dict[str, str]], dict[str, Any]], mode: str, schemes: set[str]
) -> None:
    # Given the card function's environment as CloudFormation resolves it for this AuthMode
    chosen = {"AuthMode": mode, "JwtIssuer": ISSUER, "JwtAudience": AUDIENCE}
    translated = translate(chosen)
    parameters = _parameters(translated, **chosen)
    variables = translated["Resources"]["AgentCardFunction"]["Properties"]["Environment"]["Variables"]
    auth = {name: variables[name] for name in ("A2A_AUTH_MODE", "A2A_API_AUTH", "A2A_JWT_ISSUER")}
    env = {k: parameters[v["Ref"]] if isinstance(v, dict) else v for k, v in auth.items()} | {"A2A_STORE": "memory"}
    # When it renders the card
    card = public_card(Settings.from_env(env), "https://api.example/v1").to_wire()
    # Then the card's schemes are the mode's, and every one is required as an alternative
    assert set(card.get("securitySchemes", {})) == schemes
    assert {name for r in card.get("securityRequirements", []) for name in r["schemes"]} == schemes


def test_the_gateway_is_ready_when_it_listens_without_rendering_the_card(translated: dict[str, Any]) -> None:
    env = Deployed(translated).resources["GatewayFunction"]["Properties"]["Environment"]["Variables"]
    assert env["AWS_LWA_READINESS_CHECK_PROTOCOL"] == "tcp"
    assert "AWS_LWA_READINESS_CHECK_PATH" not in env


def test_the_repositorys_samconfig_does_not_choose_open() -> None:
    samconfig = tomllib.loads((Path(__file__).resolve().parents[2] / "samconfig.toml").read_text())
    overrides = samconfig["default"]["deploy"]["parameters"]["parameter_overrides"]
    chosen = dict(re.findall(r'(\w+)="([^"]*)"', overrides))
    assert chosen.get("AuthMode", "AWS_IAM") == "AWS_IAM"
