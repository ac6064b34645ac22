"""Outbound credentials: what a remote agent is told about who calls it, only as configured.

A :data:`Credentials` provider gives the headers every call to the remote carries (its card fetch
included). Nothing else is sent: the end user's token never reaches the worker (it is checked at
the edge and not queued), and the run's ``context.caller`` is a name, not a credential; to act on
the user's behalf, pass a provider that builds that credential yourself (a token exchange, say).
Providers are called for each request, so a rotating token is read fresh."""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping

__all__ = ["Credentials", "api_key", "bearer", "headers_of"]

Credentials = Callable[[], Mapping[str, str] | Awaitable[Mapping[str, str]]]
"""The headers to send (``{"Authorization": "Bearer ..."}``), plain or ``async``."""


def bearer(token: str | None = None, *, env: str | None = None) -> Credentials:
    """``Authorization: Bearer <token>``: the token given, or read from the environment variable
    ``env`` at each call (a missing variable raises ``KeyError`` naming it: a misconfiguration,
    never an anonymous call)."""
    if (token is None) == (env is None):
        raise ValueError("pass either token or env")
    return lambda: {"Authorization": f"Bearer {_value(token, env)}"}


def api_key(header: str, value: str | None = None, *, env: str | None = None) -> Credentials:
    """An API key in ``header`` (``X-API-Key``, say): the value given, or read from ``env``."""
    if (value is None) == (env is None):
        raise ValueError("pass either value or env")
    return lambda: {header: _value(value, env)}


async def headers_of(credentials: Credentials | None) -> dict[str, str]:
    """The headers ``credentials`` gives now (none without a provider)."""
    if credentials is None:
        return {}
    given = credentials()
    if inspect.isawaitable(given):
        given = await given
    return dict(given)


def _value(value: str | None, env: str | None) -> str:
    if value is not None:
        return value
    assert env is not None
    try:
        return os.environ[env]
    except KeyError:
        raise KeyError(f"the credential's environment variable {env} is not set") from None
