"""The SQS entry points: the worker and the dead-letter handlers (Powertools batch processing with
partial failure reporting). The scheduled sweeper is :mod:`.schedule`'s (no batch to process)."""

from __future__ import annotations

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ..execution.dead_letter import fail_dead_work_item
from ..execution.worker import process_work_item
from ..json_types import Json
from ..ports import WorkItem
from ..wiring import get_runtime
from ._observability import logger, metrics

__all__ = ["dead_letter_handler", "worker_handler"]


def _process(record: SQSRecord, lambda_context: LambdaContext) -> None:
    item = WorkItem.from_json(record.body)
    logger.append_keys(task_id=item.task_id, message_id=item.message_id)
    receive_count = int(record.attributes.approximate_receive_count or 1)
    # The run watches the invocation's remaining time: it stops the executor and fails the task
    # with a clear message before the function would time out.
    remaining = lambda_context.get_remaining_time_in_millis
    process_work_item(get_runtime(), item, receive_count=receive_count, remaining_ms=remaining)
    metrics.add_metric(name="WorkItemsProcessed", unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def worker_handler(event: Json, context: LambdaContext) -> Json:
    """Process the batch in order; a failed record (and, FIFO, the ones after it) is reported in
    ``batchItemFailures`` so SQS redelivers only those."""
    metrics.add_metric(name="WorkItemsReceived", unit=MetricUnit.Count, value=len(event.get("Records", [])))
    processor = SqsFifoPartialProcessor()
    response = process_partial_response(event=event, record_handler=_process, processor=processor, context=context)
    failures = len(response.get("batchItemFailures", []))
    metrics.add_metric(name="WorkItemsFailed", unit=MetricUnit.Count, value=failures)
    return dict(response)


def _fail_dead(record: SQSRecord) -> None:
    item = WorkItem.from_json(record.body)
    logger.append_keys(task_id=item.task_id, message_id=item.message_id)
    if fail_dead_work_item(get_runtime(), item):
        metrics.add_metric(name="TasksFailedFromDeadLetters", unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def dead_letter_handler(event: Json, context: LambdaContext) -> Json:
    """Consume the work queue's dead-letter queue: fail each item's task if it still waits on it."""
    metrics.add_metric(name="DeadLettersReceived", unit=MetricUnit.Count, value=len(event.get("Records", [])))
    processor = SqsFifoPartialProcessor()
    return dict(process_partial_response(event=event, record_handler=_fail_dead, processor=processor, context=context))
