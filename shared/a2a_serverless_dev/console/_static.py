"""The console's page and its static files, each sent with the console's security headers, and
one module the server writes: ``media-types.js``, the media types the page may show as themselves
(the S3 adapter's allowlist, so the list is written once)."""

from __future__ import annotations

import json
import re
from importlib import resources

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from a2a_serverless.adapters.s3_blobs import PASSIVE_MEDIA_TYPES

__all__ = ["CONSOLE_PATH", "SECURITY_HEADERS", "static_routes"]

CONSOLE_PATH = "/_console"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        # Inline images: the blob URLs the page makes from a file part's bytes and data URLs (no
        # request leaves the page). Never another host's: an image an agent names by URL would be
        # a beacon on whoever views it (render.js offers a link to open it instead).
        "img-src 'self' data: blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
"""No inline script or style, nothing from another origin: the page talks to other agents through
the dev API's proxy, never directly, and shows their images only when it holds the bytes."""

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\.(html|css|js|png|svg)$")

_GENERATED = {
    "media-types.js": (
        "// Written by the server (console/_static.py) from a2a_serverless.adapters.s3_blobs.\n"
        f"export const PASSIVE_MEDIA_TYPES = new Set({json.dumps(sorted(PASSIVE_MEDIA_TYPES))});\n"
    ).encode()
}
"""Modules the server writes from its own constants, served like the static files."""


def _file(name: str) -> bytes | None:
    if name in _GENERATED:
        return _GENERATED[name]
    if not _NAME.match(name):
        return None
    entry = resources.files(__package__).joinpath("static", name)
    return entry.read_bytes() if entry.is_file() else None


def _send(name: str) -> Response:
    body = _file(name)
    if body is None:
        return Response("not found", status_code=404, media_type="text/plain", headers=SECURITY_HEADERS)
    media_type = _MEDIA_TYPES["." + name.rsplit(".", 1)[1]]
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)


async def _index(request: Request) -> Response:
    return _send("index.html")


async def _bare(request: Request) -> Response:
    return RedirectResponse(CONSOLE_PATH + "/", status_code=307)


async def _asset(request: Request) -> Response:
    return _send(str(request.path_params["name"]))


def static_routes() -> list[BaseRoute]:
    return [
        Route(CONSOLE_PATH, _bare, methods=["GET"]),
        Route(CONSOLE_PATH + "/", _index, methods=["GET"]),
        Route(CONSOLE_PATH + "/static/{name}", _asset, methods=["GET"]),
    ]
