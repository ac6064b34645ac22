"""``AgentStateStore`` on the tasks table: one item per entry, beside the tasks of its scope.

``pk=STATE#<tenant>#<owner>#<digest of the key>``, ``sk=STATE``: ``data`` (zlib-compressed bytes),
``version``, ``key`` (as the agent named it, for operators) and ``ttl`` (``ttl_days`` after the
last save). A save is one conditional PutItem (the functions that run agents already may put and
get items of the table); the table's stream carries it, and the push dispatcher's filter (log and
config inserts only) drops it.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from typing import TYPE_CHECKING

from ...ports.agent_state import MAX_STATE_BYTES, SavedState, StateConflict
from ...ports.store import Scope
from .table import Item, Keys, Table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["DynamoDBAgentStateStore"]

_SK = "STATE"


def state_pk(scope: Scope, key: str) -> str:
    """The entry's partition: its scope's (as the tasks' keys encode it) and the key's digest, so
    no agent-chosen text of any length reaches the key."""
    scoped = Keys(scope).scope_gsi_pk().removeprefix("SCOPE#")
    return f"STATE#{scoped}#{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()}"


class DynamoDBAgentStateStore:
    def __init__(self, table_name: str, *, ttl_days: int = 30, client: DynamoDBClient | None = None) -> None:
        self._table = Table(table_name, client)
        self._ttl_days = ttl_days

    def load_state(self, scope: Scope, key: str) -> SavedState | None:
        item = self._table.get(state_pk(scope, key), _SK)
        if item is None:
            return None
        return SavedState(zlib.decompress(bytes(item["data"]["B"])), int(item["version"]["N"]))

    def save_state(self, scope: Scope, key: str, data: bytes, *, version: int) -> int:
        if len(data) > MAX_STATE_BYTES:
            raise ValueError(f"agent state of {len(data)} bytes is over {MAX_STATE_BYTES}")
        packed = zlib.compress(data, 6)
        if len(packed) > MAX_STATE_BYTES:  # incompressible: as large as the limit allows
            raise ValueError(f"agent state of {len(packed)} compressed bytes is over {MAX_STATE_BYTES}")
        item: Item = {
            "pk": {"S": state_pk(scope, key)},
            "sk": {"S": _SK},
            "key": {"S": key},
            "data": {"B": packed},
            "version": {"N": str(version + 1)},
        }
        if self._ttl_days > 0:
            item["ttl"] = {"N": str(int(time.time()) + self._ttl_days * 86400)}
        saved = self._table.put_at_version(item, version) if version else self._table.put_new(item)
        if not saved:
            raise StateConflict(f"agent state {key!r} changed since it was loaded")
        return version + 1
