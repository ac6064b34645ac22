"""Content negotiation of JSON answers by ``Accept``, in one place for every route.

A2A v1.0.1 recommends ``application/a2a+json`` for the HTTP+JSON binding (spec 11.1); v1.0.0 and
0.3 clients know ``application/json``. Each route answers with its binding's type by default (v1.0
REST ``application/a2a+json``; JSON-RPC, the v0.3 REST routes and the card ``application/json``),
and this middleware switches a JSON answer (success or error) to the other type when the client's
``Accept`` prefers it: a client that accepts only ``application/json`` gets it from the v1.0 REST
routes, one that accepts only ``application/a2a+json`` gets that from JSON-RPC. Quality values and
wildcards count (RFC 9110 12.5.1): the most specific range that matches a type gives its weight, a
tie keeps the route's type. An ``Accept`` that allows neither (``text/html``, ``q=0``) still gets
JSON in the route's type rather than a 406: the body is the same either way, and an A2A error is
more use to such a client than an empty refusal. Event streams are not touched. Every negotiated
answer says ``Vary: Accept`` so that caches keep the variants apart.
"""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["A2A_JSON", "JSON", "JSON_TYPES", "NegotiatedJson", "choose_json_type"]

A2A_JSON = "application/a2a+json"
JSON = "application/json"
JSON_TYPES = (A2A_JSON, JSON)


def _ranges(accept: str) -> list[tuple[str, float]]:
    """``Accept`` as (media range, weight) pairs; malformed members are skipped."""
    out: list[tuple[str, float]] = []
    for member in accept.split(","):
        media, *params = (p.strip() for p in member.split(";"))
        if "/" not in media:
            continue
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = min(1.0, max(0.0, float(value.strip())))
                except ValueError:
                    weight = 0.0
        out.append((media.lower(), weight))
    return out


def _weight(media_type: str, ranges: list[tuple[str, float]]) -> float:
    """The weight of ``media_type``: that of the most specific range matching it (0 if none)."""
    kind = media_type.split("/", 1)[0]
    best, specificity = 0.0, 0
    for media, weight in ranges:
        level = 3 if media == media_type else 2 if media == f"{kind}/*" else 1 if media == "*/*" else 0
        if level > specificity:
            best, specificity = weight, level
    return best


def choose_json_type(accept: str | None, default: str) -> str:
    """The JSON media type to answer with: ``default`` (one of :data:`JSON_TYPES`) unless ``accept``
    gives the other a higher weight."""
    if not accept or not accept.strip():
        return default
    ranges = _ranges(accept)
    other = JSON if default == A2A_JSON else A2A_JSON
    return other if _weight(other, ranges) > _weight(default, ranges) else default


class NegotiatedJson:
    """ASGI middleware: a JSON answer's ``Content-Type`` as :func:`choose_json_type` decides, with
    ``Vary: Accept``. Streams pass through untouched (their headers are not JSON)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accept = ", ".join(Headers(scope=scope).getlist("accept"))

        async def send_negotiated(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                current = headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if current in JSON_TYPES:
                    chosen = choose_json_type(accept, current)
                    if chosen != current:
                        headers["content-type"] = chosen
                    headers.add_vary_header("Accept")
            await send(message)

        await self.app(scope, receive, send_negotiated)
