"""The delegation references of :class:`.store.DynamoDBTaskStore` (``ports.delegation``).

One item each, ``pk=DELEG#<ref>``, ``sk=DELEG``: ``tenant``, ``owner``, ``taskId`` and
``tokenDigest``, and ``ttl`` (the store's ``ttl_days`` from its creation; the delegation deletes it
when it ends). Not under a scope: the reference (256 random bits) is all a push names, and the
item says whose task it stands for. A put is conditioned on the key being free, so no reference
is ever taken over. The push functions' stream filter (``sk`` prefixes ``EVT#`` and ``PUSH#``)
drops these items.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from urllib.parse import quote

from ...ports.delegation import DelegationRef
from ...ports.store import Scope, VersionConflict
from .table import Item, Table, ttl_epoch

__all__ = ["DynamoDBDelegationRefs"]

_SK = "DELEG"


def _key(ref: str) -> Item:
    return {"pk": {"S": f"DELEG#{quote(ref, safe='')}"}, "sk": {"S": _SK}}


class DynamoDBDelegationRefs:
    """Part of the store: it has the table, its TTL days and its clock."""

    _table: Table
    _ttl_days: int
    _clock: Callable[[], datetime]

    def put_delegation_ref(self, ref: str, target: DelegationRef) -> None:
        item: Item = {
            **_key(ref),
            "tenant": {"S": target.scope.tenant},
            "owner": {"S": target.scope.owner},
            "taskId": {"S": target.task_id},
            "tokenDigest": {"S": target.token_digest},
        }
        if (ttl := ttl_epoch(self._clock(), self._ttl_days)) is not None:
            item["ttl"] = {"N": str(ttl)}
        if not self._table.put_new(item):
            raise VersionConflict("this delegation reference is taken")

    def find_delegation_ref(self, ref: str) -> DelegationRef | None:
        key = _key(ref)
        item = self._table.get(str(key["pk"]["S"]), _SK)
        if item is None:
            return None
        scope = Scope(str(item["tenant"]["S"]), str(item["owner"]["S"]))
        return DelegationRef(scope, str(item["taskId"]["S"]), str(item["tokenDigest"]["S"]))

    def delete_delegation_ref(self, ref: str) -> None:
        self._table.delete(_key(ref))
