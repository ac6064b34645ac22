"""Push notification entry points: the stream dispatcher and the delivery function.

``dispatcher_handler`` consumes the table's DynamoDB stream (filtered to event-log and push-config
inserts), a batch at a time, grouped per task: a record that could not be queued is reported by its
sequence number, and Lambda retries the shard from there. ``delivery_handler`` consumes the FIFO
delivery queue one message at a time; a delivery to retry extends its message's visibility timeout
by the backoff delay and is reported as a batch item failure (not an invocation error: a receiver
that is down is not our function failing).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBStreamEvent
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ..adapters.sqs import SqsDeliveryQueue
from ..config import ConfigError
from ..json_types import Json
from ..ports import DeliveryQueue
from ..push.attempts import AttemptLog
from ..push.delivery import DeliveryItem, DeliveryOutcome, Signer, backoff_seconds, deliver
from ..push.dispatch import dispatch_images
from ..runtime import Runtime
from ..telemetry.messaging import received_trace
from ..wiring import get_runtime
from . import _metrics as m
from ._observability import append_invocation_keys, metrics, per_invocation

if TYPE_CHECKING:
    from ..push.sender import WebhookSender

__all__ = [
    "DeliveryRetry",
    "PushServices",
    "delivery_handler",
    "dispatcher_handler",
    "push_services",
    "reset_push_services",
]


@dataclass
class PushServices:
    """What the push functions use, built once per cold start (tests build their own). The HTTP
    sender (httpx) and the signer (joserfc, SSM) are built on first use: the dispatcher needs
    neither, and its cold start does not pay for them."""

    runtime: Runtime
    queue: DeliveryQueue
    _sender: WebhookSender | None = None

    @classmethod
    def from_runtime(cls, runtime: Runtime) -> PushServices:
        settings = runtime.settings
        if not settings.push_queue_url or not settings.push_dead_letter_queue_url:
            raise ConfigError("A2A_PUSH_QUEUE_URL and A2A_PUSH_DEAD_LETTER_QUEUE_URL are required for push delivery")
        return cls(
            runtime=runtime, queue=SqsDeliveryQueue(settings.push_queue_url, settings.push_dead_letter_queue_url)
        )

    @property
    def sender(self) -> WebhookSender:
        if self._sender is None:
            from ..push import sender  # httpx: only the delivery function pays for it

            settings = self.runtime.settings
            self._sender = sender.WebhookSender(
                timeout=settings.push_timeout_seconds, allow_private=settings.allow_private_webhooks
            )
        return self._sender

    @property
    def signer(self) -> Signer | None:
        return self.runtime.push_signer


_services: PushServices | None = None

# httpx logs every request line, full URL included, at INFO (which Lambda's JSON log format turns
# on): a webhook URL may carry a receiver's secret in its query. Our own log lines name ids only.
logging.getLogger("httpx").setLevel(logging.WARNING)


def push_services() -> PushServices:
    global _services
    if _services is None:
        _services = PushServices.from_runtime(get_runtime())
    return _services


class DeliveryRetry(Exception):
    """A delivery stopped on a retryable failure; its message comes back after the backoff."""


@per_invocation
@metrics.log_metrics
def dispatcher_handler(event: Json, context: LambdaContext) -> Json:
    """Handle the stream batch per task (see :mod:`..push.dispatch`): as a whole rather than with
    Powertools' record-by-record batch processor, so a batch holding many events of one task reads
    its configs once. Failures are reported in the same ``batchItemFailures`` shape: the earliest
    failed record's sequence number, from which Lambda retries the shard (what was already queued
    is deduplicated on the way)."""
    services = push_services()
    records = list(DynamoDBStreamEvent(event).records)
    images = [record.dynamodb.new_image if record.dynamodb else {} for record in records]
    failed = dispatch_images(images, services.runtime.store, services.queue)
    m.PUSH_STREAM_RECORDS.add(len(records))
    created = [r.dynamodb.approximate_creation_date_time for r in records if r.dynamodb]
    if oldest := min((c for c in created if c), default=None):
        m.STREAM_FAN_OUT_LAG.add(max(0.0, time.time() - oldest) * 1000)
    if not failed:
        return {"batchItemFailures": []}
    m.PUSH_STREAM_RECORDS_FAILED.add(len(failed))
    first = records[failed[0]].dynamodb
    return {"batchItemFailures": [{"itemIdentifier": first.sequence_number if first else ""}]}


def deliver_record(record: SQSRecord, services: PushServices, remaining_seconds: Callable[[], float]) -> None:
    """Deliver one queued item; raise :class:`DeliveryRetry` to have it come back later."""
    settings = services.runtime.settings
    item = DeliveryItem.from_json(record.body)
    item = replace(item, trace=received_trace(record.raw_event.get("messageAttributes"), item.trace))
    attempt = int(record.attributes.approximate_receive_count or 1)
    append_invocation_keys(task_id=item.task_id, config_id=item.config_id)
    result = deliver(
        item,
        store=services.runtime.store,
        sender=services.sender,
        signer=services.signer,
        attempt=attempt,
        max_attempts=settings.push_max_attempts,
        timeout_seconds=settings.push_timeout_seconds,
        remaining_seconds=remaining_seconds,
        parts=services.runtime.parts,
        inline_bytes=settings.inline_push_bytes,
        attempt_log=AttemptLog(settings.push_attempt_log) if settings.push_attempt_log else None,
        on_sent=lambda result, latency_ms: m.WEBHOOK_LATENCY.add_by(result.outcome, latency_ms),
    )
    for dead in result.dead_letters:
        services.queue.dead_letter(dead)
    if result.delivered:
        m.PUSH_NOTIFICATIONS_DELIVERED.add(result.delivered)
    if result.dead_letters:
        m.PUSH_DELIVERIES_DEAD_LETTERED.add(len(result.dead_letters))
    if result.outcome is DeliveryOutcome.CONTINUE:
        # Out of time: a fresh message carries on (ordinary items from the cursor, redriven ones
        # from where this one stopped).
        rest = replace(item, from_seq=result.next_seq if item.from_seq else 0, nonce=uuid.uuid4().hex)
        services.queue.send([rest])
    elif result.outcome is DeliveryOutcome.RETRY:
        delay = backoff_seconds(
            attempt,
            base=settings.push_backoff_base_seconds,
            cap=settings.push_backoff_max_seconds,
            retry_after=result.retry_after,
        )
        services.queue.delay(record.receipt_handle, delay)
        m.PUSH_DELIVERY_RETRIES.add(1)
        raise DeliveryRetry(f"attempt {attempt} failed ({result.reason}); next in {delay}s")


@per_invocation
@metrics.log_metrics
def delivery_handler(event: Json, context: LambdaContext) -> Json:
    services = push_services()

    def remaining() -> float:
        return float(context.get_remaining_time_in_millis()) / 1000.0

    processor = SqsFifoPartialProcessor()
    # A retry is reported as a batch item failure, not raised as an invocation error.
    processor.raise_on_entire_batch_failure = False
    return dict(
        process_partial_response(
            event=event,
            record_handler=lambda record: deliver_record(record, services, remaining),
            processor=processor,
            context=context,
        )
    )


def reset_push_services() -> None:
    """Forget the cached services (tests that change the environment between invocations)."""
    global _services
    _services = None
