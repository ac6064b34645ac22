"""Webhook URL validation (digest 5.4): absolute https URLs to public hosts only.

At creation we reject what can be judged from the URL itself: scheme, missing host, credentials in
the URL, and literal addresses or names of loopback, private, link-local (cloud metadata),
unique-local, multicast and reserved ranges. ``allow_private`` (local development only) admits
http and private or loopback targets. Resolving DNS and re-checking the resolved address at send
time belongs to the dispatcher.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["WebhookURLError", "is_public_address", "validate_webhook_url"]

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class WebhookURLError(ValueError):
    """The URL may not receive notifications; the message says why (safe to show)."""


def is_public_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
    )


def validate_webhook_url(url: str, *, allow_private: bool = False) -> str:
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
        address = ipaddress.ip_address(host)
    except ValueError:
        return url
    if not is_public_address(address):
        raise WebhookURLError("url must not point at a private, loopback, link-local or reserved address")
    return url
