"""The gateway app the local stack serves, and the uvicorn server that serves it: in the API process
(:mod:`._processes`), or in the stack's own process when tests run everything there (:mod:`.stack`).
"""

from __future__ import annotations

import socket
import sys
from types import FrameType
from typing import TYPE_CHECKING, cast

import uvicorn

from a2a_serverless.transport.sse import end_streams

from ._functions import import_callable

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["GATEWAY_APP", "GatewayServer", "gateway_app"]

GATEWAY_APP = "a2a_serverless.transport.app:create_app"
"""The app factory uvicorn serves: the same Starlette app the gateway function runs."""


class GatewayServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, *, ready_line: str) -> None:
        super().__init__(config)
        self._ready_line = ready_line

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # uvicorn's own handler while it serves: open streams end now, cleanly, rather than be cut
        # off when its graceful shutdown times out.
        end_streams()
        super().handle_exit(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            # Tests and scripts wait for this line: the socket accepts connections from here on.
            sys.stdout.write(self._ready_line + "\n")
            sys.stdout.flush()


def gateway_app() -> ASGIApp:
    return cast("ASGIApp", import_callable(GATEWAY_APP, "the gateway app factory")())
