"""The queue ports (:mod:`a2a_serverless.ports.queue`) on SQS FIFO queues.

* :class:`SqsWorkQueue`: the ``WorkQueue`` (``WorkQueue`` in ``template.yaml``). Message group =
  task id, deduplication id = hash of the work item.
* :class:`SqsDeliveryQueue`: the ``DeliveryQueue`` and its dead-letter queue (``PushDeliveryQueue``
  and ``PushDeadLetterQueue``). Message group = the item's (scope, task, config). A retry does not
  re-send the message: it extends the received message's visibility timeout to the backoff delay,
  and SQS hands it out again (receive count + 1) when that runs out.

Both send an item's body without its trace, and its trace context in the ``traceparent`` message
attribute (:mod:`a2a_serverless.telemetry.messaging`). The client is built on first use (warm starts
keep it) unless one is given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..aws import sqs_client
from ..ports import DeliveryItem, WorkItem
from ..telemetry.messaging import message_attributes

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef, SendMessageRequestTypeDef

__all__ = ["SqsDeliveryQueue", "SqsWorkQueue"]

_BATCH = 10  # SQS's SendMessageBatch limit


class _SqsQueue:
    """A queue's URL and its client, built on first use unless given."""

    def __init__(self, queue_url: str, client: SQSClient | None = None) -> None:
        self._queue_url = queue_url
        self._client = client

    @property
    def client(self) -> SQSClient:
        if self._client is None:
            self._client = sqs_client()
        return self._client


class SqsWorkQueue(_SqsQueue):
    def enqueue(self, item: WorkItem) -> None:
        request: SendMessageRequestTypeDef = {
            "QueueUrl": self._queue_url,
            "MessageBody": replace(item, trace="").to_json(),
            "MessageGroupId": item.task_id,
            "MessageDeduplicationId": item.deduplication_id,
        }
        if item.trace:
            request["MessageAttributes"] = message_attributes(item.trace)
        self.client.send_message(**request)


class SqsDeliveryQueue(_SqsQueue):
    def __init__(self, queue_url: str, dead_letter_url: str, client: SQSClient | None = None) -> None:
        super().__init__(queue_url, client)
        self._dead_letter_url = dead_letter_url

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
