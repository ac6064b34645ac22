"""The Starlette application: JSON-RPC at ``POST /``, the REST binding, the agent card, and the
JWKS that verifies signed push notifications.

The same app serves locally under uvicorn and on Lambda (buffered through mangum). Per-method
Lambda functions build it with ``methods=`` so each serves only its own operation.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import time
from collections.abc import Callable, Collection

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route

from ..card import PUBLIC_URL_NEEDED, card_etag, public_card, signed_card
from ..config import ConfigError
from ..errors import A2AError, MethodNotFoundError
from ..json_types import JsonValue
from ..methods import SEND_MESSAGE, SEND_STREAMING_MESSAGE
from ..push import JWKS_PATH
from ..runtime import Runtime
from ..v03.card import merged_card
from ..wiring import get_runtime
from ._http import SAM_LOCAL, NegotiatedJson, base_url, request_id, sam_local
from ._render import internal_error, jsonrpc_error, rest_error, v03_rest_error
from .jsonrpc import handle_jsonrpc
from .rest import REST_MEDIA_TYPE, error_response, rest_routes
from .rows import asks_for_v1, is_legacy_request

__all__ = ["CARD_PATH", "JWKS_PATH", "create_app"]


CARD_PATH = "/.well-known/agent-card.json"
CARD_MAX_AGE = 300


def create_app(
    runtime: Runtime | None = None,
    *,
    methods: Collection[str] | None = None,
    jsonrpc: bool = True,
    card: bool = True,
) -> Starlette:
    """Build the app. ``runtime`` None means ``get_runtime()`` at the first request (no I/O at
    import or construction). ``methods`` restricts the A2A methods served; the whole app (no
    ``methods``) also serves the push receiver of durable delegation (:mod:`..delegation.hook`).

    On Lambda, the app of the process's own runtime is the function's cold start (the gateway under
    the Web Adapter builds it in ``functions/run.sh``): what its settings turn on is checked now
    (:func:`..lambda_.preload.cold_start`), and a failure stops the init phase with one line."""
    if runtime is None:
        _log_as_the_functions_do()
    if runtime is None and os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        from ..lambda_.preload import cold_start

        starts = methods is None or bool({SEND_MESSAGE.name, SEND_STREAMING_MESSAGE.name} & set(methods))
        cold_start(durable_function=starts)

    # The process's runtime is wiring's to give, at each request (built at the first).
    current = get_runtime if runtime is None else _given(runtime)

    async def jsonrpc_endpoint(request: Request) -> Response:
        return await handle_jsonrpc(request, current(), methods)

    async def card_endpoint(request: Request) -> Response:
        return serve_card(request, current())

    async def jwks_endpoint(request: Request) -> Response:
        return serve_jwks(request, current())

    async def hook_endpoint(request: Request) -> Response:
        return await receive_delegation_push(request, current())

    routes: list[Route] = []
    if card:
        routes.append(Route(CARD_PATH, card_endpoint, methods=["GET"]))
        routes.append(Route(JWKS_PATH, jwks_endpoint, methods=["GET"]))
    if jsonrpc:
        routes.append(Route("/", jsonrpc_endpoint, methods=["POST"]))
    if methods is None:  # imported here: the per-method functions' cold start does without it
        from ..delegation.hook import HOOK_PATH

        routes.append(Route(HOOK_PATH, hook_endpoint, methods=["POST"]))
    routes.extend(rest_routes(current, methods))
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_exception, Exception: _unexpected},
        middleware=[Middleware(NegotiatedJson)],
    )
    setattr(app.state, SAM_LOCAL, sam_local())
    return app


def _given(runtime: Runtime) -> Callable[[], Runtime]:
    return lambda: runtime


def _log_as_the_functions_do() -> None:
    """The app serving in a process of its own (the gateway under the Web Adapter, the local stack's
    API process) logs as the functions do: Powertools' JSON lines, each with its level, an unexpected
    error's with its traceback and request id. With no handler at all, the standard library's last
    resort wrote them as bare text, which the local stack's console showed as INFO. A process that
    set up its own logging (a test, the stack in one process) keeps it."""
    if not logging.getLogger("a2a_serverless").hasHandlers():
        from ..lambda_ import _observability  # noqa: F401  # importing it configures the core's loggers


_CARD_SINCE = email.utils.formatdate(int(time.time()), usegmt=True)
"""``Last-Modified`` of the card: when this process started. The card is built from the settings and
the code, which change only with a new process (a deploy, a configuration change); an instance that
started later says a later date, so a client is never told a changed card is unchanged."""


def _not_modified(request: Request, etag: str) -> bool:
    """RFC 9110 13.2.2: ``If-None-Match`` when present, else ``If-Modified-Since``."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        return etag in {t.strip() for t in if_none_match.split(",")} or if_none_match.strip() == "*"
    since = request.headers.get("if-modified-since")
    if not since:
        return False
    try:
        asked = email.utils.parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False  # an unreadable date: ignored, as the RFC says
    return asked.tzinfo is not None and asked >= email.utils.parsedate_to_datetime(_CARD_SINCE)


