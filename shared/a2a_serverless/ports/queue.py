"""The ``WorkQueue`` port: hands a task's pending message to a worker.

On AWS this is an SQS FIFO queue (message group = task id, so one task's work is never processed
concurrently; deduplication id derived from the item: scope, message id and turn, so a retried send
enqueues once). Delivery is at least once: the worker's conditional claim makes the effect exactly once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from typing import Protocol

__all__ = ["MAX_WORK_ITEM_BYTES", "TRACE_FIELD_BYTES", "WorkItem", "WorkQueue"]

MAX_WORK_ITEM_BYTES = 256 * 1024
"""The largest ``WorkItem.to_json()`` a queue takes: SQS's default maximum message size (the
template's queues keep it). SendMessage checks it before it stores anything."""
TRACE_FIELD_BYTES = max(len(',"trace":""'), len("traceparent") + len("String")) + 55
"""What a work item's trace adds to its message (a W3C traceparent is 55 characters): in the body
(``"trace"``, a durable execution's input), or as SQS's ``traceparent`` message attribute, whose
name, type and value count towards the message's size."""


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One message for the worker to run. Besides naming it, the item carries what the executor's
    ``RequestContext`` needs of the request that sent it and that the task does not keep: the
    request's ``configuration`` (ProtoJSON, without push-config credentials) and ``metadata``
    (JSON), and the extensions the caller requested."""

    tenant: str
    owner: str
    task_id: str
    message_id: str
    configuration: str = ""
    metadata: str = ""
    extensions: tuple[str, ...] = ()
    turn: int = 0
    """The task's last event number when it accepted the message: tells apart two turns that
    reuse one messageId for two messages, whose items would otherwise share a deduplication id,
    and SQS would drop the second."""
    trace: str = ""
    """The W3C ``traceparent`` of the enqueue when tracing is on (:mod:`a2a_serverless.telemetry`):
    the run continues the request's trace. Not part of the deduplication id (a re-send is the same
    work, whatever trace it came in)."""

    def to_json(self) -> str:
        data = {k: v for k, v in asdict(self).items() if v or k in _NAMING}
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, body: str) -> WorkItem:
        data = json.loads(body)
        return cls(
            tenant=str(data["tenant"]),
            owner=str(data["owner"]),
            task_id=str(data["task_id"]),
            message_id=str(data["message_id"]),
            configuration=str(data.get("configuration", "")),
            metadata=str(data.get("metadata", "")),
            extensions=tuple(str(e) for e in data.get("extensions", ())),
            turn=int(data.get("turn", 0)),
            trace=str(data.get("trace", "")),
        )

    @property
    def deduplication_id(self) -> str:
        """Stable, SQS-safe (hex, 64 chars) id for this unit of work."""
        return hashlib.sha256(replace(self, trace="").to_json().encode()).hexdigest()


_NAMING = frozenset({"tenant", "owner", "task_id", "message_id"})


class WorkQueue(Protocol):
    def enqueue(self, item: WorkItem) -> None:
        """Durably schedule ``item``. Raises on failure (the caller must not leave the task stuck)."""
        ...
