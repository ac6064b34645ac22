"""The connect-time SSRF guard behind :mod:`.sender`: an httpx transport whose every TCP dial is vetted.

Checking a webhook's host name and then letting the HTTP client resolve it again leaves a window in
which DNS can change (rebinding): the check sees a public address, the dial reaches 127.0.0.1 or the
cloud metadata service. So the check lives *in* the dial: the network backend resolves the name once,
refuses unless every address passes the policy, and connects to one of those same vetted addresses.
httpcore still knows the connection by its origin (scheme, host name, port), so TLS SNI, certificate
verification and the Host header keep using the host name while the socket goes to the vetted IP.
Redirects are the caller's business (the client must not follow them); each hop that opens a new
connection comes through here again.
"""

from __future__ import annotations

import ipaddress
import ssl
import time
from collections.abc import Callable, Iterable

import httpcore
import httpx

from a2a_serverless.push.urls import Resolver, is_public_address, resolve_host

__all__ = [
    "AddressPolicy",
    "BlockedAddressError",
    "GuardedBackend",
    "GuardedTransport",
    "UnresolvableHostError",
    "address_class",
    "allow_any_address",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress], bool]
"""Whether a resolved address may be dialled."""


class BlockedAddressError(httpx.ConnectError):
    """The guard refused to dial: the host is, or resolves to, an address the policy does not allow.

    Raised from inside the connection pool. It is an ``httpx.ConnectError``, not an httpcore one, on
    purpose: httpx maps httpcore's exceptions to new httpx ones (losing the type) but re-raises any
    other exception unchanged, and httpcore's own connect retries only catch httpcore's errors. So
    callers see this exact type and can tell a refusal (permanent) from a refused connection
    (transient). The message names the address class, never a header or body.
    """


class UnresolvableHostError(httpx.ConnectError):
    """The host name resolves to nothing right now (which may be temporary: DNS can be published later)."""


def allow_any_address(address: IPAddress) -> bool:
    """The development-mode policy (``allow_private``): every address may be dialled."""
    return True


def address_class(address: IPAddress) -> str:
    """A short name for why an address is special, for messages ("loopback", "link-local", ...)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    checks: tuple[tuple[str, bool], ...] = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unique-local", isinstance(address, ipaddress.IPv6Address) and address in _UNIQUE_LOCAL),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
    )
    return next((name for name, hit in checks if hit), "public")


_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's own defaults


class GuardedBackend(httpcore.NetworkBackend):
    """An httpcore network backend that resolves, vets, and then dials only vetted addresses.

    ``resolve`` maps a host name to address strings (literal IPs are used as they are, never
    resolved); ``address_allowed`` is the policy; ``backend`` does the actual dialling (httpcore's
    ``SyncBackend`` unless a test injects a recorder). The addresses are tried in turn, sharing the
    connect timeout, until one accepts.
    """

    def __init__(
        self,
        *,
        resolve: Resolver = resolve_host,
        address_allowed: AddressPolicy = is_public_address,
        backend: httpcore.NetworkBackend | None = None,
    ) -> None:
        self._resolve = resolve
        self._address_allowed = address_allowed
        self._backend = backend if backend is not None else httpcore.SyncBackend()

    def vet(self, host: str) -> list[str]:
        """The addresses ``host`` may be dialled at, or raise ``BlockedAddressError`` / ``UnresolvableHostError``."""
        try:
            ipaddress.ip_address(host)
        except ValueError:
            candidates = self._resolve(host)
            if not candidates:
                raise UnresolvableHostError("webhook host does not resolve") from None
        else:
            candidates = [host]
        for candidate in candidates:
            try:
                address = ipaddress.ip_address(candidate)
            except ValueError:
                raise BlockedAddressError("webhook host resolves to something that is not an IP address") from None
            # One disallowed address refuses the lot: an attacker who controls DNS could otherwise
            # mix a public address with an internal one and hope for the latter.
            if not self._address_allowed(address):
                raise BlockedAddressError(f"webhook host is a {address_class(address)} address, which is not allowed")
        return candidates

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self.vet(host)
        deadline = None if timeout is None else time.monotonic() + timeout
        failure: Exception | None = None
        for address in addresses:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise httpcore.ConnectTimeout("timed out connecting to the webhook host")
            try:
                return self._backend.connect_tcp(
                    address, port, timeout=remaining, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # vet() never returns an empty list
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise BlockedAddressError("unix sockets are not allowed")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` whose connection pool dials through a :class:`GuardedBackend`.

    Why subclass and swap the pool rather than wrap an ``httpcore.ConnectionPool`` in a bare
    ``BaseTransport``: httpx 0.28 offers no public way to hand ``HTTPTransport`` a network backend,
    but everything else it does (request/response conversion, the httpcore-to-httpx exception
    mapping, closing response streams, context management) is exactly what we want and goes through
    ``self._pool``; re-implementing it would be more code to get subtly wrong. The cost is one
    private attribute, and the tests would catch its disappearance (requests would bypass the guard
    and the refusal tests fail). Proxies are never used: ``trust_env=False`` and no ``proxy``,
    since a proxy would dial on our behalf and defeat the check.
    """

    def __init__(
        self,
        *,
        resolve: Resolver = resolve_host,
        address_allowed: AddressPolicy = is_public_address,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits | None = None,
        backend: httpcore.NetworkBackend | None = None,
    ) -> None:
        # One SSL context (the CA bundle load is the expensive part) shared by the throwaway pool
        # the base class builds and the guarded one that replaces it.
        if isinstance(verify, ssl.SSLContext):
            ssl_context = verify
        else:
            ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        limits = limits if limits is not None else _DEFAULT_LIMITS
        super().__init__(verify=ssl_context, trust_env=False, limits=limits)
        self.backend = GuardedBackend(resolve=resolve, address_allowed=address_allowed, backend=backend)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            retries=0,
            network_backend=self.backend,
        )
