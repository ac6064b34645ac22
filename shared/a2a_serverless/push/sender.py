"""One webhook POST, through the connect-time SSRF guard, classified for the delivery loop (A2A specification, section
13.2 Push Notification Security).

"DNS is re-resolved and re-checked at send time; redirects are not followed to other hosts." The
URL's shape is checked again here (scheme, credentials, local names, literal addresses); the
*addresses* are checked by :mod:`._guard` at every dial, against the very address dialled. What
came back is reduced to a :class:`SendResult`: ``delivered``, ``retry`` (worth trying again later)
or ``final`` (retrying cannot help). Reasons are short fixed phrases plus status codes and exception
class names: never a header value (Authorization, tokens), the body, or a server's error text.

Modes. ``allow_private=False`` (production): https only and public addresses only, by the policy
``is_public_address``. ``allow_private=True`` (local development): http too, any address. In both
modes ``address_allowed`` replaces the guard's policy; tests use that to make a 127.0.0.1 server
the only "public" host there is.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC
from http.cookiejar import CookieJar, DefaultCookiePolicy
from ipaddress import IPv4Address, IPv6Address
from types import TracebackType
from typing import Literal, Self

import httpx

from a2a_serverless import telemetry
from a2a_serverless.push._guard import (
    BlockedAddressError,
    GuardedTransport,
    UnresolvableHostError,
    allow_any_address,
)
from a2a_serverless.push.urls import Resolver, WebhookURLError, is_public_address, resolve_host, validate_webhook_url

__all__ = ["BlockedAddressError", "SendResult", "WebhookSender", "parse_retry_after"]

Outcome = Literal["delivered", "retry", "final"]

_RETRY_STATUSES = frozenset({408, 429})
_RETRY_AFTER_STATUSES = frozenset({429, 503})
_FOLLOWED_REDIRECTS = frozenset({307, 308})  # the only ones that keep the method and body
# Enough to read a typical acknowledgement to the end, so the connection can go back to the pool;
# a receiver that sends more gets its connection dropped instead of our memory filled.
_DRAIN_LIMIT = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}
_DELAY_SECONDS = re.compile(r"\d{1,10}", re.ASCII)


@dataclass(frozen=True, slots=True)
class SendResult:
    """What one send came to.

    ``status`` is the last HTTP status seen (None when no response arrived); ``reason`` is short
    and safe for logs; ``retry_after`` is the receiver's Retry-After (seconds from now) on 429/503.
    """

    outcome: Outcome
    status: int | None
    reason: str
    retry_after: float | None = None


def _no_resolution(host: str) -> list[str]:
    # The pre-send URL check only judges the URL's shape and literal addresses. Names are judged by
    # the guard at connect time against the address actually dialled: resolving here as well would
    # cost a second lookup per send and prove nothing, since DNS can change before the dial.
    return []


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host.rstrip("."), url.port or _DEFAULT_PORTS.get(url.scheme)


def parse_retry_after(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Retry-After as seconds from now: delay-seconds or an HTTP date; None when absent or invalid."""
    if value is None:
        return None
    value = value.strip()
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now())


def _failed(exc: httpx.TransportError, status: int | None) -> SendResult:
    """What an exchange that raised ``exc`` comes to (``status``: the hop before's, if any)."""
    if isinstance(exc, BlockedAddressError):
        return SendResult("final", status, str(exc))
    if isinstance(exc, UnresolvableHostError):
        # The URL was accepted while it did not resolve ("it may be published later").
        return SendResult("retry", status, str(exc))
    if isinstance(exc, httpx.TimeoutException):
        return SendResult("retry", status, f"timed out ({type(exc).__name__})")
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError)):
        # Our own request is unsendable; sending it again will not change that.
        return SendResult("final", status, f"request refused by the HTTP client ({type(exc).__name__})")
    return SendResult("retry", status, f"connection failed ({type(exc).__name__})")


def _answer(status: int, headers: httpx.Headers) -> SendResult | None:
    """What a response with ``status`` comes to; None for a redirect to follow (307, 308)."""
    if 200 <= status < 300:
        return SendResult("delivered", status, f"HTTP {status}")
    if status in _RETRY_STATUSES or 500 <= status < 600:
        retry_after = None
        if status in _RETRY_AFTER_STATUSES:
            retry_after = parse_retry_after(headers.get("retry-after"))
        return SendResult("retry", status, f"HTTP {status}", retry_after)
    if status in _FOLLOWED_REDIRECTS:
        return None
    if 300 <= status < 400:
        return SendResult("final", status, f"HTTP {status}: only same-host 307/308 redirects are followed")
    return SendResult("final", status, f"HTTP {status}")


