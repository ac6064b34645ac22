"""Replay dead-lettered push deliveries: move them from the dead-letter queue back onto the
delivery queue (``a2a-serverless push-redrive``).

A dead letter names its config and the range of events it did not deliver; redriven, it is delivered
again from the task's event log, with the config as it is now (a config deleted since is skipped;
fixed credentials are used). Each message is sent to the delivery queue before it is deleted from the
dead-letter queue, so an interrupted redrive duplicates at worst (receivers drop duplicates by
``X-A2A-Event-Id``) and never loses one. A body that is not a delivery item is left where it is.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .delivery import DeliveryItem

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

__all__ = ["RedriveReport", "redrive"]

logger = logging.getLogger(__name__)


@dataclass
class RedriveReport:
    moved: int = 0
    unreadable: list[str] = field(default_factory=list)
    """Message ids of bodies that are not delivery items (left on the dead-letter queue)."""
    reasons: dict[str, int] = field(default_factory=dict)
    """How many of the moved items had each last error (a dry run counts without moving)."""


def redrive(
    sqs: SQSClient,
    dead_letter_url: str,
    queue_url: str,
    *,
    limit: int | None = None,
    dry_run: bool = False,
    visibility_seconds: int = 30,
) -> RedriveReport:
    """Move up to ``limit`` (None: all) dead letters back to ``queue_url``; with ``dry_run``, only
    read and count them (they reappear on the dead-letter queue after ``visibility_seconds``)."""
    report = RedriveReport()
    seen: set[str] = set()
    while limit is None or report.moved < limit:
        wanted = 10 if limit is None else min(10, limit - report.moved)
        response = sqs.receive_message(
            QueueUrl=dead_letter_url,
            MaxNumberOfMessages=wanted,
            WaitTimeSeconds=1,
            VisibilityTimeout=visibility_seconds,
        )
        messages = [m for m in response.get("Messages", []) if m["MessageId"] not in seen]
        if not messages:
            return report
        for message in messages:
            seen.add(message["MessageId"])
            try:
                item = DeliveryItem.from_json(message["Body"])
            except (ValueError, KeyError, TypeError):
                report.unreadable.append(message["MessageId"])
                continue
            reason = item.last_error.split(":", 1)[0] or "dead-lettered by SQS (receive count)"
            report.reasons[reason] = report.reasons.get(reason, 0) + 1
            if dry_run:
                report.moved += 1
                continue
            again = replace(item, last_error="", nonce=uuid.uuid4().hex)
            sqs.send_message(
                QueueUrl=queue_url,
                MessageBody=again.to_json(),
                MessageGroupId=again.group_id,
                MessageDeduplicationId=again.deduplication_id,
            )
            sqs.delete_message(QueueUrl=dead_letter_url, ReceiptHandle=message["ReceiptHandle"])
            report.moved += 1
    return report