def serve_card(request: Request, runtime: Runtime) -> Response:
    """The public card, cacheable (``Cache-Control``, ``ETag``, ``Last-Modified``; 304 on a matching
    ``If-None-Match``, or without one on an ``If-Modified-Since`` not before ``Last-Modified``), in
    the variant the caller's ``A2A-Version`` asks for, as a2a-js serves it: a 1.x caller (or any
    version not 0.x) gets the v1.0 card, only its fields (a v1.0 card schema allows no others); a
    caller without the header, or saying 0.x, the card both generations read: the v1.0 card with
    the v0.3 top-level fields merged in (A2A specification, section 3.6.2 Server Responsibilities), which v0.3 clients
    need and v1.x SDKs parse. Each variant has its own ETag, and every answer says ``Vary: A2A-Version`` (``Accept``
    too). With a card signing key, both carry the signature of the v1.0 card (:mod:`..card.signing`), whose
    URLs are the configured ones or API Gateway's, never the request's ``Host`` (:func:`._http.base_url`).
    A card that cannot be built (the executor's module fails to import, its card is invalid) or
    signed (no URL to trust) is one logged line and a generic internal error."""
    base = base_url(request, runtime)
    try:
        if not base:  # a signed card, and no URL to trust (never the request's Host)
            raise ConfigError(PUBLIC_URL_NEEDED)
        card = signed_card(public_card(runtime.settings, base), runtime.card_signer, base).to_wire()
    except ConfigError as exc:  # one line says it all: no traceback
        error = internal_error(request_id(request), f"cannot serve the agent card: {exc}", traceback=False)
        return error_response(error)
    if is_legacy_request(request):
        card = merged_card(card)
    body = json.dumps(card, separators=(",", ":")).encode()
    etag = card_etag(body)
    headers = {
        "Cache-Control": f"public, max-age={CARD_MAX_AGE}",
        "ETag": etag,
        "Last-Modified": _CARD_SINCE,
        "Vary": "A2A-Version",
    }
    if _not_modified(request, etag):
        # No body, so NegotiatedJson adds nothing: the 304 names what the 200 would vary on.
        return Response(status_code=304, headers={**headers, "Vary": "A2A-Version, Accept"})
    return Response(body, media_type="application/json", headers=headers)


async def receive_delegation_push(request: Request, runtime: Runtime) -> Response:
    """A remote agent's push about a task we delegated to it (:mod:`..delegation.hook`): verified
    by its token, it wakes the durable wait of the task that delegated. The answer is a small JSON
    object in fixed words; nothing of the task is said."""
    from ..delegation.hook import MAX_PEEK_BYTES, wake

    body = b""
    async for chunk in request.stream():  # what the receiver peeks at, at most: more wakes the wait
        body += chunk
        if len(body) > MAX_PEEK_BYTES:
            break
    answer = await asyncio.to_thread(wake, runtime, request.path_params["ref"], request.headers, body)
    return JSONResponse({"status": answer.reason}, status_code=answer.status)


