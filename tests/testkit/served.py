"""An ASGI app served by uvicorn on 127.0.0.1 (a free port) in a thread of the test process, for the
tests that need a real HTTP server: a browser, or the local stack's proxy, calling it."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import uvicorn

from testkit.waiting import wait_until

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["Later", "served"]

WAIT = 30.0
"""Hang guard (seconds) for the server to start, and to stop; never a measured expectation."""


class Later:
    """An ASGI app made once its URL is known (set ``app`` after :func:`served` gave the URL): an
    agent whose card names its own URL, say."""

    def __init__(self) -> None:
        self.app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        await self.app(scope, receive, send)


@contextlib.contextmanager
def served(app: ASGIApp) -> Iterator[str]:
    """``app``'s base URL (``http://127.0.0.1:<port>``) until the block ends."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), "the server to start", within=WAIT, every=0.05)
        assert server.started, "the server stopped before it started"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=WAIT)
        sock.close()
