"""Webhook URL validation (A2A specification, section 13.2 Push Notification Security): absolute https URLs to public
hosts only.

At creation we reject the scheme (https only), a missing host, credentials in the URL, and targets
in loopback, private, link-local (cloud metadata), unique-local, multicast and reserved ranges:
literal addresses, local names, and host names that *resolve* to such addresses. A name that does
not resolve right now is accepted (it may be published later); delivery must resolve and check
again at send time, since DNS can change after creation. ``allow_private`` (local development
only) admits http and private or loopback targets.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

__all__ = ["Resolver", "WebhookURLError", "is_public_address", "resolve_host", "validate_webhook_url"]

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class WebhookURLError(ValueError):
    """The URL may not receive notifications; the message says why (safe to show)."""


def is_public_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv4 address wrapped in IPv6 (mapped, 6to4, Teredo) is judged as the IPv4 address.
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address.sixtofour is not None:
            return is_public_address(address.sixtofour)
        elif address.teredo is not None:
            return all(is_public_address(a) for a in address.teredo)
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
        # Shared address space (100.64/10, carrier-grade NAT, reachable inside VPCs) and whatever
        # else IANA does not call global.
        or not address.is_global
    )


Resolver = Callable[[str], list[str]]


def resolve_host(host: str) -> list[str]:
    """The addresses ``host`` resolves to now ([] when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


def validate_webhook_url(url: str, *, allow_private: bool = False, resolve: Resolver = resolve_host) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookURLError("url is not a valid absolute URL") from exc
    del port
    allowed_schemes = {"https", "http"} if allow_private else {"https"}
    if parts.scheme.lower() not in allowed_schemes:
        raise WebhookURLError("url must use " + (" or ".join(sorted(allowed_schemes))))
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise WebhookURLError("url must name a host")
    if parts.username or parts.password:
        raise WebhookURLError("url must not carry credentials; use authentication instead")
    if allow_private:
        return url
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        raise WebhookURLError("url must not point at this machine")
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in resolve(host)]
    if any(not is_public_address(address) for address in addresses):
        raise WebhookURLError("url must not point at a private, loopback, link-local or reserved address")
    return url
