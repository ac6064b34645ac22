"""The DynamoDB adapters: ``TaskStore`` and ``AgentStateStore`` on the single table ``TasksTable``
of ``template.yaml``.

One door: :mod:`.table` holds the table's keys and items and :class:`.table.Table`, the only
holder of the boto3 client, whose named methods are the table's conditional writes. Around it,
:mod:`.store` (the task store: its item layout and write rules), :mod:`.reads` (a task assembled
from its snapshot and log), :mod:`.queries` (Query arguments), :mod:`.delegation` (delegation
references) and :mod:`.agent_state` (agents' saved state).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent_state import DynamoDBAgentStateStore
    from .store import DynamoDBTaskStore

__all__ = ["DynamoDBAgentStateStore", "DynamoDBTaskStore"]

_MODULES = {"DynamoDBAgentStateStore": ".agent_state", "DynamoDBTaskStore": ".store"}


def __getattr__(name: str) -> Any:
    """Each store is imported when it is first named: a function that keeps no agent state does
    not load that module."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
