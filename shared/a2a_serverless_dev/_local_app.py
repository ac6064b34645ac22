"""The app the local stack serves: the gateway app, the console when it is on, and in front of both
the check of whom the stack answers (:mod:`._hosts`: its own ``Host``, no page of another origin).

A refused request is answered 403 in the shape of what it asked for: a JSON-RPC error at ``POST /``,
the REST binding's error (v0.3's under ``/v1``) elsewhere, the dev API's plain ``{"error"}`` under
the console. The stack's A2A routes (v1.0, section 9 (JSON-RPC) and 11 (HTTP+JSON) of the A2A
specification) are the deployed app's; only this wrapper is the local stack's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from a2a_serverless.errors import A2AError
from a2a_serverless.transport._render import jsonrpc_error
from a2a_serverless.transport.rest import error_response
from a2a_serverless.transport.rows import asks_for_v1, is_legacy_request

from ._hosts import Authorities, Refusal
from .console import CONSOLE_PATH, SECURITY_HEADERS, with_console

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from a2a_serverless.runtime import Runtime

__all__ = ["ForeignHostError", "ForeignOriginError", "LocalOnly", "local_app"]


class _Refused(A2AError):
    jsonrpc_code, http_status, grpc_status = -32600, 403, "PERMISSION_DENIED"


class ForeignHostError(_Refused):
    """The request's ``Host`` is not the local stack's (DNS rebinding)."""

    reason, default_message = "HOST_NOT_ALLOWED", "This local stack does not answer for that Host"


class ForeignOriginError(_Refused):
    """The request comes from a page of another origin."""

    reason, default_message = "ORIGIN_NOT_ALLOWED", "A page of another origin may not call this local stack"


def _answer(scope: Scope, refusal: Refusal) -> Response:
    error: A2AError = (ForeignHostError if refusal.check == "host" else ForeignOriginError)(refusal.message)
    path = str(scope.get("path", ""))
    if path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/"):
        return JSONResponse({"error": refusal.message}, status_code=403, headers=SECURITY_HEADERS)
    request = Request(scope)
    if path == "/" and request.method == "POST":
        return JSONResponse(jsonrpc_error(error, None, legacy=is_legacy_request(request)), status_code=403)
    response = error_response(error, legacy=path.startswith("/v1/") and not asks_for_v1(request))
    response.status_code = 403
    return response


class LocalOnly:
    """ASGI middleware: every HTTP request (and WebSocket) whose ``Host`` or ``Origin``
    ``authorities`` refuse is answered 403; the rest reach ``app``."""

    def __init__(self, app: ASGIApp, authorities: Authorities) -> None:
        self.app = app
        self.authorities = authorities

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.authorities.refusal(headers.get("host"), headers.get("origin"))
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refusal.check})
        else:
            await _answer(scope, refusal)(scope, receive, send)


def local_app(app: ASGIApp, get_runtime: Callable[[], Runtime], *, host: str, port: int, console: bool) -> ASGIApp:
    """``app`` as the local stack serves it on ``host``:``port``: with the console (``console``),
    behind :class:`LocalOnly`."""
    served = with_console(app, get_runtime) if console else app
    return LocalOnly(served, Authorities.serving(host, port))
