"""The app on a memory runtime, called in process over httpx (no server)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime


@contextlib.asynccontextmanager
async def memory_app(**settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``create_app`` on a memory runtime (``settings`` over quick-polling defaults);
    the runtime's inline runs are shut down when it closes."""
    runtime = build_runtime(
        Settings(**{"store": "memory", "poll_interval_seconds": 0.005, **settings}), store=MemoryTaskStore()
    )
    transport = httpx.ASGITransport(app=create_app(runtime))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]
