"""Whom the local stack answers: requests addressed to itself, from no page but its own.

Any web page the developer opens can make the browser send requests to ``127.0.0.1``. Two checks
close that, on the app (:mod:`._local_app`, an ASGI middleware) and on moto (:func:`local_only_wsgi`):

* ``Host`` must name the stack: ``127.0.0.1``, ``localhost`` or ``[::1]`` at the port it serves (or
  the ``--host`` the user gave). DNS rebinding points a name the attacker owns at ``127.0.0.1``; the
  browser then sends ``Host: evil.example:8000`` and lets the attacker's page read the answers as
  same-origin, with no ``Origin`` header on its GETs. An IP literal cannot be rebound, so a stack
  listening on every interface (``--host 0.0.0.0 --allow-remote``) also answers IP literals.
* ``Origin``, when a browser sends one (on a cross-origin request, and on any POST), must be one of
  those ``http://`` authorities: a page of another origin is refused. Clients that are not browsers
  (curl, the SDKs, the stack's own pollers) send none and pass.

Nothing here runs on AWS: API Gateway answers only for its own domain names. Standard library only:
moto's process imports it.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["LOOPBACK_NAMES", "Authorities", "Refusal", "is_loopback", "local_only_wsgi", "reaches_this_machine"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    # ::ffff:127.0.0.1 is 127.0.0.1 to a connect() (an IPv4-mapped address): judge it as that.
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped or address


def reaches_this_machine(name: str) -> bool | None:
    """Whether the IP literal ``name`` reaches servers listening on this machine's loopback
    interface (a loopback address, or an unspecified one: a connect to ``0.0.0.0`` lands there);
    None when ``name`` is not an IP literal."""
    address = _ip(name)
    return None if address is None else address.is_loopback or address.is_unspecified


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` keeps the stack on this machine: a loopback address, or a name
    that resolves to loopback addresses only (``localhost``)."""
    address = _ip(host)
    if address is not None:
        return address.is_loopback
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    addresses = [_ip(str(info[4][0])) for info in found]
    return bool(addresses) and all(a is not None and a.is_loopback for a in addresses)


def _split(authority: str) -> tuple[str, int] | None:
    """``name[:port]`` (``[v6][:port]``) as the lower-cased name (no brackets) and the port (80 when
    absent: the stack speaks http only)."""
    if authority.startswith("["):
        name, bracket, rest = authority[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        name, colon, port = authority.partition(":")
        if colon and not port:
            return None
    if port and not port.isdigit():
        return None
    return name.lower(), int(port) if port else 80


def _show(name: str, port: int) -> str:
    return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: its ``Host`` does not name the stack, or its ``Origin`` is a page
    of another origin; ``message`` says so to the caller."""

    check: Literal["host", "origin"]
    message: str


@dataclass(frozen=True, slots=True)
class Authorities:
    """The ``host:port`` pairs a request may name (``Host``), or its page (``Origin``, ``http://``)."""

    port: int
    names: frozenset[str]
    any_address: bool = False
    """Listening on every interface: any IP literal at ``port`` is the stack too."""

    @classmethod
    def serving(cls, host: str, port: int, *, extra: Iterable[str] = ()) -> Authorities:
        """What a stack listening on ``host`` and ``port`` answers: the loopback names, ``host``
        itself (an interface the user asked for), and ``extra`` names."""
        address = _ip(host)
        names = {*LOOPBACK_NAMES, host.strip("[]").lower(), *(name.lower() for name in extra)}
        return cls(port, frozenset(names), any_address=address is not None and address.is_unspecified)

    def allows(self, authority: str) -> bool:
        split = _split(authority.strip())
        if split is None or split[1] != self.port:
            return False
        return split[0] in self.names or (self.any_address and _ip(split[0]) is not None)

    def allows_origin(self, origin: str) -> bool:
        scheme, separator, authority = origin.partition("://")
        return scheme == "http" and bool(separator) and "/" not in authority and self.allows(authority)

    def refusal(self, host: str | None, origin: str | None) -> Refusal | None:
        """Why a request with these ``Host`` and ``Origin`` headers must be refused (None: it may pass)."""
        if host is None or not self.allows(host):
            served = " or ".join(_show(name, self.port) for name in sorted(self.names))
            return Refusal(
                "host",
                f"This local stack answers requests for {served} only, not for Host {host!r}: a web page "
                "that points a name of its own at this machine (DNS rebinding) must not reach it.",
            )
        if origin is not None and not self.allows_origin(origin):
            return Refusal(
                "origin",
                f"A page of another origin ({origin[:100]!r}) may not call this local stack: only its own "
                "pages, and clients that send no Origin (curl, SDKs).",
            )
        return None


def local_only_wsgi(app: WSGIApplication, host: str) -> WSGIApplication:
    """``app`` (moto's server, listening on ``host``) behind the same check as the app: moto's admin
    routes (``/moto-api/``: a dump of all its state, a reset) and every stored object are out of
    reach of any web page. The port is the one the server listens on (``SERVER_PORT``)."""
    by_port: dict[str, Authorities] = {}

    def guarded(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        port = str(environ.get("SERVER_PORT", ""))
        authorities = by_port.get(port)
        if authorities is None:
            authorities = by_port[port] = Authorities.serving(host, int(port) if port.isdigit() else -1)
        refusal = authorities.refusal(environ.get("HTTP_HOST"), environ.get("HTTP_ORIGIN"))
        if refusal is None:
            return app(environ, start_response)
        body = json.dumps({"error": refusal.message}).encode()
        start_response("403 Forbidden", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return guarded
