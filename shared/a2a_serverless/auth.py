"""Who is calling: turning request credentials into the principal that owns tasks.

The principal (with the tenant) scopes every store access. Three modes (``A2A_AUTH_MODE``):

* ``none``: everyone is the principal ``anonymous`` (local development; not authenticated, so the
  extended card is refused);
* ``api-key``: ``Authorization: Bearer <key>`` looked up in ``A2A_API_KEYS``; a missing or unknown
  key is rejected with 401 before any store access;
* ``apigateway``: API Gateway already authenticated the caller (Cognito / JWT / Lambda authorizer /
  IAM); the principal is read from the event's ``requestContext``.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import UnauthenticatedError

__all__ = ["ANONYMOUS", "Principal", "authenticate"]

ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Principal:
    name: str
    authenticated: bool


def authenticate(
    mode: str, api_keys: Mapping[str, str], headers: Mapping[str, str], aws_event: Mapping[str, Any] | None
) -> Principal:
    """The caller's principal. Raises ``UnauthenticatedError`` when the mode demands credentials
    that are missing or wrong. ``headers`` must be case-insensitive (Starlette's are)."""
    if mode == "none":
        return Principal(ANONYMOUS, authenticated=False)
    if mode == "api-key":
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token:
            for key, name in api_keys.items():
                if hmac.compare_digest(key.encode(), token.strip().encode()):
                    return Principal(name, authenticated=True)
        raise UnauthenticatedError(headers={"WWW-Authenticate": 'Bearer realm="a2a"'})
    if mode == "apigateway":
        name = _apigateway_principal(aws_event or {})
        # The template's authorizer in AuthMode none lets everyone in as "anonymous": not a login.
        if name and name != ANONYMOUS:
            return Principal(name, authenticated=True)
        return Principal(ANONYMOUS, authenticated=False)
    raise ValueError(f"unknown auth mode {mode!r}")


def _apigateway_principal(event: Mapping[str, Any]) -> str:
    ctx = event.get("requestContext") or {}
    authorizer = ctx.get("authorizer") or {}
    claims = authorizer.get("claims") or (authorizer.get("jwt") or {}).get("claims") or {}
    for candidate in (claims.get("sub"), authorizer.get("principalId")):
        if isinstance(candidate, str) and candidate:
            return candidate
    identity = ctx.get("identity") or {}
    arn = identity.get("userArn") or identity.get("caller")
    return arn if isinstance(arn, str) else ""
