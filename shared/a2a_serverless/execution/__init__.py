"""Running the user's agent: the executor API, the task updater and the worker.

The names exported here load on first use (PEP 562): the scheduled sweeper imports
:mod:`.sweeper`, which needs neither the executor API nor asyncio, and its cold start does not pay
for them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .api import AgentExecutor, Event, EventQueue, RequestContext
    from .updater import TaskUpdater

__all__ = ["AgentExecutor", "Event", "EventQueue", "RequestContext", "TaskUpdater"]

_HOMES = {
    "AgentExecutor": ".api",
    "Event": ".api",
    "EventQueue": ".api",
    "RequestContext": ".api",
    "TaskUpdater": ".updater",
}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)
