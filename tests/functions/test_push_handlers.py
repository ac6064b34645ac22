"""The push functions as Lambda invokes them: the dispatcher with a recorded DynamoDB stream event,
the delivery function with messages received from the real FIFO queue (moto, in process), POSTing
to a real receiver on 127.0.0.1. Retries go through SQS itself: the message's visibility is
extended by the backoff, its receive count is the attempt number, and the last attempt parks it
on the dead-letter queue."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.adapters.sqs import SqsDeliveryQueue
from a2a_serverless.functions import push_delivery, push_dispatcher
from a2a_serverless.models import StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus
from a2a_serverless.ports import Scope, TaskRecord
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless_dev._lambda import sqs_event

if TYPE_CHECKING:
    from conftest import WebhookReceiver

EVENTS = Path(__file__).parent / "events"
SCOPE = Scope("acme", "user-alice")


class Context:
    function_name = "a2a-push-test"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:a2a-push-test"
    aws_request_id = "11111111-2222-3333-4444-555555555555"

    def get_remaining_time_in_millis(self) -> int:
        return 120_000


@pytest.fixture
def push_aws(lambda_aws: Any) -> dict[str, Any]:
    res = lambda_aws.resources
    lambda_aws.configure_push(A2A_PUSH_BACKOFF_BASE_SECONDS="1", A2A_PUSH_BACKOFF_MAX_SECONDS="1")
    return {
        "sqs": lambda_aws.sqs,
        "ssm": boto3.client("ssm", region_name="us-east-1"),
        "store": DynamoDBTaskStore(res.tables["TasksTable"], lambda_aws.dynamodb),
        "queue_url": res.queue_urls["PushDeliveryQueue"],
        "queue_arn": res.queue_arns["PushDeliveryQueue"],
        "dead_letter_url": res.queue_urls["PushDeadLetterQueue"],
    }


def a_task_with_a_config(store: DynamoDBTaskStore, url: str, task_id: str = "TASK_ID") -> None:
    task = Task(id=task_id, context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    config = TaskPushNotificationConfig(id="p1", url=url)
    store.create_task(TaskRecord(scope=SCOPE, task=task), [StreamResponse(task=task)], push_config=config)


def receive(aws: dict[str, Any], url_key: str = "queue_url", wait: int = 0) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = (
        aws["sqs"]
        .receive_message(
            QueueUrl=aws[url_key], MaxNumberOfMessages=10, WaitTimeSeconds=wait, MessageSystemAttributeNames=["All"]
        )
        .get("Messages", [])
    )
    return messages


def invoke_delivery(aws: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    event = json.loads(json.dumps(sqs_event(messages, queue_arn=aws["queue_arn"], region="us-east-1")))
    result: dict[str, Any] = push_delivery.handler(event, Context())
    return result


def test_the_dispatcher_queues_one_delivery_per_config_of_the_events_task(push_aws: dict[str, Any]) -> None:
    # Given a task with two webhook configs, and the recorded stream record of its first event
    a_task_with_a_config(push_aws["store"], "https://hooks.example/a")
    push_aws["store"].put_push_config(
        SCOPE, TaskPushNotificationConfig(id="p2", task_id="TASK_ID", url="https://hooks.example/b")
    )
    event = json.loads((EVENTS / "dynamodb_stream_event_insert.json").read_text())

    # When the dispatcher handles it
    response = push_dispatcher.handler(event, Context())

    # Then each config has its delivery item on the FIFO queue, in its own message group
    assert response == {"batchItemFailures": []}
    items = sorted((DeliveryItem.from_json(m["Body"]) for m in receive(push_aws)), key=lambda i: i.config_id)
    assert [(i.config_id, i.up_to_seq, i.scope) for i in items] == [("p1", 1, SCOPE), ("p2", 1, SCOPE)]


def test_a_queued_delivery_is_posted_signed_and_acknowledged(
    push_aws: dict[str, Any], webhook_receiver: WebhookReceiver
) -> None:
    a_task_with_a_config(push_aws["store"], f"{webhook_receiver.url}/hook")
    SqsDeliveryQueue(push_aws["queue_url"], push_aws["dead_letter_url"], push_aws["sqs"]).send(
        [DeliveryItem(SCOPE.tenant, SCOPE.owner, "TASK_ID", "p1", up_to_seq=1)]
    )

    response = invoke_delivery(push_aws, receive(push_aws))

    assert response == {"batchItemFailures": []}
    (request,) = webhook_receiver.accepted()
    assert request.json()["task"]["id"] == "TASK_ID"
    assert request.headers["x-a2a-notification-signature"].count(".") == 2
    # The signing key set was bootstrapped in SSM, as a SecureString
    parameter = push_aws["ssm"].get_parameter(Name="/fn-test/signing-keys", WithDecryption=False)["Parameter"]
    assert parameter["Type"] == "SecureString"


def test_a_failed_delivery_backs_off_on_the_queue_then_is_dead_lettered_with_its_reason(
    push_aws: dict[str, Any], webhook_receiver: WebhookReceiver
) -> None:
    # Given a receiver that answers 503
    webhook_receiver.set_down(503)
    a_task_with_a_config(push_aws["store"], f"{webhook_receiver.url}/hook")
    SqsDeliveryQueue(push_aws["queue_url"], push_aws["dead_letter_url"], push_aws["sqs"]).send(
        [DeliveryItem(SCOPE.tenant, SCOPE.owner, "TASK_ID", "p1", up_to_seq=1)]
    )

    # When the first attempt fails: the message is reported failed and stays on the queue
    first = receive(push_aws)
    response = invoke_delivery(push_aws, first)
    assert response == {"batchItemFailures": [{"itemIdentifier": first[0]["MessageId"]}]}

    # Then SQS hands it out again after the backoff, as attempt 2 (the last allowed here)
    deadline = time.monotonic() + 5
    again: list[dict[str, Any]] = []
    while not again and time.monotonic() < deadline:
        again = receive(push_aws, wait=1)
    assert again, "the failed delivery did not come back"
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert invoke_delivery(push_aws, again) == {"batchItemFailures": []}

    # And the second failure parks the undelivered range on the dead-letter queue, with the reason
    (dead,) = receive(push_aws, "dead_letter_url", wait=1)
    item = DeliveryItem.from_json(dead["Body"])
    assert (item.config_id, item.from_seq, item.up_to_seq) == ("p1", 1, 1)
    assert item.last_error == "gave up after 2 attempts: HTTP 503"
    assert [r.status for r in webhook_receiver.requests] == [503, 503]
    target = push_aws["store"].get_push_target(SCOPE, "TASK_ID", "p1")
    assert target is not None
    assert target.delivered_seq == 1
