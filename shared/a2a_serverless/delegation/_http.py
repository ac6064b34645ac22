"""The HTTP client of a remote agent: async httpx through the push sender's SSRF guard.

A remote agent's URLs come from configuration (the card URL) and from the card itself (its
interfaces), so they get the webhook treatment (:mod:`a2a_serverless.push.urls`,
:mod:`a2a_serverless.push._guard`): https only, no credentials in the URL, no local names, and every
TCP dial vetted against the address policy at connect time (no DNS rebinding to 127.0.0.1 or the
metadata service). ``allow_private`` is the local stack's ``A2A_ALLOW_PRIVATE_WEBHOOKS``: http and
any address. Redirects are never followed, proxies never used (``trust_env=False``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import anyio.to_thread
import httpcore
import httpx

from ..config import env_flag
from ..push._guard import AddressPolicy, GuardedBackend, allow_any_address
from ..push.urls import WebhookURLError, is_public_address, validate_webhook_url

__all__ = ["ALLOW_PRIVATE_ENV", "allow_private_default", "checked_url", "guarded_client"]

ALLOW_PRIVATE_ENV = "A2A_ALLOW_PRIVATE_WEBHOOKS"
"""The setting the local stack turns on (``config.Settings.allow_private_webhooks``)."""


def allow_private_default() -> bool:
    """``A2A_ALLOW_PRIVATE_WEBHOOKS`` as ``Settings`` reads it (read when a remote is made, never at import)."""
    return env_flag(os.environ.get(ALLOW_PRIVATE_ENV))


def checked_url(url: str, *, allow_private: bool) -> str:
    """``url`` if a remote agent may be called there, else ``ValueError`` saying why (safe to show)."""
    try:
        return validate_webhook_url(url, allow_private=allow_private)
    except WebhookURLError as exc:
        raise ValueError(str(exc).replace("url ", "the remote agent's URL ", 1)) from None


class _AsyncGuardedBackend(httpcore.AsyncNetworkBackend):
    """:class:`~a2a_serverless.push._guard.GuardedBackend`'s vetting (resolve once, refuse unless
    every address passes, dial one of those addresses) for async connections."""

    def __init__(self, address_allowed: AddressPolicy) -> None:
        self._guard = GuardedBackend(address_allowed=address_allowed)
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109  (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await anyio.to_thread.run_sync(self._guard.vet, host)  # getaddrinfo blocks
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._backend.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # vet() never returns an empty list
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109  (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _GuardedAsyncTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose pool dials through :class:`_AsyncGuardedBackend` (the
    same private-pool swap as the push sender's ``GuardedTransport``, for the same reason)."""

    def __init__(self, address_allowed: AddressPolicy) -> None:
        ssl_context = httpx.create_ssl_context(trust_env=False)
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=20,
            max_keepalive_connections=10,
            http1=True,
            http2=False,
            retries=0,
            network_backend=_AsyncGuardedBackend(address_allowed),
        )


def guarded_client(*, allow_private: bool, address_allowed: AddressPolicy | None = None) -> httpx.AsyncClient:
    """A client for one remote agent's calls. ``address_allowed`` replaces the policy (tests)."""
    policy = address_allowed or (allow_any_address if allow_private else is_public_address)
    return httpx.AsyncClient(transport=_GuardedAsyncTransport(policy), follow_redirects=False, trust_env=False)
