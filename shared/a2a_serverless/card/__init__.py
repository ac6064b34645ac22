"""The agent cards we publish (A2A specification, section 8 Agent Discovery: The Agent Card): the agent's own fields,
and what the deployment decides.

The agent's fields (name, description, version, skills, provider, iconUrl, ...) come from, lowest first:

1. a fallback: the executor's class name, a generic description, version 0.1.0, no skills;
2. the executor's ``card`` class attribute (:attr:`~a2a_serverless.execution.api.AgentExecutor.card`),
   read only when there is no card file; the demo agent's card is its own;
3. ``A2A_AGENT_NAME``, ``A2A_AGENT_DESCRIPTION``, ``A2A_AGENT_VERSION``, when set;
4. the card file (``A2A_CARD_FILE``): it wins, and the executor's module is then never imported here.

The deployment decides the rest: ``supportedInterfaces`` (the agent's public base URL), the capabilities
the server implements, and ``securitySchemes`` with ``securityRequirements``, which say what the auth mode
checks (a card file's own are replaced: a card must not promise what the deployment does not do).

The base URL is the configured one (``A2A_PUBLIC_URL``) or the one API Gateway says a request came to;
a local server's unsigned card may name the request's own. A signed card is never built from the
request's ``Host`` (:func:`a2a_serverless.transport._http.base_url`): without a URL it can trust, the
agent refuses to sign (:data:`PUBLIC_URL_NEEDED`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..config import ConfigError, Settings, card_fields
from ..execution._path import executor_target
from ..json_types import Json
from ..models import AgentCapabilities, AgentCard, AgentInterface
from ..push import JWKS_PATH
from ..versions import ProtocolVersion

if TYPE_CHECKING:
    from .signing import CardSigner

__all__ = ["PUBLIC_URL_NEEDED", "card_etag", "executor_card", "extended_card", "public_card", "signed_card"]

PUBLIC_URL_NEEDED = (
    "a signed agent card needs A2A_PUBLIC_URL, the agent's public base URL (on AWS, the template's"
    " PublicUrl, or API Gateway's own URL): it is never taken from a request's Host header"
)


def _interfaces(base_url: str) -> list[AgentInterface]:
    """Both bindings in both versions, 1.0 first (the first entry is the preferred one). The v0.3
    REST client adds ``/v1/...`` to its URL itself, so both REST entries share the base URL."""
    base = base_url.rstrip("/")
    return [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for version in (ProtocolVersion.V1_0, ProtocolVersion.V0_3)
        for binding, url in (("JSONRPC", base + "/"), ("HTTP+JSON", base))
    ]


def public_card(settings: Settings, base_url: str) -> AgentCard:
    """The card served at ``/.well-known/agent-card.json``; interface URLs point at ``base_url``.
    Raises ``ConfigError`` when the executor's module cannot be imported or its card is invalid."""
    fields: Json = {
        "name": settings.executor.partition(":")[2],
        "description": "An A2A agent.",
        "version": "0.1.0",
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [],
    }
    if not settings.card_file:
        fields.update(executor_card(settings.executor))
    named = {"name": settings.agent_name, "description": settings.agent_description, "version": settings.agent_version}
    fields.update({key: value for key, value in named.items() if value})
    if settings.card_file:
        fields.update(settings.load_card_file(settings.card_file))
    fields["supportedInterfaces"] = [i.to_wire() for i in _interfaces(base_url)]
    capabilities = AgentCapabilities.model_validate(fields.get("capabilities") or {})
    fields["capabilities"] = capabilities.model_copy(
        update={
            "streaming": settings.streaming,
            "push_notifications": settings.push_notifications,
            "extended_agent_card": bool(settings.extended_card_file) or None,
        }
    ).to_wire()
    fields["securitySchemes"], fields["securityRequirements"] = _security(settings)
    return AgentCard.model_validate(fields)


def extended_card(settings: Settings, base_url: str) -> AgentCard | None:
    """The extended card (public card overlaid with the extended card file), or None."""
    if not settings.extended_card_file:
        return None
    base = public_card(settings, base_url).to_wire()
    overlay = settings.load_card_file(settings.extended_card_file)
    for decided in ("supportedInterfaces", "capabilities", "securitySchemes", "securityRequirements"):
        overlay.pop(decided, None)
    return AgentCard.model_validate({**base, **overlay})


def executor_card(path: str) -> Json:
    """The ``card`` fields of the executor class at ``path`` (``package.module:Class``), checked; ``{}``
    without any. The class is imported, not created. Raises ``ConfigError`` with one line naming the path
    and the cause, whatever the module raised on import (a SyntaxError, a KeyError for a missing setting)."""
    card = getattr(executor_target(path), "card", None)
    return {} if card is None else card_fields(card, f"executor {path!r}: its card")


def _security(settings: Settings) -> tuple[Json, list[Json]]:
    """``securitySchemes`` and ``securityRequirements`` for what this deployment checks: nothing when
    everyone is let in (``auth_mode=none``, or API Gateway with AuthMode Open)."""
    if settings.auth_mode == "api-key":
        bearer = {"scheme": "Bearer", "description": "An API key issued for this agent, as a bearer token."}
        return {"apiKey": {"httpAuthSecurityScheme": bearer}}, [_requirement("apiKey")]
    if settings.auth_mode != "apigateway" or settings.api_auth == "open":
        return {}, []
    if settings.api_auth == "jwt":
        issuer = settings.jwt_issuer.rstrip("/")
        token = {
            "scheme": "Bearer",
            "bearerFormat": "JWT",
            "description": f"A JWT from the OpenID Connect issuer {issuer}, for this agent's audience.",
        }
        discovery = {
            "openIdConnectUrl": issuer + "/.well-known/openid-configuration",
            "description": "The same token, described by its issuer's discovery document.",
        }
        # Alternatives (either one is enough): the same bearer token, told two ways.
        schemes = {"bearer": {"httpAuthSecurityScheme": token}, "oidc": {"openIdConnectSecurityScheme": discovery}}
        return schemes, [_requirement("bearer"), _requirement("oidc")]
    # AWS_IAM. A2A's schemes (OpenAPI 3.2's) have no SigV4 type. SigV4 is an HTTP authentication
    # scheme (`Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`), so
    # an http scheme names it exactly, and a client that cannot sign sees a scheme it does not know.
    # API Gateway's own OpenAPI export uses an apiKey scheme in the Authorization header plus an
    # x-amazon-apigateway-authtype extension the card cannot carry; without the extension that would
    # tell generic clients to send a fixed key there, which never works.
    sigv4 = {
        "scheme": "AWS4-HMAC-SHA256",
        "description": (
            "AWS Signature Version 4 (service execute-api): sign each request with the credentials of an"
            " IAM principal allowed execute-api:Invoke on this API."
        ),
    }
    return {"sigv4": {"httpAuthSecurityScheme": sigv4}}, [_requirement("sigv4")]


def _requirement(scheme: str) -> Json:
    return {"schemes": {scheme: {"list": []}}}


def card_etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def signed_card(card: AgentCard, signer: CardSigner | None, base_url: str) -> AgentCard:
    """``card`` signed by ``signer`` (its JWS header naming the agent's JWKS under ``base_url``), or
    as it is without one (:mod:`.signing`). ``ConfigError`` (:data:`PUBLIC_URL_NEEDED`) to sign with
    no ``base_url`` (no URL the agent can trust: :func:`a2a_serverless.transport._http.base_url`)."""
    if signer is None:
        return card
    if not base_url:
        raise ConfigError(PUBLIC_URL_NEEDED)
    return signer.sign(card, base_url.rstrip("/") + JWKS_PATH)
