"""What every agent of the interop chains (``tests/e2e/test_interop_chain.py``) shares: its orders,
its answers, and a record of the HTTP requests it served and sent. Standard library only: the
a2a-sdk 0.3 agent imports it in ``.venv-a2a03`` too.

Orders are the user's text. ``call CARD BINDING REST`` has the agent send ``REST`` to the agent whose
card is at ``CARD`` with an a2a-sdk client on ``BINDING`` (``-``: the binding the card prefers);
``delegate CARD BINDING REST`` does the same through ``a2a_serverless.delegation`` (our agent only).
An agent that forwards relays the remote's artifact chunks as they come and completes saying
``<its name> > <what the remote said>``. Any other text ends the chain: the agent streams the
artifact ``answer`` (``count N ...``: the chunks ``chunk 0`` to ``chunk N-1``, each appended to the
last; anything else: one chunk, ``<name>: <text>``) and completes saying ``<its name>: <text>``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CHUNK_PAUSE_SECONDS",
    "Order",
    "Recorder",
    "answer_chunks",
    "answer_stream",
    "ended",
    "forwarded",
    "order_of",
]

CHUNK_PAUSE_SECONDS = 0.05
"""Between two chunks, so that each is an event of its own on every stream (not a measured expectation)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Order:
    verb: str
    """``call`` or ``delegate``."""
    card_url: str
    binding: str | None
    """``JSONRPC`` or ``HTTP+JSON``; None: the card's preference."""
    text: str
    """What to send on."""


def order_of(text: str) -> Order | None:
    """The order in the user's ``text``, or None when it ends the chain."""
    words = text.split(maxsplit=3)
    if len(words) < 4 or words[0] not in ("call", "delegate"):
        return None
    return Order(words[0], words[1], None if words[2] == "-" else words[2], words[3])


def answer_chunks(name: str, text: str) -> list[str]:
    """The chunks of the artifact ``answer`` of the agent that ends the chain."""
    words = text.split()
    if len(words) >= 2 and words[0] == "count" and words[1].isdigit():
        return [f"chunk {i}" for i in range(int(words[1]))]
    return [f"{name}: {text}"]


async def answer_stream(name: str, text: str) -> AsyncIterator[tuple[str, bool, bool]]:
    """:func:`answer_chunks` as ``(text, append, last_chunk)``, paced by :data:`CHUNK_PAUSE_SECONDS`."""
    chunks = answer_chunks(name, text)
    for i, chunk in enumerate(chunks):
        if i:
            await asyncio.sleep(CHUNK_PAUSE_SECONDS)
        yield chunk, i > 0, i == len(chunks) - 1


def ended(name: str, text: str) -> str:
    """What the agent that ends the chain says as it completes."""
    return f"{name}: {text}"


def forwarded(name: str, said: str) -> str:
    """What an agent that forwarded says as it completes, given what the remote said."""
    return f"{name} > {said}"


class Recorder:
    """An ASGI middleware keeping ``(method, path, JSON-RPC method)`` of each request the app serves
    (``served``) and, by :meth:`sent` as an httpx request hook, each request the agent sends
    (``sent``); ``GET /_requests`` answers both as JSON, and is not recorded."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.log: dict[str, list[list[str]]] = {"served": [], "sent": []}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "GET" and scope["path"] == "/_requests":
            body = json.dumps(self.log).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        entry = [scope["method"], scope["path"], ""]
        self.log["served"].append(entry)
        chunks: list[bytes] = []

        async def peek() -> Message:
            message = await receive()
            if message["type"] == "http.request" and entry[1] == "/":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    entry[2] = _rpc_method(b"".join(chunks))
            return message

        await self.app(scope, peek, send)

    async def sent(self, request: Any) -> None:
        """An httpx request hook."""
        rpc = _rpc_method(request.content) if request.url.path == "/" and request.method == "POST" else ""
        self.log["sent"].append([request.method, request.url.path, rpc])


def _rpc_method(body: bytes) -> str:
    try:
        method = json.loads(body).get("method", "")
    except (ValueError, AttributeError):
        return ""
    return method if isinstance(method, str) else ""
