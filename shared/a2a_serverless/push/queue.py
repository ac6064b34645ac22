"""Where delivery items wait: the FIFO delivery queue and its dead-letter queue.

On AWS both are SQS FIFO queues (``PushDeliveryQueue`` and ``PushDeadLetterQueue`` in
``template.yaml``). The message group is the item's (scope, task, config), so one webhook's
deliveries are ordered and never concurrent, and a webhook that is backing off holds up nobody else.
A retry does not re-send the message: it extends the received message's visibility timeout to the
backoff delay, and SQS hands it out again (receive count + 1) when that runs out. An item's trace
context travels in the ``traceparent`` message attribute (:mod:`a2a_serverless.telemetry.messaging`).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from ..aws import sqs_client
from ..telemetry.messaging import message_attributes
from .delivery import DeliveryItem

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef, SendMessageRequestTypeDef

__all__ = ["DeliveryQueue", "MemoryDeliveryQueue", "SqsDeliveryQueue"]

_BATCH = 10  # SQS's SendMessageBatch limit


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


class SqsDeliveryQueue:
    def __init__(self, queue_url: str, dead_letter_url: str, client: SQSClient | None = None) -> None:
        self._queue_url = queue_url
        self._dead_letter_url = dead_letter_url
        self._client = client

    @property
    def client(self) -> SQSClient:
        if self._client is None:
            self._client = sqs_client()
        return self._client

    def send(self, items: Sequence[DeliveryItem]) -> None:
        for start in range(0, len(items), _BATCH):
            batch = items[start : start + _BATCH]
            entries: list[SendMessageBatchRequestEntryTypeDef] = []
            for n, item in enumerate(batch):
                entry: SendMessageBatchRequestEntryTypeDef = {
                    "Id": str(n),
                    "MessageBody": replace(item, trace="").to_json(),
                    "MessageGroupId": item.group_id,
                    "MessageDeduplicationId": item.deduplication_id,
                }
                if item.trace:
                    entry["MessageAttributes"] = message_attributes(item.trace)
                entries.append(entry)
            result = self.client.send_message_batch(QueueUrl=self._queue_url, Entries=entries)
            if result.get("Failed"):
                codes = sorted({str(f.get("Code")) for f in result["Failed"]})
                raise RuntimeError(f"{len(result['Failed'])} delivery item(s) not queued: {', '.join(codes)}")

    def dead_letter(self, item: DeliveryItem) -> None:
        body = replace(item, trace="").to_json()
        request: SendMessageRequestTypeDef = {
            "QueueUrl": self._dead_letter_url,
            "MessageBody": body,
            "MessageGroupId": item.group_id,
            "MessageDeduplicationId": hashlib.sha256(body.encode()).hexdigest(),
        }
        if item.trace:
            request["MessageAttributes"] = message_attributes(item.trace)
        self.client.send_message(**request)

    def delay(self, receipt_handle: str, seconds: int) -> None:
        self.client.change_message_visibility(
            QueueUrl=self._queue_url, ReceiptHandle=receipt_handle, VisibilityTimeout=seconds
        )


class MemoryDeliveryQueue:
    """In-process stand-in (unit tests): records what was sent, dead-lettered and delayed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sent: list[DeliveryItem] = []
        self.dead: list[DeliveryItem] = []
        self.delays: list[tuple[str, int]] = []

    def send(self, items: Sequence[DeliveryItem]) -> None:
        with self._lock:
            self.sent.extend(items)

    def dead_letter(self, item: DeliveryItem) -> None:
        with self._lock:
            self.dead.append(item)

    def delay(self, receipt_handle: str, seconds: int) -> None:
        with self._lock:
            self.delays.append((receipt_handle, seconds))
