"""The SQS entry points: the worker and the dead-letter handlers (Powertools batch processing with
partial failure reporting). The scheduled sweeper is :mod:`.schedule`'s (no batch to process)."""

from __future__ import annotations

import time
from dataclasses import replace

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ..execution.dead_letter import fail_dead_work_item
from ..execution.worker import process_work_item
from ..json_types import Json
from ..ports import WorkItem
from ..telemetry.messaging import received_trace
from ..wiring import get_runtime
from . import _metrics as m
from ._observability import append_invocation_keys, metrics, per_invocation

__all__ = ["dead_letter_handler", "worker_handler"]


def _process(record: SQSRecord, lambda_context: LambdaContext) -> None:
    item = WorkItem.from_json(record.body)
    item = replace(item, trace=received_trace(record.raw_event.get("messageAttributes"), item.trace))
    append_invocation_keys(task_id=item.task_id, message_id=item.message_id)
    receive_count = int(record.attributes.approximate_receive_count or 1)
    # The run watches the invocation's remaining time: it stops the executor and fails the task
    # with a clear message before the function would time out.
    remaining = lambda_context.get_remaining_time_in_millis
    if sent := record.attributes.get("SentTimestamp"):  # epoch milliseconds, as a string
        m.WORK_QUEUE_AGE.add(max(0.0, time.time() * 1000 - int(sent)))
    report = process_work_item(get_runtime(), item, receive_count=receive_count, remaining_ms=remaining)
    m.WORK_ITEMS_PROCESSED.add(1)
    if report is not None:
        m.record_run(report)


@per_invocation
@metrics.log_metrics
def worker_handler(event: Json, context: LambdaContext) -> Json:
    """Process the batch in order; a failed record (and, FIFO, the ones after it) is reported in
    ``batchItemFailures`` so SQS redelivers only those."""
    m.WORK_ITEMS_RECEIVED.add(len(event.get("Records", [])))
    processor = SqsFifoPartialProcessor()
    response = process_partial_response(event=event, record_handler=_process, processor=processor, context=context)
    failures = len(response.get("batchItemFailures", []))
    m.WORK_ITEMS_FAILED.add(failures)
    return dict(response)


def _fail_dead(record: SQSRecord) -> None:
    item = WorkItem.from_json(record.body)
    append_invocation_keys(task_id=item.task_id, message_id=item.message_id)
    if fail_dead_work_item(get_runtime(), item):
        m.TASKS_FAILED_FROM_DEAD_LETTERS.add(1)


@per_invocation
@metrics.log_metrics
def dead_letter_handler(event: Json, context: LambdaContext) -> Json:
    """Consume the work queue's dead-letter queue: fail each item's task if it still waits on it."""
    m.DEAD_LETTERS_RECEIVED.add(len(event.get("Records", [])))
    processor = SqsFifoPartialProcessor()
    return dict(process_partial_response(event=event, record_handler=_fail_dead, processor=processor, context=context))
