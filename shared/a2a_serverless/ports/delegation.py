"""The store's part in durable delegation's push receiver (``a2a_serverless.delegation.hook``).

A delegation gives the remote agent the URL of our push receiver under a reference that is random
and opaque: it names nothing of our tenant, caller or task. The store keeps what each reference
stands for (:class:`DelegationRef`) until the delegation ends. These references are the one thing
the store finds across scopes: a push names nothing else, and the token it must carry (whose
digest the answer holds) is checked before anything of the task is touched.

What the push receiver changes on the task is its head's ``push_woken`` (the remote states whose
pushes woke the delegation), a rule of :mod:`a2a_serverless.transitions` committed like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .scope import Scope

__all__ = ["DelegationRef", "DelegationRefs"]


@dataclass(frozen=True, slots=True)
class DelegationRef:
    """What a reference stands for: the task that delegated, in its scope, and the SHA-256 (hex) of
    the token the remote's pushes carry."""

    scope: Scope
    task_id: str
    token_digest: str


class DelegationRefs(Protocol):
    """Part of ``TaskStore`` (both stores keep them beside the tasks)."""

    def put_delegation_ref(self, ref: str, target: DelegationRef) -> None:
        """Store what ``ref`` stands for, only if ``ref`` is free (``VersionConflict`` otherwise: a
        reference is never taken over). It expires with the store's TTL (DynamoDB) unless deleted."""
        ...

    def find_delegation_ref(self, ref: str) -> DelegationRef | None:
        """What ``ref`` stands for (strongly consistent), or None."""
        ...

    def delete_delegation_ref(self, ref: str) -> None:
        """Idempotent: the delegation ended, ``ref`` stands for nothing any more."""
        ...
