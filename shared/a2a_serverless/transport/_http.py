"""HTTP plumbing shared by both bindings: body limits, version negotiation, the call context."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

from ..auth import authenticate
from ..errors import JSONParseError, PayloadTooLargeError, VersionNotSupportedError
from ..operations import CallContext
from ..runtime import Runtime

__all__ = ["base_url", "call_context", "negotiate_version", "parse_json", "read_body", "read_json", "request_id"]

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


def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise JSONParseError() from None


async def read_json(request: Request, limit: int) -> Any:
    return parse_json(await read_body(request, limit))


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


def request_id(request: Request) -> str:
    event = request.scope.get("aws.event") or {}
    rid = (event.get("requestContext") or {}).get("requestId") if isinstance(event, dict) else None
    return str(rid or request.headers.get("x-request-id") or request.scope.get("a2a.request_id") or "")


def base_url(request: Request, runtime: Runtime) -> str:
    """The public base URL: configured, or derived from the request (adding the API Gateway stage
    that the default execute-api domain carries in its path)."""
    if runtime.settings.public_url:
        return runtime.settings.public_url.rstrip("/")
    base = str(request.base_url).rstrip("/")
    event = request.scope.get("aws.event")
    if isinstance(event, dict):
        stage = (event.get("requestContext") or {}).get("stage")
        if stage and ".execute-api." in request.headers.get("host", ""):
            base += "/" + str(stage)
    return base


def call_context(request: Request, runtime: Runtime, *, tenant: str, version: str) -> CallContext:
    settings = runtime.settings
    principal = authenticate(settings.auth_mode, settings.api_keys, request.headers, request.scope.get("aws.event"))
    extensions = tuple(
        e.strip() for value in request.headers.getlist("a2a-extensions") for e in value.split(",") if e.strip()
    )
    return CallContext(
        principal=principal, tenant=tenant, version=version, extensions=extensions, base_url=base_url(request, runtime)
    )
