"""``Scope``: whose data a port's call reaches (tenant + owner), the one key every port is scoped by.

It sits below the ports that take it (:mod:`.store`, :mod:`.push_marks`, :mod:`.delegation`,
:mod:`.agent_state`), so each of them imports it from here and none imports another for it;
:mod:`.store` re-exports it, and :mod:`a2a_serverless.ports` exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Scope"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose data: the tenant (opaque routing id, may be empty) and the authenticated owner."""

    tenant: str
    owner: str
