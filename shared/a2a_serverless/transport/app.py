"""The Starlette application: JSON-RPC at ``POST /``, the REST binding, the agent card, and the
JWKS that verifies signed push notifications.

The same app serves locally under uvicorn and on Lambda (buffered through mangum). Per-method
Lambda functions build it with ``methods=`` so each serves only its own operation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..card import card_etag, public_card
from ..errors import A2AError, InternalError, MethodNotFoundError
from ..runtime import Runtime, get_runtime
from ._http import base_url, request_id
from ._render import rest_error
from .jsonrpc import handle_jsonrpc
from .rest import REST_MEDIA_TYPE, error_response, rest_routes

__all__ = ["CARD_PATH", "JWKS_PATH", "create_app"]

logger = logging.getLogger(__name__)

CARD_PATH = "/.well-known/agent-card.json"
CARD_MAX_AGE = 300
JWKS_PATH = "/.well-known/jwks.json"
"""Public keys of the notification signer (``push.signing``); served with the card."""


def create_app(
    runtime: Runtime | None = None,
    *,
    methods: Collection[str] | None = None,
    jsonrpc: bool = True,
    card: bool = True,
) -> Starlette:
    """Build the app. ``runtime`` None means ``get_runtime()`` at the first request (no I/O at
    import or construction). ``methods`` restricts the A2A methods served."""

    def current() -> Runtime:
        return runtime if runtime is not None else get_runtime()

    async def jsonrpc_endpoint(request: Request) -> Response:
        return await handle_jsonrpc(request, current(), methods)

    async def card_endpoint(request: Request) -> Response:
        return serve_card(request, current())

    async def jwks_endpoint(request: Request) -> Response:
        return serve_jwks(request, current())

    routes: list[Route] = []
    if card:
        routes.append(Route(CARD_PATH, card_endpoint, methods=["GET"]))
        routes.append(Route(JWKS_PATH, jwks_endpoint, methods=["GET"]))
    if jsonrpc:
        routes.append(Route("/", jsonrpc_endpoint, methods=["POST"]))
    routes.extend(rest_routes(current, methods))
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_exception, Exception: _unexpected},
    )


def serve_card(request: Request, runtime: Runtime) -> Response:
    """The public card, cacheable (``Cache-Control``, ``ETag``, 304 on ``If-None-Match``)."""
    body = public_card(runtime.settings, base_url(request, runtime)).to_json().encode()
    etag = card_etag(body)
    headers = {"Cache-Control": f"public, max-age={CARD_MAX_AGE}", "ETag": etag}
    if etag in {t.strip() for t in request.headers.get("if-none-match", "").split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


def serve_jwks(request: Request, runtime: Runtime) -> Response:
    """The signer's public keys (every key still valid, so rotation never breaks a receiver's
    cache); 404 when notifications are not signed."""
    signer = runtime.push_signer
    if signer is None:
        return error_response(MethodNotFoundError("Push notifications are not signed by this agent"))
    body = json.dumps(signer.jwks(), separators=(",", ":"), sort_keys=True).encode()
    headers = {"Cache-Control": f"public, max-age={CARD_MAX_AGE}", "ETag": card_etag(body)}
    return Response(body, media_type="application/jwk-set+json", headers=headers)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        error: A2AError = MethodNotFoundError(f"{request.method} is not allowed on {request.url.path[:128]}")
        body = rest_error(error)
        body["error"]["code"] = 405  # error.code is the HTTP status (spec 11.6)
        return JSONResponse(body, status_code=405, media_type=REST_MEDIA_TYPE)
    return error_response(MethodNotFoundError(f"No A2A route {request.method} {request.url.path[:128]}"))


async def _unexpected(request: Request, exc: Exception) -> Response:
    rid = request_id(request)
    logger.error("unhandled error", exc_info=exc, extra={"request_id": rid})
    return error_response(InternalError(metadata={"requestId": rid} if rid else None))
