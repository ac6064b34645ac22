"""The DynamoDB adapters: ``TaskStore`` and ``AgentStateStore`` on the single table ``TasksTable``
of ``template.yaml``.

One door: :class:`.table.Table` is the only holder of the boto3 client, and each conditional write
is one of its named methods. Around it, :mod:`.store` (the task store: its item layout and write
rules), :mod:`.reads` (a task assembled from its snapshot and log), :mod:`.queries` (Query
arguments), :mod:`.push` (push configs' delivery marks), :mod:`.delegation` (delegation
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
