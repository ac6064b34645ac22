"""The merged agent card (``a2a_serverless.v03.card.merged_card``), read by both SDK card parsers.

* The v0.3 SDK client's model (``a2a.compat.v0_3.types.AgentCard``) must validate it and find the
  v0.3 endpoint, version, flag, requirements and OpenAPI-style schemes; apart from the deliberate
  differences it reads what the reference SDK's ``to_compat_agent_card`` makes of the same card.
* The v1.x SDK's parser (``a2a.client.card_resolver.parse_agent_card``) must read back exactly the
  v1.0 card, security schemes of every type included.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as v1pb
from v03_strategies import parse_strict, pb_dict

from a2a_serverless.models import AgentCard
from a2a_serverless.v03.card import merged_card

V1_JSONRPC = {"url": "https://h/a2a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
V1_REST = {"url": "https://h/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
V03_JSONRPC = {"url": "https://h/a2a/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
V03_REST = {"url": "https://h/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}

SCHEMES: dict[str, Any] = {
    "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT", "description": "d"}},
    "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
    "code": {
        "oauth2SecurityScheme": {
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": "https://idp/auth",
                    "tokenUrl": "https://idp/token",
                    "scopes": {"read": "Read"},
                    "pkceRequired": True,
                }
            },
            "oauth2MetadataUrl": "https://idp/.well-known/oauth-authorization-server",
        }
    },
    "machine": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://idp/token"}}}},
    "legacy": {"oauth2SecurityScheme": {"flows": {"implicit": {"refreshUrl": "https://idp/r"}}}},
    "password": {"oauth2SecurityScheme": {"flows": {"password": {"scopes": {"a": "b"}}}}},
    "device": {
        "oauth2SecurityScheme": {
            "flows": {"deviceCode": {"deviceAuthorizationUrl": "https://idp/device", "tokenUrl": "https://idp/token"}}
        }
    },
    "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://idp/.well-known/openid-configuration"}},
    "mtls": {"mtlsSecurityScheme": {}},
}


def card(interfaces: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "Agent",
        "description": "Does things",
        "version": "1.2.3",
        "supportedInterfaces": interfaces,
        "provider": {"url": "https://acme", "organization": "Acme"},
        "documentationUrl": "https://docs",
        "iconUrl": "https://icon",
        "capabilities": {
            "streaming": True,
            "pushNotifications": True,
            "extendedAgentCard": True,
            "extensions": [{"uri": "urn:ext", "required": True, "params": {"p": 1}}, {"description": "no uri"}],
        },
        "securitySchemes": SCHEMES,
        "securityRequirements": [{"schemes": {"bearer": {}}}, {"schemes": {"code": {"list": ["read"]}, "key": {}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {"id": "s1", "name": "One", "description": "first", "tags": ["a"], "examples": ["x"]},
            {
                "id": "s2",
                "name": "Two",
                "description": "second",
                "securityRequirements": [{"schemes": {"oidc": {"list": ["openid"]}}}],
            },
        ],
        "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}],
    }
    base.update(fields)
    # What the transport passes: the model's ProtoJSON.
    return AgentCard.model_validate(base).to_wire()


FULL = card([V1_JSONRPC, V1_REST, V03_JSONRPC, V03_REST])


def test_v03_client_reads_the_legacy_fields() -> None:
    merged = merged_card(FULL)
    parsed = v03.AgentCard.model_validate(merged)
    assert parsed.protocol_version == "0.3.0"
    assert parsed.url == "https://h/a2a/"
    assert parsed.preferred_transport == "JSONRPC"
    assert parsed.additional_interfaces == [
        v03.AgentInterface(url="https://h/a2a/", transport="JSONRPC"),
        v03.AgentInterface(url="https://h/a2a/rest", transport="HTTP+JSON"),
    ]
    assert parsed.supports_authenticated_extended_card is True
    assert parsed.security == [{"bearer": []}, {"code": ["read"], "key": []}]
    assert [s.tags for s in parsed.skills] == [["a"], []]
    assert parsed.skills[1].security == [{"oidc": ["openid"]}]
    assert parsed.capabilities.streaming is True
    assert [e.uri for e in parsed.capabilities.extensions or []] == ["urn:ext", ""]
    assert parsed.security_schemes is not None
    schemes = {name: scheme.root for name, scheme in parsed.security_schemes.items()}
    assert schemes["bearer"] == v03.HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT", description="d")
    assert schemes["key"] == v03.APIKeySecurityScheme(in_=v03.In.header, name="X-API-Key")
    assert isinstance(schemes["code"], v03.OAuth2SecurityScheme)
    assert schemes["code"].flows.authorization_code == v03.AuthorizationCodeOAuthFlow(
        authorization_url="https://idp/auth", token_url="https://idp/token", scopes={"read": "Read"}
    )
    assert schemes["code"].oauth2_metadata_url == "https://idp/.well-known/oauth-authorization-server"
    assert isinstance(schemes["oidc"], v03.OpenIdConnectSecurityScheme)
    assert isinstance(schemes["mtls"], v03.MutualTLSSecurityScheme)
    assert json.loads(json.dumps(merged)) == merged


def test_v03_client_reads_what_the_reference_conversion_makes() -> None:
    """Apart from two choices: ``protocolVersion`` "0.3.0" (the v0.3 spelling; the reference copies
    the interface's "0.3") and ``additionalInterfaces`` listing the preferred one too (v0.3 says it
    SHOULD; the reference lists only the others)."""
    ours = v03.AgentCard.model_validate(merged_card(FULL))
    reference = conversions.to_compat_agent_card(parse_strict(FULL, v1pb.AgentCard()))
    assert reference.protocol_version == "0.3"
    assert reference.additional_interfaces == ours.additional_interfaces[1:]  # type: ignore[index]
    update = {"protocol_version": "0.3", "additional_interfaces": reference.additional_interfaces}
    assert ours.model_copy(update=update) == reference


def test_v1_client_reads_the_v1_card_unchanged() -> None:
    parsed = parse_agent_card(copy.deepcopy(merged_card(FULL)))
    assert pb_dict(parsed) == pb_dict(parse_strict(FULL, v1pb.AgentCard()))


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_each_scheme_survives_the_v1_parser(name: str) -> None:
    single = card([V03_JSONRPC, V1_JSONRPC], securitySchemes={name: SCHEMES[name]}, securityRequirements=[])
    parsed = parse_agent_card(copy.deepcopy(merged_card(single)))
    assert pb_dict(parsed.security_schemes[name]) == pb_dict(parse_strict(SCHEMES[name], v1pb.SecurityScheme()))


def test_our_own_model_reads_the_merged_card() -> None:
    assert AgentCard.model_validate(merged_card(FULL)).to_wire() == FULL


def test_the_input_is_not_changed() -> None:
    before = copy.deepcopy(FULL)
    merged_card(FULL)
    assert before == FULL


def test_v1_fields_win_and_schemes_carry_both_forms() -> None:
    merged = merged_card(FULL)
    assert {k: merged[k] for k in FULL} == FULL | {
        "capabilities": merged["capabilities"],
        "securitySchemes": merged["securitySchemes"],
        "skills": merged["skills"],
    }
    assert merged["securitySchemes"]["key"] == {
        "apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"},
        "type": "apiKey",
        "location": "header",
        "name": "X-API-Key",
        "in": "header",
    }
    assert merged["securitySchemes"]["mtls"] == {"mtlsSecurityScheme": {}, "type": "mutualTLS"}
    assert merged["capabilities"]["extendedAgentCard"] is True


def test_the_first_v03_interface_is_the_preferred_one() -> None:
    merged = merged_card(card([V1_JSONRPC, V1_REST, V03_REST, V03_JSONRPC]))
    assert (merged["url"], merged["preferredTransport"]) == ("https://h/a2a/rest", "HTTP+JSON")
    assert merged["additionalInterfaces"] == [
        {"url": "https://h/a2a/rest", "transport": "HTTP+JSON"},
        {"url": "https://h/a2a/", "transport": "JSONRPC"},
    ]


def test_a_minimal_card_gets_the_required_v03_fields() -> None:
    minimal = AgentCard.model_validate(
        {"name": "n", "description": "d", "version": "1", "capabilities": {}, "supportedInterfaces": [V03_JSONRPC]}
    ).to_wire()
    merged = merged_card(minimal)
    assert "supportsAuthenticatedExtendedCard" not in merged
    assert "security" not in merged
    assert v03.AgentCard.model_validate(merged).skills == []
    assert pb_dict(parse_agent_card(copy.deepcopy(merged))) == pb_dict(parse_strict(minimal, v1pb.AgentCard()))


def test_extended_card_flag_only_when_true() -> None:
    for flag in (False, None):
        capabilities = {} if flag is None else {"extendedAgentCard": flag}
        assert "supportsAuthenticatedExtendedCard" not in merged_card(card([V03_JSONRPC], capabilities=capabilities))


@pytest.mark.parametrize(
    ("version", "legacy"),
    [("0.3", True), ("0.3.0", True), ("0.3.5", True), ("0.4", True), ("0.2", False), ("1.0", False), ("x", False)],
)
def test_which_interfaces_are_v03(version: str, legacy: bool) -> None:
    wire = card([V1_JSONRPC, {**V03_JSONRPC, "protocolVersion": version}])
    merged = merged_card(wire)
    assert ("url" in merged) is legacy
    if not legacy:
        assert merged == wire