class WebhookSender:
    """POSTs notifications to webhooks through one reused, guarded ``httpx.Client``.

    The client is created on first use and kept (a warm Lambda reuses its connections); it never
    follows redirects itself, never reads proxies, .netrc or CA settings from the environment, and
    keeps no cookies (a receiver's cookie must not ride along to the next task's notification).
    ``timeout`` bounds each connect, read, write and pool wait. ``transport`` replaces the guarded
    transport wholesale (the sender then owns and closes it; ``resolve`` and ``address_allowed``
    only configure the default one), e.g. a :class:`GuardedTransport` with a private CA.
    """

    def __init__(
        self,
        *,
        timeout: float = 10.0,
        allow_private: bool = False,
        resolve: Resolver = resolve_host,
        address_allowed: Callable[[IPv4Address | IPv6Address], bool] | None = None,
        max_redirects: int = 3,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if max_redirects < 0:
            raise ValueError("max_redirects must not be negative")
        self._timeout = timeout
        self._allow_private = allow_private
        self._resolve = resolve
        if address_allowed is None:
            address_allowed = allow_any_address if allow_private else is_public_address
        self._address_allowed = address_allowed
        self._max_redirects = max_redirects
        self._transport = transport
        self._client: httpx.Client | None = None
        self._closed = False

    def _http(self) -> httpx.Client:
        if self._closed:
            raise RuntimeError("WebhookSender is closed")
        if self._client is None:
            transport = self._transport or GuardedTransport(
                resolve=self._resolve, address_allowed=self._address_allowed
            )
            self._client = httpx.Client(
                transport=transport,
                follow_redirects=False,
                trust_env=False,
                timeout=httpx.Timeout(self._timeout),
                cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            )
        return self._client

    @telemetry.traced_post
    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        """POST ``body`` with ``headers`` to ``url`` (following same-origin 307/308) and classify the outcome."""
        client = self._http()
        status: int | None = None
        origin: tuple[str, str, int | None] | None = None
        for hop in range(self._max_redirects + 1):
            try:
                validate_webhook_url(url, allow_private=self._allow_private, resolve=_no_resolution)
                request = client.build_request("POST", url, content=body, headers=dict(headers))
            except WebhookURLError as exc:
                return SendResult("final", status, f"webhook url refused: {exc}")
            except (httpx.InvalidURL, ValueError):  # ValueError: e.g. a header value that is not ASCII
                return SendResult("final", status, "request could not be built")
            if origin is None:
                origin = _origin(request.url)

            try:
                status, response_headers = self._exchange(client, request)
            except httpx.TransportError as exc:
                return _failed(exc, status)
            if (answer := _answer(status, response_headers)) is not None:
                return answer

            location = response_headers.get("location")
            if not location:
                return SendResult("final", status, f"HTTP {status} without a Location")
            try:
                target = request.url.join(location)
            except httpx.InvalidURL:
                return SendResult("final", status, f"HTTP {status} to an invalid Location")
            if _origin(target) != origin:
                # Never sent there: the request carries the receiver's credentials.
                return SendResult("final", status, "redirect to another host refused")
            if hop == self._max_redirects:
                break
            url = str(target)
        return SendResult("final", status, f"too many redirects (more than {self._max_redirects})")

    @staticmethod
    def _exchange(client: httpx.Client, request: httpx.Request) -> tuple[int, httpx.Headers]:
        response = client.send(request, stream=True)
        try:
            received = 0
            try:
                for chunk in response.iter_raw():
                    received += len(chunk)
                    if received > _DRAIN_LIMIT:
                        break
            except httpx.HTTPError:
                pass  # the status is the answer; a body cut short only costs the pooled connection
        finally:
            response.close()
        return response.status_code, response.headers

    def close(self) -> None:
        """Close the client and its pooled connections; the sender cannot be used afterwards."""
        if self._closed:
            return
        self._closed = True
        if self._client is not None:
            self._client.close()
            self._client = None
        elif self._transport is not None:
            self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
