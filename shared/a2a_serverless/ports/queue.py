"""The ``WorkQueue`` port: hands a task's pending message to a worker.

On AWS this is an SQS FIFO queue (message group = task id, so one task's work is never processed
concurrently; deduplication id derived from the scope and message id, so a retried send enqueues
once). Delivery is at least once: the worker's conditional claim makes the effect exactly once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Protocol

__all__ = ["WorkItem", "WorkQueue"]


@dataclass(frozen=True, slots=True)
class WorkItem:
    tenant: str
    owner: str
    task_id: str
    message_id: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, body: str) -> WorkItem:
        data = json.loads(body)
        return cls(
            tenant=str(data["tenant"]),
            owner=str(data["owner"]),
            task_id=str(data["task_id"]),
            message_id=str(data["message_id"]),
        )

    @property
    def deduplication_id(self) -> str:
        """Stable, SQS-safe (hex, 64 chars) id for this unit of work."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()


class WorkQueue(Protocol):
    def enqueue(self, item: WorkItem) -> None:
        """Durably schedule ``item``. Raises on failure (the caller must not leave the task stuck)."""
        ...
