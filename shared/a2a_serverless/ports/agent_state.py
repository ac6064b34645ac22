"""The ``AgentStateStore`` port: what an agent keeps between its runs, per caller.

A framework adapter (:mod:`a2a_serverless.frameworks`) keeps two kinds of state here: a
conversation's memory (keyed by the A2A ``contextId``) and the state of a run paused for a person
(keyed by the task), so that the next message resumes it on whatever instance it lands. Every
entry is addressed by a :class:`~.scope.Scope` (tenant + owner) and a key the agent chooses: two
owners that use the same ``contextId`` address two different entries, by construction.

Entries are opaque bytes with a ``version``; a save is conditional on the version the writer
loaded (0: the entry must not exist), so two runs of one context cannot silently overwrite each
other's memory. Entries expire with the deployment's task TTL after their last save (DynamoDB).
Implementations: :mod:`a2a_serverless.adapters.memory_agent_state` and
:mod:`a2a_serverless.adapters.dynamodb.agent_state`. Entries larger than one item are stored as
objects by the caller (:mod:`a2a_serverless.execution.agent_state`), never here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .store import Scope, StoreError

__all__ = ["MAX_STATE_BYTES", "AgentStateStore", "SavedState", "StateConflict"]

MAX_STATE_BYTES = 300 * 1024
"""The most bytes one entry may hold here (DynamoDB's 400 KB item, less room for the keys)."""


@dataclass(frozen=True, slots=True)
class SavedState:
    data: bytes
    version: int


class StateConflict(StoreError):
    """The entry's version is not the one the writer loaded (another run saved it meanwhile).
    Nothing was written."""


class AgentStateStore(Protocol):
    def load_state(self, scope: Scope, key: str) -> SavedState | None:
        """The entry ``key`` of ``scope`` (strongly consistent), or None."""
        ...

    def save_state(self, scope: Scope, key: str, data: bytes, *, version: int) -> int:
        """Write ``data`` as the entry if its stored version is ``version`` (0: it must not exist)
        and return the new version. Raises :class:`StateConflict` otherwise, ``ValueError`` for
        data over :data:`MAX_STATE_BYTES`."""
        ...
