"""The delegation references of :class:`.memory_store.MemoryTaskStore` (``ports.delegation``): a
dictionary of its own, beside the tasks, as DynamoDB keeps them in items of their own."""

from __future__ import annotations

import threading

from ..ports.delegation import DelegationRef
from ..ports.store import VersionConflict

__all__ = ["MemoryDelegationRefs"]


class MemoryDelegationRefs:
    def __init__(self) -> None:
        self._refs_lock = threading.Lock()
        self._refs: dict[str, DelegationRef] = {}

    def put_delegation_ref(self, ref: str, target: DelegationRef) -> None:
        with self._refs_lock:
            if ref in self._refs:
                raise VersionConflict("this delegation reference is taken")
            self._refs[ref] = target

    def find_delegation_ref(self, ref: str) -> DelegationRef | None:
        with self._refs_lock:
            return self._refs.get(ref)

    def delete_delegation_ref(self, ref: str) -> None:
        with self._refs_lock:
            self._refs.pop(ref, None)
