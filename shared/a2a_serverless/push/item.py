"""``DeliveryItem``: one unit of push delivery work, as the delivery queue carries it.

It is the vocabulary the push modules share (dispatch makes items, :mod:`.delivery` delivers them,
:mod:`.attempts` records each try, :mod:`.redrive` moves dead-lettered ones back), so it sits below
them all and imports none of them; :mod:`.delivery` re-exports it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from ..ports import Scope

__all__ = ["DeliveryItem"]


@dataclass(frozen=True, slots=True)
class DeliveryItem:
    """One unit of delivery work: events of a task up to ``up_to_seq``, to one config.

    ``from_seq`` is 0 for ordinary items (start after the config's cursor) and set on redriven
    dead letters (deliver exactly ``from_seq``..``up_to_seq``). ``last_error`` travels with a dead
    letter so whoever looks at the queue knows why. ``nonce`` makes a redriven copy a new message
    for SQS's five-minute deduplication. ``redrive`` names the redrive that moved the item, and
    stays on what it dead-letters again: that redrive never moves it a second time
    (:mod:`.redrive`).
    """

    tenant: str
    owner: str
    task_id: str
    config_id: str
    up_to_seq: int
    from_seq: int = 0
    last_error: str = ""
    nonce: str = field(default="", compare=False)
    redrive: str = ""
    trace: str = field(default="", compare=False)  # the dispatch's traceparent (a2a_serverless.telemetry)

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant, self.owner)

    @property
    def group_id(self) -> str:
        """The FIFO message group: one per (scope, task, config), SQS-safe (hex, 64 chars)."""
        return _digest(self.tenant, self.owner, self.task_id, self.config_id)

    @property
    def deduplication_id(self) -> str:
        return _digest(self.group_id, str(self.from_seq), str(self.up_to_seq), self.nonce)

    def to_json(self) -> str:
        data = {k: v for k, v in asdict(self).items() if v not in ("", 0) or k == "up_to_seq"}
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, body: str) -> DeliveryItem:
        data = json.loads(body)
        return cls(
            tenant=str(data.get("tenant", "")),
            owner=str(data["owner"]),
            task_id=str(data["task_id"]),
            config_id=str(data["config_id"]),
            up_to_seq=int(data["up_to_seq"]),
            from_seq=int(data.get("from_seq", 0)),
            last_error=str(data.get("last_error", "")),
            nonce=str(data.get("nonce", "")),
            redrive=str(data.get("redrive", "")),
            trace=str(data.get("trace", "")),
        )


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
