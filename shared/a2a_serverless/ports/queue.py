"""The queue ports: the ``WorkQueue`` hands a task's pending message to a worker; the
``DeliveryQueue`` holds push deliveries waiting for their webhook. Each comes with the item it carries.

On AWS both are SQS FIFO queues (:mod:`a2a_serverless.adapters.sqs`). The work queue's message group
is the task id, so one task's work is never processed concurrently; its deduplication id is derived
from the item (scope, message id and turn), so a retried send enqueues once. Delivery is at least
once: the worker's conditional claim makes the effect exactly once. The delivery queue's message
group is the item's (scope, task, config), so one webhook's deliveries are ordered and never
concurrent, and a webhook that is backing off holds up nobody else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

from .scope import Scope

__all__ = ["MAX_WORK_ITEM_BYTES", "TRACE_FIELD_BYTES", "DeliveryItem", "DeliveryQueue", "WorkItem", "WorkQueue"]

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


@dataclass(frozen=True, slots=True)
class DeliveryItem:
    """One unit of delivery work: events of a task up to ``up_to_seq``, to one config.

    ``from_seq`` is 0 for ordinary items (start after the config's cursor) and set on redriven
    dead letters (deliver exactly ``from_seq``..``up_to_seq``). ``last_error`` travels with a dead
    letter so whoever looks at the queue knows why. ``nonce`` makes a redriven copy a new message
    for SQS's five-minute deduplication. ``redrive`` names the redrive that moved the item, and
    stays on what it dead-letters again: that redrive never moves it a second time
    (:mod:`a2a_serverless.push.redrive`).
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


class DeliveryQueue(Protocol):
    def send(self, items: Sequence[DeliveryItem]) -> None:
        """Durably queue ``items`` (in order within each group). Raises if any was not queued."""
        ...

    def dead_letter(self, item: DeliveryItem) -> None:
        """Park an item that could not be delivered (raises if it could not be parked)."""
        ...

    def delay(self, receipt_handle: str, seconds: int) -> None:
        """Make the received message with ``receipt_handle`` come back after ``seconds``."""
        ...
