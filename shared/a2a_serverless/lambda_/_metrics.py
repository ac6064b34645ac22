"""The operators' metrics, in one catalogue: each one's name, unit, dimension and meaning
(``docs/tracing.md``, "Metrics"; the template's dashboard shows every one of them, which
``tests/template/test_template_dashboard.py`` checks against this list).

They are CloudWatch embedded metric format (EMF) lines on stdout, written by Powertools Metrics in
namespace ``A2AServerless``, each with the dimension ``service`` (``POWERTOOLS_SERVICE_NAME``).
CloudWatch bills a custom metric per name and set of dimension values, so a metric gets at most
one dimension more, and only a few values of it: a run's outcome, a task's state, a POST's
outcome, the API function. A metric without one goes into the invocation's EMF document, flushed
when the handler returns (``metrics.log_metrics``); one with a dimension is a line of its own (one
EMF document has one set of dimensions for all its metrics).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools import single_metric
from aws_lambda_powertools.metrics import MetricUnit

from ._observability import metrics

if TYPE_CHECKING:  # the authorizer writes metrics too, and must not import the models
    from ..execution.run_report import RunReport

__all__ = ["CATALOGUE", "NAMESPACE", "Metric", "record_run"]

NAMESPACE = "A2AServerless"


@dataclass(frozen=True)
class Metric:
    name: str
    unit: MetricUnit
    meaning: str
    dimension: str = ""
    """The dimension beyond ``service``, if any (``function`` is the API handler's, set on its
    invocation's whole document)."""

    def add(self, value: float) -> None:
        """Add a value to the invocation's document (dimensions: ``service``, and the invocation's)."""
        metrics.add_metric(name=self.name, unit=self.unit, value=value)

    def add_by(self, label: str, value: float) -> None:
        """Write a value under ``dimension=label`` (a line of its own, now)."""
        with single_metric(
            name=self.name,
            unit=self.unit,
            value=value,
            namespace=metrics.namespace,
            default_dimensions={"service": str(metrics.service)},
        ) as metric:
            metric.add_dimension(name=self.dimension, value=label)


_MS = MetricUnit.Milliseconds
_COUNT = MetricUnit.Count

# The API functions (lambda_.http): per invocation, dimension function = the method's name.
REQUESTS = Metric("Requests", _COUNT, "API requests handled", "function")
SERVER_ERRORS = Metric("ServerErrors", _COUNT, "API answers with a 5xx status", "function")
CLIENT_ERRORS = Metric("ClientErrors", _COUNT, "API answers with a 4xx status", "function")
AUTHORIZER_ALLOWED = Metric("AuthorizerAllowed", _COUNT, "requests the authorizer let in (AuthMode Open or Jwt)")
AUTHORIZER_DENIED = Metric("AuthorizerDenied", _COUNT, "requests the authorizer refused (401: no or a bad token)")
AUTHORIZER_ERRORS = Metric("AuthorizerErrors", _COUNT, "authorizer failures (500: configuration, the issuer's keys)")

# The worker (lambda_.sqs): per work item and per run.
WORK_ITEMS_RECEIVED = Metric("WorkItemsReceived", _COUNT, "work items handed to the worker")
WORK_ITEMS_PROCESSED = Metric("WorkItemsProcessed", _COUNT, "work items processed (a run, or nothing to run)")
WORK_ITEMS_FAILED = Metric("WorkItemsFailed", _COUNT, "work items reported failed (SQS redelivers them)")
WORK_QUEUE_AGE = Metric(
    "WorkQueueAge", _MS, "how long a work item waited on the queue: from SQS's SentTimestamp to the worker's start"
)
RUN_DURATION = Metric(
    "RunDuration",
    _MS,
    "one run of the executor, from the claim to the settle, by how it ended: returned, failed, invalid, "
    "canceled, out_of_time, lost (its SampleCount counts runs)",
    "outcome",
)
TASK_LATENCY = Metric(
    "TaskLatency",
    _MS,
    "from the task's creation to the run that left it terminal or interrupted, by that state: completed, "
    "failed, canceled, rejected, input_required, auth_required",
    "state",
)
RUN_COMMITS = Metric(
    "RunCommits", _COUNT, "commits one run made to the store (each rewrites the task's head: ~2 WRU or more)"
)
RUN_EVENTS = Metric("RunEvents", _COUNT, "events one run stored")
RUN_BYTES_WRITTEN = Metric(
    "RunBytesWritten", MetricUnit.Bytes, "the JSON of the events one run stored (log items, before compression)"
)
PARTS_OFFLOADED = Metric(
    "PartsOffloaded", _COUNT, "parts of one run's events moved to the blob bucket (a PutObject each, but a repeat)"
)

# The dead-letter function and the sweeper.
DEAD_LETTERS_RECEIVED = Metric("DeadLettersReceived", _COUNT, "work items that reached the dead-letter queue")
TASKS_FAILED_FROM_DEAD_LETTERS = Metric(
    "TasksFailedFromDeadLetters", _COUNT, "tasks failed because their work item was dead-lettered"
)
RUNS_SWEPT = Metric("RunsSwept", _COUNT, "tasks failed by the sweeper: their run stopped renewing its lease")

# Push (lambda_.push): the stream dispatcher and the delivery function.
PUSH_STREAM_RECORDS = Metric("PushStreamRecords", _COUNT, "stream records the dispatcher handled")
PUSH_STREAM_RECORDS_FAILED = Metric(
    "PushStreamRecordsFailed", _COUNT, "stream records whose deliveries could not be queued (retried)"
)
STREAM_FAN_OUT_LAG = Metric(
    "StreamFanOutLag",
    _MS,
    "per stream batch, from its oldest record's ApproximateCreationDateTime (whole seconds, rounded down) "
    "to its deliveries being queued",
)
PUSH_NOTIFICATIONS_DELIVERED = Metric("PushNotificationsDelivered", _COUNT, "events a webhook acknowledged")
PUSH_DELIVERIES_DEAD_LETTERED = Metric(
    "PushDeliveriesDeadLettered", _COUNT, "delivery items parked on the push dead-letter queue"
)
PUSH_DELIVERY_RETRIES = Metric("PushDeliveryRetries", _COUNT, "delivery attempts that stopped to retry later")
WEBHOOK_LATENCY = Metric(
    "WebhookLatency",
    _MS,
    "one POST to a webhook, by outcome: delivered, retry (a retryable failure), final (a failure not "
    "retried); its SampleCount counts POSTs",
    "outcome",
)

CATALOGUE: tuple[Metric, ...] = tuple(value for value in dict(globals()).values() if isinstance(value, Metric))
"""Every metric the functions emit."""


def record_run(report: RunReport) -> None:
    """The metrics of one run of the executor (the worker's, the durable worker's turn)."""
    RUN_DURATION.add_by(report.outcome, report.seconds * 1000)
    if report.state is not None and report.task_seconds is not None:
        TASK_LATENCY.add_by(report.state.removeprefix("TASK_STATE_").lower(), report.task_seconds * 1000)
    RUN_COMMITS.add(report.written.commits)
    RUN_EVENTS.add(report.written.events)
    RUN_BYTES_WRITTEN.add(report.written.bytes)
    PARTS_OFFLOADED.add(report.written.offloaded)
