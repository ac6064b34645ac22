"""HTTP plumbing shared by both bindings: body limits, version negotiation, the call context."""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.requests import Request

from ..auth import authenticate
from ..errors import InvalidParamsError, JSONParseError, PayloadTooLargeError, VersionNotSupportedError
from ..operations import CallContext
from ..runtime import Runtime

__all__ = [
    "base_url",
    "call_context",
    "check_url_text",
    "negotiate_version",
    "parse_json",
    "read_body",
    "read_json",
    "request_id",
]

SUPPORTED_MAJOR, SUPPORTED_MINOR = 1, 0
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$")


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


# A ``\uD800``..``\uDFFF`` escape in the JSON text: the only way a lone surrogate gets into a
# parsed value (raw surrogate bytes are not valid UTF-8 and fail the decode). A cheap pre-check,
# so the full check below runs only on bodies that could hold one (or a legitimate pair).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _reject_constant(name: str) -> Any:
    # NaN, Infinity, -Infinity: not JSON (RFC 8259), though Python's json accepts them.
    raise JSONParseError(f"Invalid JSON payload: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses to inf, which no JSON encoder can write back
        raise JSONParseError("Invalid JSON payload: number out of range")
    return value


def parse_json(body: bytes) -> Any:
    """Parse a request body as strict JSON (RFC 8259), or raise ``JSONParseError``.

    Stricter than ``json.loads``: no ``NaN``/``Infinity`` literals or out-of-range floats, and no
    lone UTF-16 surrogates (``"\\ud800"``) in any string, keys included. Those parse in Python
    but cannot be encoded as UTF-8, so they would fail later, when the value is stored or echoed
    (an id, a method name, a part), as a 500 instead of a parse error.
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
    return value


async def read_json(request: Request, limit: int) -> Any:
    return parse_json(await read_body(request, limit))


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


def negotiate_version(request: Request, lenient_missing: bool) -> str:
    """``A2A-Version`` from the header or the query parameter (digest 7.1). Absent means 0.3."""
    raw = request.headers.get("a2a-version") or request.query_params.get("A2A-Version") or ""
    if not raw.strip():
        if lenient_missing:
            return f"{SUPPORTED_MAJOR}.{SUPPORTED_MINOR}"
        raise VersionNotSupportedError(
            "A2A-Version is missing, which means 0.3; this agent serves 1.0 (send A2A-Version: 1.0)",
            metadata={"supportedVersions": "1.0"},
        )
    match = _VERSION.match(raw)
    if match and int(match.group(1)) == SUPPORTED_MAJOR and int(match.group(2)) <= SUPPORTED_MINOR:
        return f"{SUPPORTED_MAJOR}.{SUPPORTED_MINOR}"
    raise VersionNotSupportedError(
        f"Version {raw.strip()[:16]!r} is not supported; this agent serves 1.0",
        metadata={"supportedVersions": "1.0"},
    )


def aws_event(request: Request) -> dict[str, Any] | None:
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
    """The public base URL: configured, or derived from the request (adding the API Gateway stage
    that the default execute-api domain carries in its path)."""
    if runtime.settings.public_url:
        return runtime.settings.public_url.rstrip("/")
    base = str(request.base_url).rstrip("/")
    event = aws_event(request)
    if event is not None:
        stage = (event.get("requestContext") or {}).get("stage")
        if stage and ".execute-api." in request.headers.get("host", ""):
            base += "/" + str(stage)
    return base


def call_context(request: Request, runtime: Runtime, *, tenant: str, version: str) -> CallContext:
    settings = runtime.settings
    principal = authenticate(settings.auth_mode, settings.api_keys, request.headers, aws_event(request))
    extensions = tuple(
        e.strip() for value in request.headers.getlist("a2a-extensions") for e in value.split(",") if e.strip()
    )
    return CallContext(
        principal=principal, tenant=tenant, version=version, extensions=extensions, base_url=base_url(request, runtime)
    )