def serve_jwks(request: Request, runtime: Runtime) -> Response:
    """The agent's public keys: the push signer's (every key still valid, so rotation never breaks a
    receiver's cache) and the card signer's; 404 when nothing is signed."""
    keys: list[JsonValue] = []
    for signer in (runtime.push_signer, runtime.card_signer):
        if signer is not None:
            keys.extend(signer.jwks()["keys"])
    if not keys:
        return error_response(MethodNotFoundError("This agent signs neither push notifications nor its card"))
    body = json.dumps({"keys": keys}, separators=(",", ":"), sort_keys=True).encode()
    headers = {"Cache-Control": f"public, max-age={CARD_MAX_AGE}", "ETag": card_etag(body)}
    return Response(body, media_type="application/jwk-set+json", headers=headers)


def _is_v03_path(request: Request) -> bool:
    """``/v1/...`` is the v0.3 REST binding (``v1`` is never a tenant), unless the caller asks for
    A2A 1.x (a 1.0 client that took ``/v1`` for a tenant): its errors take the v0.3 shape."""
    path, root = request.scope.get("path", ""), request.scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.startswith("/v1/") and not asks_for_v1(request)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    legacy = _is_v03_path(request)
    if exc.status_code == 405 and legacy:
        wrong_verb = MethodNotFoundError(f"{request.method} is not allowed on {request.url.path[:128]}")
        allow = _allowed_methods(request)
        headers = {"Allow": allow} if allow else None
        return JSONResponse(v03_rest_error(wrong_verb), status_code=405, media_type="application/json", headers=headers)
    if exc.status_code == 405:
        error: A2AError = MethodNotFoundError(f"{request.method} is not allowed on {request.url.path[:128]}")
        body = rest_error(error)
        body["error"]["code"] = 405  # error.code is the HTTP status (spec 11.6)
        # The gRPC name must match the HTTP status, and NOT_FOUND (404) does not: the path exists.
        # UNIMPLEMENTED ("not implemented or not supported/enabled in this service") is what
        # google.api.http transcoding answers for a known path with another verb (grpc-gateway's
        # routing error handler: 405 -> codes.Unimplemented), and the A2A specification (section 5.4 Error Code
        # Mappings) names no gRPC status for an unknown method (section 9.5 lists -32601 only). The reason stays
        # METHOD_NOT_FOUND.
        body["error"]["status"] = "UNIMPLEMENTED"
        allow = _allowed_methods(request)
        headers = {"Allow": allow} if allow else None
        return JSONResponse(body, status_code=405, media_type=REST_MEDIA_TYPE, headers=headers)
    return error_response(MethodNotFoundError(f"No A2A route {request.method} {request.url.path[:128]}"), legacy=legacy)


def _allowed_methods(request: Request) -> str:
    """``Allow`` for a 405: the verbs of every route matching the path (Starlette names only the
    first, and ``/tasks/{id}:subscribe`` has two routes)."""
    verbs: set[str] = set()
    for route in request.app.routes:
        if isinstance(route, Route) and route.methods and route.matches(request.scope)[0] != Match.NONE:
            verbs |= route.methods
    return ", ".join(sorted(verbs))


def _is_jsonrpc(request: Request) -> bool:
    """``POST /`` (below any root path): the JSON-RPC endpoint."""
    path, root = request.scope.get("path", ""), request.scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return request.method == "POST" and path in ("", "/")


async def _unexpected(request: Request, exc: Exception) -> Response:
    """The last resort: a generic internal error, in the shape of the binding that was called
    (a JSON-RPC caller never gets a REST error body)."""
    error = internal_error(request_id(request), "unhandled error")
    if _is_jsonrpc(request):
        return JSONResponse(jsonrpc_error(error, None))  # HTTP 200, like every JSON-RPC error here
    return error_response(error)
