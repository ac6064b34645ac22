"""``WorkQueue`` on an SQS FIFO queue: group = task id, deduplication id = hash of the work item; the
item's trace context in the ``traceparent`` message attribute (:mod:`a2a_serverless.telemetry.messaging`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..aws import sqs_client
from ..ports import WorkItem
from ..telemetry.messaging import message_attributes

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageRequestTypeDef

__all__ = ["SqsWorkQueue"]


class SqsWorkQueue:
    def __init__(self, queue_url: str, client: SQSClient | None = None) -> None:
        self._queue_url = queue_url
        self._client = client

    @property
    def client(self) -> SQSClient:
        if self._client is None:
            self._client = sqs_client()
        return self._client

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
