"""``context.state``: what an executor keeps between its runs, bound to the run's caller.

The worker gives every run an :class:`AgentState` scoped to the task's tenant and owner
(:class:`~a2a_serverless.ports.Scope`), made from its runtime's stores: this module knows the ports,
not the runtime (which names the executor API, which names this class). An executor names its
entries (a conversation by its ``contextId``, a paused run by its task id) and can never reach
another owner's: the scope is not its to choose. Entries are bytes; one larger than
:data:`INLINE_STATE_BYTES` is stored as an object in the blob store (S3 on AWS) under the scope's
own prefix, and the entry holds its digest.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass

from ..blobs import blob_key
from ..ports import BlobStore, Scope
from ..ports.agent_state import AgentStateStore, SavedState

__all__ = ["INLINE_STATE_BYTES", "AgentState", "SavedState"]

INLINE_STATE_BYTES = 256 * 1024
"""Entries up to this size are stored in the table itself; larger ones as objects."""

_INLINE = b"\x00"
_OBJECT = b"\x01"


@dataclass(frozen=True)
class AgentState:
    """The run's caller's entries. ``load`` gives the entry and its version; ``save`` writes it if
    nobody saved it since that version (0: new), else raises
    :class:`~a2a_serverless.ports.agent_state.StateConflict`; both run off the event loop."""

    store: AgentStateStore
    blobs: BlobStore | None
    scope: Scope

    async def load(self, key: str) -> SavedState | None:
        return await asyncio.to_thread(self._load, key)

    async def save(self, key: str, data: bytes, *, version: int) -> int:
        return await asyncio.to_thread(self._save, key, data, version)

    def _load(self, key: str) -> SavedState | None:
        saved = self.store.load_state(self.scope, key)
        if saved is None:
            return None
        if saved.data[:1] == _OBJECT:
            if self.blobs is None:
                raise RuntimeError(f"agent state {key!r} is stored as an object, and no blob store is configured")
            return SavedState(self.blobs.get(self._object_key(key, saved.data[1:].decode())), saved.version)
        return SavedState(saved.data[1:], saved.version)

    def _save(self, key: str, data: bytes, version: int) -> int:
        if len(data) <= INLINE_STATE_BYTES or self.blobs is None:
            return self.store.save_state(self.scope, key, _INLINE + data, version=version)
        digest = hashlib.sha256(data).hexdigest()
        self.blobs.put(self._object_key(key, digest), data, "application/octet-stream")
        return self.store.save_state(self.scope, key, _OBJECT + digest.encode(), version=version)

    def _object_key(self, key: str, digest: str) -> str:
        # Under the scope's prefix for this entry (as a task's parts are under the task's).
        return blob_key(self.scope, "state\x00" + key, digest)
