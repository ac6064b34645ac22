"""The local console: a page at ``/_console`` that talks to the agent through its public A2A
endpoints, plus a small dev-only JSON API (``/_console/api/``) for what A2A does not expose.

Only the local stack serves it (``a2a-serverless dev``); the deployed app never does:
:func:`~a2a_serverless.transport.app.create_app` knows nothing of it, and the template routes
nothing under ``/_console``. The page is static files (plain HTML, CSS and JavaScript modules, no
build step) sent with a strict Content-Security-Policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from a2a_serverless.runtime import Runtime

from ._api import api_routes
from ._static import CONSOLE_PATH, SECURITY_HEADERS, static_routes

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

__all__ = ["CONSOLE_PATH", "SECURITY_HEADERS", "console_app", "console_routes", "with_console"]


def console_routes(
    get_runtime: Callable[[], Runtime], *, sqs: Callable[[], SQSClient] | None = None
) -> list[BaseRoute]:
    """The console's routes (page, static files, dev API), all under :data:`CONSOLE_PATH`.
    ``sqs`` builds the SQS client the dead-letter endpoints use (default: boto3's, from the
    environment the local stack sets)."""
    return [*static_routes(), *(api_routes(get_runtime) if sqs is None else api_routes(get_runtime, sqs=sqs))]


def console_app(get_runtime: Callable[[], Runtime], *, sqs: Callable[[], SQSClient] | None = None) -> Starlette:
    return Starlette(routes=console_routes(get_runtime, sqs=sqs))


def with_console(
    app: ASGIApp, get_runtime: Callable[[], Runtime], *, sqs: Callable[[], SQSClient] | None = None
) -> ASGIApp:
    """``app``, with every path under :data:`CONSOLE_PATH` answered by the console instead: works
    for any ASGI app (the gateway app, or the durable one wrapped with its status route)."""
    console = console_app(get_runtime, sqs=sqs)

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (path == CONSOLE_PATH or str(path).startswith(CONSOLE_PATH + "/")):
            await console(scope, receive, send)
            return
        await app(scope, receive, send)

    return serve
