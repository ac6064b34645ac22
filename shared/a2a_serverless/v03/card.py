"""One agent card for v1.0 and v0.3 clients: the v1.0 card plus the v0.3 top-level fields.

v0.3 clients cannot read ``supportedInterfaces``; they find the endpoint in ``url`` +
``preferredTransport`` + ``additionalInterfaces``, the flag in ``supportsAuthenticatedExtendedCard``,
requirements in ``security`` and schemes in the OpenAPI form (``{"type": "http", ...}``). As the
reference SDK's ``agent_card_to_dict`` does, the v0.3 form of the card is merged into the v1.0 one
where a key is absent, recursively (objects key by key, arrays item by item), so the v1.0 fields
always win and each client finds its own. It is the card served to a caller that states no
``A2A-Version`` (or 0.x); a 1.x caller gets the v1.0 card alone (``transport/app.py``).

Security schemes get both forms side by side: ``{"httpAuthSecurityScheme": {...}, "type": "http",
"scheme": ...}``. The v0.3 fields carry every v1.0 field of the scheme too (the v0.3 parser ignores
what it does not know), because the v1.x SDK's card parser, on seeing ``type``, rebuilds the v1.0
scheme from the flat fields alone: so it reads back the very same scheme, device-code flows and
``pkceRequired`` included.
"""

from __future__ import annotations

import copy
import re

from ._common import Json

__all__ = ["LEGACY_CARD_PROTOCOL_VERSION", "merged_card"]

LEGACY_CARD_PROTOCOL_VERSION = "0.3.0"

_LEGACY_VERSION = re.compile(r"0\.(\d+)(\.\d+)?")
_SCHEME_TYPES = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}
_API_KEY_LOCATIONS = ("cookie", "header", "query")
# Fields v0.3 requires in each OAuth flow that v1.0 may omit (its defaults).
_FLOW_DEFAULTS: dict[str, Json] = {
    "authorizationCode": {"scopes": {}},
    "clientCredentials": {"scopes": {}},
    "implicit": {"authorizationUrl": "", "scopes": {}},
    "password": {"tokenUrl": "", "scopes": {}},
}


def merged_card(card_wire: Json) -> Json:
    """The v1.0 card (``AgentCard.to_wire()``) with the v0.3 fields added where absent; the card
    itself when none of its interfaces is v0.3."""
    legacy = _legacy_fields(card_wire)
    if legacy is None:
        return card_wire
    return _merge(copy.deepcopy(card_wire), legacy)


def _legacy_fields(card_wire: Json) -> Json | None:
    """The v0.3 form of the card (what the merge adds), or None without a v0.3 interface."""
    interfaces = [i for i in card_wire.get("supportedInterfaces", []) if _is_legacy(i.get("protocolVersion", ""))]
    if not interfaces:
        return None
    capabilities = card_wire.get("capabilities", {})
    out: Json = {
        "protocolVersion": LEGACY_CARD_PROTOCOL_VERSION,
        "url": interfaces[0]["url"],
        "preferredTransport": interfaces[0]["protocolBinding"],
        "additionalInterfaces": [{"url": i["url"], "transport": i["protocolBinding"]} for i in interfaces],
        # v0.3 requires an extension's uri, which ProtoJSON omits when empty.
        "capabilities": {"extensions": [{"uri": "", "required": False} for _ in capabilities.get("extensions", [])]},
        "securitySchemes": {name: _scheme(s) for name, s in card_wire.get("securitySchemes", {}).items()},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [_skill(s) for s in card_wire.get("skills", [])],
    }
    if card_wire.get("securityRequirements"):
        out["security"] = [_requirement(r) for r in card_wire["securityRequirements"]]
    if capabilities.get("extendedAgentCard") is True:
        out["supportsAuthenticatedExtendedCard"] = True
    return out


def _is_legacy(version: str) -> bool:
    """0.3 and later 0.x (the reference SDK's ``is_legacy_version``: 0.3 <= v < 1.0)."""
    match = _LEGACY_VERSION.fullmatch(version)
    return match is not None and int(match.group(1)) >= 3


def _requirement(requirement: Json) -> dict[str, list[str]]:
    """``{"schemes": {name: {"list": scopes}}}`` -> ``{name: scopes}``."""
    return {name: scopes.get("list", []) for name, scopes in requirement.get("schemes", {}).items()}


def _skill(skill: Json) -> Json:
    out: Json = {"tags": []}  # required in v0.3; ProtoJSON omits it when empty
    if skill.get("securityRequirements"):
        out["security"] = [_requirement(r) for r in skill["securityRequirements"]]
    return out


def _scheme(scheme: Json) -> Json:
    """The OpenAPI form (v0.3) of a v1.0 ``SecurityScheme``: every v1.0 field of the member plus
    ``type``, and what v0.3 spells or requires differently."""
    for member, kind in _SCHEME_TYPES.items():
        if member in scheme:
            fields: Json = dict(scheme[member])
            out: Json = {"type": kind, **fields}
            if kind == "apiKey":
                location = str(fields.get("location", ""))
                out["in"] = location.lower() if location.lower() in _API_KEY_LOCATIONS else location
            elif kind == "oauth2":
                flows = fields.get("flows", {})
                out["flows"] = {name: {**_FLOW_DEFAULTS.get(name, {}), **flow} for name, flow in flows.items()}
            return out
    return {}


def _merge(target: Json, extra: Json) -> Json:
    """Add ``extra`` into ``target`` where keys are absent (the reference SDK's merge)."""
    for key, value in extra.items():
        if key not in target:
            target[key] = value
        elif isinstance(value, dict) and isinstance(target[key], dict):
            _merge(target[key], value)
        elif isinstance(value, list) and isinstance(target[key], list):
            for mine, theirs in zip(target[key], value, strict=False):
                if isinstance(mine, dict) and isinstance(theirs, dict):
                    _merge(mine, theirs)
    return target
