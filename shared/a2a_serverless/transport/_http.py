"""HTTP plumbing shared by both bindings: the request body (declared JSON, size-limited, strictly
parsed), the JSON answer's media type by ``Accept``, the URL's text, the API Gateway event, the
caller and the call context. (``A2A-Version`` is read where a call meets its row: :mod:`.rows`.)

**Answers by ``Accept``** (:class:`NegotiatedJson`, one middleware for every route). A2A v1.0.1
recommends ``application/a2a+json`` for the HTTP+JSON binding (spec 11.1); v1.0.0 and 0.3 clients
know ``application/json``. Each route answers with its binding's type by default (v1.0 REST
``application/a2a+json``; JSON-RPC, the v0.3 REST routes and the card ``application/json``), and
the middleware switches a JSON answer (success or error) to the other type when the client's
``Accept`` prefers it: a client that accepts only ``application/json`` gets it from the v1.0 REST
routes, one that accepts only ``application/a2a+json`` gets that from JSON-RPC. Quality values and
wildcards count (RFC 9110 12.5.1): the most specific range that matches a type gives its weight, a
tie keeps the route's type. An ``Accept`` that allows neither (``text/html``, ``q=0``) still gets
JSON in the route's type rather than a 406: the body is the same either way, and an A2A error is
more use to such a client than an empty refusal. Event streams are not touched. Every negotiated
answer says ``Vary: Accept`` so that caches keep the variants apart.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import NoReturn
from urllib.parse import unquote_to_bytes

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..auth import Principal, authenticate
from ..config import env_flag
from ..errors import InvalidParamsError, JSONParseError, PayloadTooLargeError, UnsupportedMediaTypeError
from ..json_types import Json, JsonValue
from ..operations import IDEMPOTENCY_KEY_HEADER, CallContext
from ..runtime import Runtime
from ..versions import ProtocolVersion

__all__ = [
    "A2A_JSON",
    "JSON",
    "JSON_MEDIA_TYPES",
    "MAX_JSON_DEPTH",
    "NegotiatedJson",
    "authenticate_request",
    "base_url",
    "call_context",
    "check_url_text",
    "choose_json_type",
    "gateway_base_url",
    "parse_json",
    "read_body",
    "read_json",
    "read_json_body",
    "request_id",
    "sam_local",
]

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects a request body may have (protobuf's own default
recursion limit): well below where serializing the stored task would fail."""


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refusing more than ``limit`` bytes whether or not Content-Length is honest."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLargeError(f"Request body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLargeError(f"Request body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


A2A_JSON = "application/a2a+json"
JSON = "application/json"
JSON_MEDIA_TYPES = (JSON, A2A_JSON)
"""The request bodies every route takes: JSON-RPC's (spec 9.1) and HTTP+JSON's (spec 11.1), on
both bindings and both protocol versions, parameters (``charset``) ignored as RFC 8259 says.
Other ``+json`` types are refused: each names a format of its own (``merge-patch+json``,
``problem+json``) that these bodies are not."""


async def read_json_body(request: Request, limit: int) -> bytes:
    """The body of a call, which must be declared JSON (:data:`JSON_MEDIA_TYPES`), or
    ``UnsupportedMediaTypeError``: a declared type that is not JSON is refused before the body is
    read (even when empty), a body sent with no type once it is read. An empty body with no type
    passes (POST ``tasks/{id}:cancel`` has nothing to send).

    Why: ``text/plain``, ``application/x-www-form-urlencoded`` and ``multipart/form-data`` are what
    a page on any other origin may POST without a CORS preflight (Fetch, "CORS-safelisted request
    header"); a JSON type needs one, which this server never grants. So a browser cannot be made to
    call the agent from another site (cross-site request forgery)."""
    declared = request.headers.getlist("content-type")
    if declared:
        kinds = {value.split(";", 1)[0].strip().lower() for value in declared}
        if len(kinds) != 1 or not kinds <= set(JSON_MEDIA_TYPES):
            shown = ", ".join(sorted(kind[:64] or "(empty)" for kind in kinds))
            raise _not_json(f"Content-Type {shown} is not accepted")
    body = await read_body(request, limit)
    if body and not declared:
        raise _not_json("The request body has no Content-Type")
    return body


def _not_json(problem: str) -> UnsupportedMediaTypeError:
    accepted = " or ".join(JSON_MEDIA_TYPES)
    return UnsupportedMediaTypeError(
        f"{problem}: send the body as {accepted}", headers={"Accept": ", ".join(JSON_MEDIA_TYPES)}
    )


# A ``\uD800``..``\uDFFF`` escape in the JSON text: the only way a lone surrogate gets into a
# parsed value (raw surrogate bytes are not valid UTF-8 and fail the decode). A cheap pre-check,
# so the full check below runs only on bodies that could hold one (or a legitimate pair).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _reject_constant(name: str) -> NoReturn:
    # NaN, Infinity, -Infinity: not JSON (RFC 8259), though Python's json accepts them.
    raise JSONParseError(f"Invalid JSON payload: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses to inf, which no JSON encoder can write back
        raise JSONParseError("Invalid JSON payload: number out of range")
    return value


def _check_depth(value: JsonValue) -> None:
    """Refuse arrays and objects nested deeper than ``MAX_JSON_DEPTH`` (RFC 8259 section 9 lets a
    parser limit nesting). Deeper values parse, but pydantic refuses to serialize past ~255 levels,
    so a deep ``data`` part or metadata value would fail when the task is stored: a 500."""
    level: list[JsonValue] = [value]
    for _ in range(MAX_JSON_DEPTH):
        level = [child for node in level for child in (node.values() if isinstance(node, dict) else node)]
        level = [node for node in level if isinstance(node, (dict, list))]
        if not level:
            return
    raise JSONParseError(f"Invalid JSON payload: nested deeper than {MAX_JSON_DEPTH} levels")


def parse_json(body: bytes) -> JsonValue:
    """Parse a request body as strict JSON (RFC 8259), or raise ``JSONParseError``.

    Stricter than ``json.loads``: no ``NaN``/``Infinity`` literals or out-of-range floats, no
    nesting deeper than ``MAX_JSON_DEPTH``, and no lone UTF-16 surrogates (``"\\ud800"``) in any
    string, keys included. Those parse in Python but cannot be encoded as UTF-8, so they would fail
    later, when the value is stored or echoed (an id, a method name, a part), as a 500 instead of a
    parse error.
    """
    try:
        text = body.decode("utf-8")
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
        if _SURROGATE_ESCAPE.search(text):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except JSONParseError:
        raise
    # ValueError covers JSONDecodeError, UnicodeDecodeError, UnicodeEncodeError (a lone
    # surrogate) and integers over Python's digit limit.
    except (ValueError, RecursionError):
        raise JSONParseError() from None
    if isinstance(value, (dict, list)):
        _check_depth(value)
    return value


async def read_json(request: Request, limit: int) -> JsonValue:
    """The body, declared JSON (:func:`read_json_body`) and parsed (:func:`parse_json`)."""
    return parse_json(await read_json_body(request, limit))


# --------------------------------------------------------------------------- JSON answers, by Accept


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
    """The JSON media type to answer with: ``default`` (one of :data:`JSON_MEDIA_TYPES`) unless ``accept``
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
                if current in JSON_MEDIA_TYPES:
                    chosen = choose_json_type(accept, current)
                    if chosen != current:
                        headers["content-type"] = chosen
                    headers.add_vary_header("Accept")
            await send(message)

        await self.app(scope, receive, send_negotiated)


# --------------------------------------------------------------------------- the request


def check_url_text(request: Request) -> None:
    """Refuse a URL whose path or query, once percent-decoded, is not UTF-8 (``%ED%A0%80``, an
    encoded surrogate, or any invalid sequence) or holds a lone surrogate.

    Starlette (and the servers before it) decode such bytes to U+FFFD, so a task id, a tenant or a
    ``contextId`` filter would silently become a different string; refuse it instead.
    """
    raw_path = request.scope.get("raw_path")
    encoded = [request.scope.get("query_string") or b""]
    if isinstance(raw_path, bytes):
        encoded.append(raw_path.split(b"?", 1)[0])  # some clients put the query in raw_path too
    try:
        for raw in encoded:
            unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
        for key, value in [*request.path_params.items(), *request.query_params.multi_items()]:
            f"{key}={value}".encode()
    except (UnicodeDecodeError, UnicodeEncodeError):
        raise InvalidParamsError("The request URL is not valid UTF-8 once percent-decoded") from None


def aws_event(request: Request) -> Json | None:
    """The API Gateway event behind ``request``: mangum's (the buffered functions), or, in the
    gateway function, the request context that the AWS Lambda Web Adapter forwards as the
    ``x-amzn-request-context`` header. That header is trusted only under the adapter
    (``AWS_LWA_INVOKE_MODE`` set), which writes it from the event over anything a client sent;
    anywhere else it is a client's header like any other and is ignored."""
    event = request.scope.get("aws.event")
    if isinstance(event, dict):
        return event
    if os.environ.get("AWS_LWA_INVOKE_MODE"):
        try:
            context = json.loads(request.headers.get("x-amzn-request-context") or "null")
        except ValueError:
            return None
        if isinstance(context, dict):
            return {"requestContext": context}
    return None


def request_id(request: Request) -> str:
    event = aws_event(request) or {}
    rid = (event.get("requestContext") or {}).get("requestId") if isinstance(event, dict) else None
    return str(rid or request.headers.get("x-request-id") or request.scope.get("a2a.request_id") or "")


def base_url(request: Request, runtime: Runtime) -> str:
    """The agent's public base URL, the one its card names (every interface URL, and the ``jku`` of
    a signed card's signature: A2A specification, section 8.4), first of:

    1. ``A2A_PUBLIC_URL`` (the template's ``PublicUrl``, a custom domain; the local stack's URL);
    2. behind API Gateway, the URL API Gateway says the request came to (:func:`gateway_base_url`);
    3. for an unsigned card only, the request's own URL, which its ``Host`` header names.

    Empty when the card is signed and neither 1 nor 2 is known: a signature over a URL taken from
    ``Host`` would vouch for whatever host a client wrote there (``Host: evil.example``, a card
    pointing at evil.example that verifies with the agent's real key). The card is then refused
    (:data:`..card.PUBLIC_URL_NEEDED`), and the start-up checks refuse such a process before it
    serves (:mod:`..lambda_.startup`). An unsigned card keeps 3 for a local server: it vouches for
    nothing, so a client trusts it only as far as the connection it fetched it over, and a caller who
    forges ``Host`` reads its own words back."""
    configured = runtime.settings.public_url
    if configured:
        return configured.rstrip("/")
    gateway = gateway_base_url(request)
    if gateway is not None:
        return gateway
    if runtime.settings.signs_cards:
        return ""
    return str(request.base_url).rstrip("/")


SAM_LOCAL = "sam_local"
"""The app's state attribute (``app.state.sam_local``) that says it serves under ``sam local``."""


def sam_local() -> bool:
    """Whether this process serves under ``sam local`` (``AWS_SAM_LOCAL``, which SAM CLI sets): read
    once, when the app is built, into its state (:data:`SAM_LOCAL`)."""
    return env_flag(os.environ.get("AWS_SAM_LOCAL"))


_DOMAIN = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?")


def gateway_base_url(request: Request) -> str | None:
    """The base URL of the API Gateway stage ``request`` came through, from the event's
    ``requestContext``, which API Gateway writes, never from the ``Host`` header: ``https://`` and
    ``domainName`` (the API's own ``execute-api`` domain, or a custom domain mapped to it: API Gateway
    routes a request to this API by one of these only), then ``/`` and ``stage`` on the
    ``execute-api`` domain, whose paths start with the stage (a custom domain's mapping hides it;
    a mapping's base path is not in the event: a custom domain's URL is better configured).

    None without an API Gateway event (a local server; an ALB's event has no ``domainName``), and
    under ``sam local``, whose API writes the client's ``Host`` as ``domainName`` (the app reads
    ``AWS_SAM_LOCAL`` once, when it is built: :func:`sam_local`)."""
    if getattr(request.app.state, SAM_LOCAL, False):
        return None
    event = aws_event(request)
    context = event.get("requestContext") if event is not None else None
    domain = context.get("domainName") if isinstance(context, dict) else None
    if not isinstance(domain, str) or not _DOMAIN.fullmatch(domain):
        return None
    base = "https://" + domain.lower()
    stage = context.get("stage") if isinstance(context, dict) else None
    if ".execute-api." in domain and isinstance(stage, str) and stage and stage != "$default":
        base += "/" + stage
    return base


def authenticate_request(request: Request, runtime: Runtime) -> Principal:
    """The caller's principal, or ``UnauthenticatedError`` (:mod:`a2a_serverless.auth`)."""
    settings = runtime.settings
    return authenticate(settings.auth_mode, settings.api_keys, request.headers, aws_event(request))


def call_context(
    request: Request,
    runtime: Runtime,
    *,
    principal: Principal,
    tenant: str,
    version: ProtocolVersion,
    last_event_id: int | None = None,
) -> CallContext:
    # v0.3 clients send X-A2A-Extensions, v1.0 ones A2A-Extensions (A2A specification, section 14.2.2 A2A-Extensions
    # Header); repeated lines of either are merged.
    values = [*request.headers.getlist("a2a-extensions"), *request.headers.getlist("x-a2a-extensions")]
    extensions = tuple(dict.fromkeys(e.strip() for value in values for e in value.split(",") if e.strip()))
    return CallContext(
        principal=principal,
        tenant=tenant,
        version=version,
        extensions=extensions,
        base_url=base_url(request, runtime),
        last_event_id=last_event_id,
        idempotency_key=request.headers.get(IDEMPOTENCY_KEY_HEADER),
    )
