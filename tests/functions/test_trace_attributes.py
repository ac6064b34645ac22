"""A trace's context crosses the SQS queues in the ``traceparent`` message attribute (OpenTelemetry's
messaging convention), through moto's queues in process: the work item SendMessage's function
queues, received by the local stack's SQS poller for the worker function as Lambda would hand it
over; a delivery item, for the delivery function. A message that carries its trace in its body
(queued before the attribute was used) still continues it. Tracing is on, its spans in memory."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest
from lambda_events import EVENTS, invoke
from opentelemetry.sdk.trace import ReadableSpan

from a2a_serverless import telemetry
from a2a_serverless.adapters.sqs import SqsDeliveryQueue
from a2a_serverless.functions import push_delivery, worker
from a2a_serverless.ports import WorkItem
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.telemetry import _sdk
from a2a_serverless_dev._template import sqs_event_sources
from a2a_serverless_dev.pollers import SqsPoller
from a2a_serverless_dev.resources import load_template

if TYPE_CHECKING:
    from conftest import LambdaAws

TRACEPARENT = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(telemetry.SWITCH_ENV, "memory")
    telemetry.reset()
    telemetry.tracing_on()
    _sdk.MEMORY.clear()
    yield
    _sdk.MEMORY.clear()
    monkeypatch.delenv(telemetry.SWITCH_ENV)
    telemetry.reset()


def span(name: str) -> ReadableSpan:
    (found,) = [s for s in _sdk.finished_spans() if s.name == name]
    return found


def poll(aws: LambdaAws, function_id: str, handler: Callable[[Any, Any], Any]) -> int:
    """One receive of the function's queue by the local stack's SQS poller, which invokes it."""
    (source,) = [s for s in sqs_event_sources(load_template()) if s.function_id == function_id]
    res = aws.resources
    url, arn = res.queue_urls[source.queue_id], res.queue_arns[source.queue_id]
    poller = SqsPoller(aws.sqs, source, url, arn, handler, function_id, wait_seconds=0)
    return poller.poll_once()


def peek(aws: LambdaAws, queue: str) -> dict[str, Any]:
    """The queue's one message, with its attributes, left on the queue."""
    url = aws.resources.queue_urls[queue]
    (message,) = aws.sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"], VisibilityTimeout=0)["Messages"]
    result: dict[str, Any] = message
    return result


@pytest.mark.usefixtures("traced")
def test_a_work_item_s_trace_crosses_the_queue_in_its_message_attributes(lambda_aws: LambdaAws) -> None:
    # Given SendMessage's function, traced, queuing a work item
    lambda_aws.configure(A2A_AUTH_MODE="apigateway")
    invoke("send_message", json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text()))
    enqueued = span("send work")

    # Then the message carries the enqueue's context as its traceparent attribute, not in its body
    message = peek(lambda_aws, "WorkQueue")
    attribute = message["MessageAttributes"]["traceparent"]
    assert attribute["DataType"] == "String"
    assert attribute["StringValue"].split("-")[1:3] == [
        f"{enqueued.context.trace_id:032x}",
        f"{enqueued.context.span_id:016x}",
    ]
    assert "trace" not in json.loads(message["Body"])

    # And when the worker function runs it, its run continues that trace under the enqueue
    assert poll(lambda_aws, "WorkerFunction", worker.handler) == 1
    run = span("process work")
    assert run.parent is not None
    assert (run.context.trace_id, run.parent.span_id) == (enqueued.context.trace_id, enqueued.context.span_id)


@pytest.mark.usefixtures("traced")
def test_a_work_item_queued_with_its_trace_in_its_body_still_continues_it(lambda_aws: LambdaAws) -> None:
    # Given a task's work item as it was queued before the attribute: the trace in the body
    lambda_aws.configure(A2A_AUTH_MODE="apigateway")
    invoke("send_message", json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text()))
    url = lambda_aws.resources.queue_urls["WorkQueue"]
    (message,) = lambda_aws.sqs.receive_message(QueueUrl=url)["Messages"]
    lambda_aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    older = replace(WorkItem.from_json(message["Body"]), trace=TRACEPARENT)
    lambda_aws.sqs.send_message(
        QueueUrl=url, MessageBody=older.to_json(), MessageGroupId=older.task_id, MessageDeduplicationId="older"
    )

    # When the worker function runs it
    assert poll(lambda_aws, "WorkerFunction", worker.handler) == 1

    # Then the run is a child of the span the body names
    run = span("process work")
    assert run.parent is not None
    assert (f"{run.context.trace_id:032x}", f"{run.parent.span_id:016x}") == ("a" * 32, "b" * 16)


@pytest.mark.usefixtures("traced")
def test_a_delivery_item_s_trace_crosses_the_push_queues_in_their_message_attributes(lambda_aws: LambdaAws) -> None:
    # Given a delivery item of a config that no longer exists (its delivery has nothing to POST),
    # queued with a trace, and one dead-lettered with it
    lambda_aws.configure_push()
    res = lambda_aws.resources
    queue = SqsDeliveryQueue(res.queue_urls["PushDeliveryQueue"], res.queue_urls["PushDeadLetterQueue"], lambda_aws.sqs)
    item = DeliveryItem("", "user-alice", "task-1", "gone", up_to_seq=1, trace=TRACEPARENT)
    queue.send([item])
    queue.dead_letter(item)

    # Then both messages carry it as their traceparent attribute, not in their bodies
    for name in ("PushDeliveryQueue", "PushDeadLetterQueue"):
        message = peek(lambda_aws, name)
        assert message["MessageAttributes"]["traceparent"]["StringValue"] == TRACEPARENT, name
        assert DeliveryItem.from_json(message["Body"]) == replace(item, trace="")

    # And the delivery function's span continues it
    assert poll(lambda_aws, "PushDeliveryFunction", push_delivery.handler) == 1
    delivery = span("deliver push")
    assert delivery.parent is not None
    assert (f"{delivery.context.trace_id:032x}", f"{delivery.parent.span_id:016x}") == ("a" * 32, "b" * 16)


def test_with_tracing_off_nothing_is_sent_as_an_attribute(lambda_aws: LambdaAws) -> None:
    lambda_aws.configure(A2A_AUTH_MODE="apigateway")
    invoke("send_message", json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text()))
    message = peek(lambda_aws, "WorkQueue")
    assert "MessageAttributes" not in message
    assert "trace" not in json.loads(message["Body"])
