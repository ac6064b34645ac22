"""Who is calling: turning request credentials into the principal that owns tasks.

The principal (with the tenant) scopes every store access. Three modes (``A2A_AUTH_MODE``):

* ``none``: everyone is the principal ``anonymous`` (local development; not authenticated, so the
  extended card is refused);
* ``api-key``: ``Authorization: Bearer <key>`` looked up in ``A2A_API_KEYS``; a missing or unknown
  key is rejected with 401 before any store access;
* ``apigateway``: API Gateway already authenticated the caller (Cognito / JWT / Lambda authorizer /
  IAM); the principal is read from the event's ``requestContext``.

Principals never collide across kinds of caller: a token's caller is :func:`token_principal` of its
issuer and subject (a ``sub`` is unique only within its issuer, and ``<issuer>|anonymous`` is not the
unauthenticated ``anonymous``), an IAM caller is its ARN (``arn:...``), an API key's caller the name
configured for it.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import UnauthenticatedError
from .json_types import JsonValue

__all__ = ["ANONYMOUS", "Principal", "authenticate", "token_principal"]

ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Principal:
    name: str
    authenticated: bool


def bearer_token(headers: Mapping[str, str]) -> str:
    """The token of ``Authorization: Bearer <token>`` ('' without one). ``headers`` must be
    case-insensitive (Starlette's are)."""
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def authenticate(
    mode: str, api_keys: Mapping[str, str], headers: Mapping[str, str], aws_event: Mapping[str, JsonValue] | None
) -> Principal:
    """The caller's principal. Raises ``UnauthenticatedError`` when the mode demands credentials
    that are missing or wrong. ``headers`` must be case-insensitive (Starlette's are)."""
    if mode == "none":
        return Principal(ANONYMOUS, authenticated=False)
    if mode == "api-key":
        token = bearer_token(headers)
        if token:
            for key, name in api_keys.items():
                if hmac.compare_digest(key.encode(), token.encode()):
                    return Principal(name, authenticated=True)
        raise UnauthenticatedError(headers={"WWW-Authenticate": 'Bearer realm="a2a"'})
    if mode == "apigateway":
        name = _apigateway_principal(aws_event or {})
        # The template's authorizer in AuthMode none lets everyone in as "anonymous": not a login.
        if name and name != ANONYMOUS:
            return Principal(name, authenticated=True)
        return Principal(ANONYMOUS, authenticated=False)
    raise ValueError(f"unknown auth mode {mode!r}")


def token_principal(issuer: str, subject: str) -> str:
    """The principal of a token's caller: ``<issuer>|<subject>``. The issuer is a URL (no ``|`` in it
    that could shift the split), so two issuers' subjects never name the same principal, and none is
    ``anonymous``."""
    return f"{issuer}|{subject}"


def _apigateway_principal(event: Mapping[str, JsonValue]) -> str:
    """Who API Gateway says is calling: the claims of a Cognito (REST) or JWT (HTTP API) authorizer as
    ``<iss>|<sub>``; else a Lambda authorizer's ``principalId`` (ours already names token callers so);
    else the IAM caller's ARN (SigV4). Empty when nobody is named. Raises ``UnauthenticatedError`` for
    claims that name a subject but no issuer: keyed by ``sub`` alone they could collide."""
    ctx = event.get("requestContext") or {}
    authorizer = ctx.get("authorizer") or {}
    claims = authorizer.get("claims") or (authorizer.get("jwt") or {}).get("claims") or {}
    subject, issuer = claims.get("sub"), claims.get("iss")
    if isinstance(subject, str) and subject:
        if not isinstance(issuer, str) or not issuer:
            raise UnauthenticatedError("The caller's token names no issuer")
        return token_principal(issuer, subject)
    principal_id = authorizer.get("principalId")
    if isinstance(principal_id, str) and principal_id:
        return principal_id
    identity = ctx.get("identity") or {}
    arn = identity.get("userArn") or identity.get("caller")
    return arn if isinstance(arn, str) else ""
