"""``WorkQueue`` on an SQS FIFO queue: group = task id, deduplication id = hash of the work item."""

from __future__ import annotations

from typing import Any

from ..ports import WorkItem

__all__ = ["SqsWorkQueue", "new_sqs_client"]


def new_sqs_client() -> Any:
    """An SQS client with the standard retry mode (throttling and transient errors retried with
    backoff); built on first use by each queue adapter and kept for warm invocations."""
    import boto3
    from botocore.config import Config

    return boto3.client("sqs", config=Config(retries={"mode": "standard", "max_attempts": 8}))


class SqsWorkQueue:
    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        self._queue_url = queue_url
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = new_sqs_client()
        return self._client

    def enqueue(self, item: WorkItem) -> None:
        self.client.send_message(
            QueueUrl=self._queue_url,
            MessageBody=item.to_json(),
            MessageGroupId=item.task_id,
            MessageDeduplicationId=item.deduplication_id,
        )
