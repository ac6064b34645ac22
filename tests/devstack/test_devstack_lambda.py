"""The SQS event and context Lambda hands the worker, and how its answer is read."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from aws_lambda_powertools.utilities.parser.models import SqsModel

from a2a_serverless.ports.queue import WorkItem
from a2a_serverless_dev._lambda import InvalidBatchResponse, LambdaContext, failed_message_ids, sqs_event
from a2a_serverless_dev.resources import LocalResources

ITEM = WorkItem(tenant="", owner="anonymous", task_id="task-1", message_id="msg-1")


def _receive(sqs: Any, url: str) -> list[dict[str, Any]]:
    received = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=1,
        MessageSystemAttributeNames=["All"],
        MessageAttributeNames=["All"],
    )
    messages: list[dict[str, Any]] = received["Messages"]
    return messages


def test_event_carries_what_lambda_delivers(sqs: Any, resources: LocalResources) -> None:
    # Given: a work item on the FIFO work queue, as the queue adapter sends it
    url, arn = resources.queue_urls["WorkQueue"], resources.queue_arns["WorkQueue"]
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody=ITEM.to_json(),
        MessageGroupId=ITEM.task_id,
        MessageDeduplicationId=ITEM.deduplication_id,
        MessageAttributes={
            "kind": {"DataType": "String", "StringValue": "work"},
            "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        },
    )
    messages = _receive(sqs, url)

    # When
    event = sqs_event(messages, queue_arn=arn, region="us-east-1")

    # Then
    (record,) = event["Records"]
    assert record["messageId"] == sent["MessageId"]
    assert record["receiptHandle"] == messages[0]["ReceiptHandle"]
    assert WorkItem.from_json(record["body"]) == ITEM
    assert record["md5OfBody"] == sent["MD5OfMessageBody"]
    assert record["md5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
    assert (record["eventSource"], record["eventSourceARN"], record["awsRegion"]) == (
        "aws:sqs",
        arn,
        "us-east-1",
    )
    attributes = record["attributes"]
    assert attributes["ApproximateReceiveCount"] == "1"
    assert attributes["MessageGroupId"] == ITEM.task_id
    assert attributes["MessageDeduplicationId"] == ITEM.deduplication_id
    for key in ("SentTimestamp", "ApproximateFirstReceiveTimestamp", "SequenceNumber", "SenderId"):
        assert attributes[key]
    assert record["messageAttributes"] == {
        "kind": {"stringValue": "work", "stringListValues": [], "binaryListValues": [], "dataType": "String"},
        "blob": {
            "binaryValue": base64.b64encode(b"\x00\x01").decode(),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "Binary",
        },
    }
    # And Powertools, which the worker is built on, parses it as an SQS event
    assert SqsModel.model_validate(event).Records[0].messageId == sent["MessageId"]


def test_event_without_message_attributes(sqs: Any, resources: LocalResources) -> None:
    url = resources.queue_urls["WorkQueue"]
    sqs.send_message(QueueUrl=url, MessageBody="{}", MessageGroupId="g", MessageDeduplicationId="d")

    (record,) = sqs_event(_receive(sqs, url), queue_arn="arn", region="us-east-1")["Records"]

    assert record["messageAttributes"] == {}
    assert "md5OfMessageAttributes" not in record


@pytest.mark.parametrize(
    ("response", "failed"),
    [
        pytest.param(None, set(), id="no-response"),
        pytest.param({}, set(), id="empty-response"),
        pytest.param({"batchItemFailures": None}, set(), id="null-list"),
        pytest.param({"batchItemFailures": []}, set(), id="empty-list"),
        pytest.param({"batchItemFailures": [{"itemIdentifier": "b"}]}, {"b"}, id="one-failure"),
    ],
)
def test_reported_failures(response: Any, failed: set[str]) -> None:
    assert failed_message_ids(response, ["a", "b"]) == failed


@pytest.mark.parametrize(
    "response",
    [
        pytest.param("ok", id="not-an-object"),
        pytest.param({"batchItemFailures": {"itemIdentifier": "a"}}, id="not-a-list"),
        pytest.param({"batchItemFailures": [{"itemIdentifier": ""}]}, id="empty-identifier"),
        pytest.param({"batchItemFailures": [{"itemIdentifier": None}]}, id="null-identifier"),
        pytest.param({"batchItemFailures": [{"id": "a"}]}, id="bad-key"),
        pytest.param({"batchItemFailures": [{"itemIdentifier": "zzz"}]}, id="unknown-message"),
    ],
)
def test_invalid_responses_fail_the_whole_batch(response: Any) -> None:
    with pytest.raises(InvalidBatchResponse):
        failed_message_ids(response, ["a", "b"])


def test_context_counts_down_to_the_function_timeout() -> None:
    context = LambdaContext.start("a2a-local-WorkerFunction", region="us-east-1", memory_mb=512, timeout_seconds=900)

    assert context.invoked_function_arn == "arn:aws:lambda:us-east-1:123456789012:function:a2a-local-WorkerFunction"
    assert context.memory_limit_in_mb == 512
    assert context.aws_request_id
    assert 899_000 < context.get_remaining_time_in_millis() <= 900_000


def test_context_never_reports_negative_time() -> None:
    context = LambdaContext("f", "arn", 128, deadline_monotonic=time.monotonic() - 5)

    assert context.get_remaining_time_in_millis() == 0


def test_each_invocation_has_its_own_request_id() -> None:
    first = LambdaContext.start("f", region="us-east-1", memory_mb=128, timeout_seconds=3)
    second = LambdaContext.start("f", region="us-east-1", memory_mb=128, timeout_seconds=3)

    assert first.aws_request_id != second.aws_request_id
