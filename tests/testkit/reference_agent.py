"""The a2a-sdk 1.x reference server (``bench/_reference_server.py``: its echo executor, ``tick N
SECONDS`` streaming N appended chunks) served on 127.0.0.1 in a thread of the test process."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from testkit.served import served

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["reference_agent"]

SERVER = Path(__file__).resolve().parents[2] / "bench" / "_reference_server.py"


class _Later:
    """An ASGI app made once its URL is known (the reference app's card names its own URL)."""

    def __init__(self) -> None:
        self.app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        await self.app(scope, receive, send)


@contextlib.contextmanager
def reference_agent(*, push: bool = False) -> Iterator[str]:
    """The reference server's base URL (its card at ``/.well-known/agent-card.json``) until the block
    ends; ``push``: it sends push notifications (and its card says so)."""
    spec = importlib.util.spec_from_file_location("_reference_server", SERVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    later = _Later()
    with served(later) as url:
        later.app = module.create_reference_app(url, push=push)
        yield url
