"""``WorkQueue`` on an SQS FIFO queue: group = task id, deduplication id = hash of the work item."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..aws import sqs_client
from ..ports import WorkItem

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

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
        self.client.send_message(
            QueueUrl=self._queue_url,
            MessageBody=item.to_json(),
            MessageGroupId=item.task_id,
            MessageDeduplicationId=item.deduplication_id,
        )
