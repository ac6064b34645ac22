"""``AgentStateStore`` in process memory: the honest fake of :mod:`.dynamodb.agent_state` (copies
on read and write, the same conditions and limits; entries never expire)."""

from __future__ import annotations

import threading

from ..ports.agent_state import MAX_STATE_BYTES, SavedState, StateConflict
from ..ports.store import Scope

__all__ = ["MemoryAgentStateStore"]


class MemoryAgentStateStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[Scope, str], SavedState] = {}

    def load_state(self, scope: Scope, key: str) -> SavedState | None:
        with self._lock:
            return self._entries.get((scope, key))

    def save_state(self, scope: Scope, key: str, data: bytes, *, version: int) -> int:
        if len(data) > MAX_STATE_BYTES:
            raise ValueError(f"agent state of {len(data)} bytes is over {MAX_STATE_BYTES}")
        with self._lock:
            stored = self._entries.get((scope, key))
            if (stored.version if stored else 0) != version:
                raise StateConflict(f"agent state {key!r} changed since it was loaded")
            self._entries[(scope, key)] = SavedState(bytes(data), version + 1)
            return version + 1
