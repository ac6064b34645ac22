"""The operators' metrics as the entry points write them (CloudWatch EMF on stdout, read the way
Powertools documents testing metrics: capture the output, parse each line), from real records:
SendMessage's function queues the work item on the work queue (moto, in process), which the local
stack's SQS poller hands to the worker function as Lambda would (with SQS's own attributes); the
table's event-log items reach the dispatcher as stream records; deliveries go to a real receiver on
127.0.0.1."""

from __future__ import annotations

import copy
import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from lambda_events import EVENTS, LambdaContext, api_event, body, invoke

from a2a_serverless import wiring as wiring_module
from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.functions import dead_letter, push_delivery, push_dispatcher, worker
from a2a_serverless.lambda_._metrics import CATALOGUE, NAMESPACE
from a2a_serverless.ports import Scope
from a2a_serverless.wiring import build_runtime, get_runtime
from a2a_serverless_dev._template import sqs_event_sources
from a2a_serverless_dev.local_durable import LocalDurableRuns
from a2a_serverless_dev.pollers import SqsPoller
from a2a_serverless_dev.resources import load_template
from testkit.waiting import wait_until

if TYPE_CHECKING:
    from conftest import LambdaAws, WebhookReceiver

UNITS = {metric.name: str(metric.unit.value) for metric in CATALOGUE}


@dataclass(frozen=True)
class Emitted:
    name: str
    unit: str
    dimensions: dict[str, str]
    values: list[float]


def emitted(capsys: pytest.CaptureFixture[str]) -> list[Emitted]:
    """Every metric value the functions printed since the last call, one per EMF document."""
    found: list[Emitted] = []
    for line in capsys.readouterr().out.splitlines():
        document = json.loads(line) if line.startswith("{") else {}
        for directive in document.get("_aws", {}).get("CloudWatchMetrics", []):
            assert directive["Namespace"] == NAMESPACE
            (names,) = directive["Dimensions"]
            dimensions = {name: document[name] for name in names}
            for metric in directive["Metrics"]:
                value = document[metric["Name"]]
                values = value if isinstance(value, list) else [value]
                found.append(Emitted(metric["Name"], metric["Unit"], dimensions, [float(v) for v in values]))
    return found


def every(metrics: list[Emitted], name: str) -> list[Emitted]:
    found = [m for m in metrics if m.name == name]
    assert {m.unit for m in found} == {UNITS[name]}, name  # the catalogue's unit, as CloudWatch gets it
    return found


def only(metrics: list[Emitted], name: str) -> Emitted:
    (metric,) = every(metrics, name)
    return metric


@dataclass
class Stack:
    """The template's event source mappings over moto, each polled once on demand."""

    aws: LambdaAws

    def poll(self, function_id: str, handler: Callable[[Any, Any], Any]) -> int:
        (source,) = [s for s in sqs_event_sources(load_template()) if s.function_id == function_id]
        res = self.aws.resources
        poller = SqsPoller(
            sqs=self.aws.sqs,
            source=source,
            queue_url=res.queue_urls[source.queue_id],
            queue_arn=res.queue_arns[source.queue_id],
            handler=handler,
            function_name=function_id,
            wait_seconds=0,
        )
        return poller.poll_once()

    def dispatch(self) -> int:
        """The table's new event-log and push-config items as the stream's records (the recorded
        event's envelope; moto in process serves no stream), created now, to the dispatcher."""
        table = self.aws.resources.tables["TasksTable"]
        items = [
            item
            for item in self.aws.dynamodb.scan(TableName=table)["Items"]
            if item["sk"]["S"].startswith(("EVT#", "PUSH#"))
        ]
        (envelope,) = json.loads((EVENTS / "dynamodb_stream_event_insert.json").read_text())["Records"]
        records = []
        for n, item in enumerate(items):
            record = copy.deepcopy(envelope)
            record["dynamodb"].update(
                NewImage=item,
                Keys={"pk": item["pk"], "sk": item["sk"]},
                SequenceNumber=str(n + 1),
                ApproximateCreationDateTime=int(time.time()),
            )
            records.append(record)
        assert push_dispatcher.handler({"Records": records}, LambdaContext()) == {"batchItemFailures": []}
        return len(records)


@pytest.fixture
def stack(lambda_aws: LambdaAws) -> Stack:
    lambda_aws.configure_push(A2A_AUTH_MODE="apigateway", A2A_PUSH_SIGNING="false")
    return Stack(lambda_aws)


def send(text: str, *, webhook: str = "") -> dict[str, Any]:
    configuration: dict[str, Any] = {"returnImmediately": True}
    if webhook:
        configuration["taskPushNotificationConfig"] = {"url": webhook}
    message = {"messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}
    response = invoke(
        "send_message",
        api_event("POST", "/message:send", body={"message": message, **{"configuration": configuration}}),
    )
    assert response["statusCode"] == 200, response
    task: dict[str, Any] = body(response)["task"]
    return task


def test_a_turn_with_a_webhook_writes_the_queue_age_the_run_the_task_latency_the_fan_out_and_each_post(
    stack: Stack, webhook_receiver: WebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a task sent with a webhook, its work item on the queue
    task = send("hello", webhook=f"{webhook_receiver.url}/hook")
    capsys.readouterr()

    # When the worker runs it, the dispatcher reads the table's stream, and the delivery POSTs
    assert stack.poll("WorkerFunction", worker.handler) == 1
    ran = emitted(capsys)
    assert stack.dispatch() > 0
    dispatched = emitted(capsys)
    assert stack.poll("PushDeliveryFunction", push_delivery.handler) == 1
    delivered = emitted(capsys)

    # Then the worker wrote how long the item waited, how the run ended and how long the task took
    assert only(ran, "WorkQueueAge").dimensions == {"service": "a2a-serverless"}
    assert only(ran, "WorkQueueAge").values[0] >= 0
    run = only(ran, "RunDuration")
    assert (run.dimensions, len(run.values)) == ({"service": "a2a-serverless", "outcome": "returned"}, 1)
    latency = only(ran, "TaskLatency")
    assert latency.dimensions == {"service": "a2a-serverless", "state": "completed"}
    assert latency.values[0] > 0
    assert [(only(ran, n).values) for n in ("WorkItemsReceived", "WorkItemsProcessed", "WorkItemsFailed")] == [
        [1.0],
        [1.0],
        [0.0],
    ]
    # what the run stored: its commits, its events (all the task's but SendMessage's first) and their bytes
    table = stack.aws.resources.tables["TasksTable"]
    stored = DynamoDBTaskStore(table, stack.aws.dynamodb).get_task(Scope("", "user-alice"), task["id"])
    assert stored is not None
    commits, events = only(ran, "RunCommits").values[0], only(ran, "RunEvents").values[0]
    assert events == stored.last_seq - 1
    assert 1 <= commits <= events
    assert only(ran, "RunBytesWritten").values[0] > 0
    # the dispatcher, how far behind the table it queued the deliveries
    lag = only(dispatched, "StreamFanOutLag")
    assert (lag.dimensions, len(lag.values)) == ({"service": "a2a-serverless"}, 1)
    assert lag.values[0] >= 0
    assert only(dispatched, "PushStreamRecords").values[0] > 0
    # and the delivery, each POST's latency by its outcome, and what was delivered
    posts = every(delivered, "WebhookLatency")
    assert [p.dimensions for p in posts] == [{"service": "a2a-serverless", "outcome": "delivered"}] * len(
        webhook_receiver.accepted()
    )
    assert only(delivered, "PushNotificationsDelivered").values == [float(len(posts))]


@pytest.mark.parametrize(
    ("text", "outcome", "state"),
    [
        pytest.param("fail", "failed", "failed", id="executor-raised"),
        pytest.param("ask me", "returned", "input_required", id="interrupted"),
    ],
)
def test_a_run_s_outcome_and_the_state_it_left_the_task_in_are_the_metrics_dimensions(
    stack: Stack, capsys: pytest.CaptureFixture[str], text: str, outcome: str, state: str
) -> None:
    send(text)
    capsys.readouterr()

    assert stack.poll("WorkerFunction", worker.handler) == 1

    metrics = emitted(capsys)
    assert only(metrics, "RunDuration").dimensions["outcome"] == outcome
    assert only(metrics, "TaskLatency").dimensions["state"] == state


def test_a_duplicate_work_item_runs_nothing_and_writes_no_run(
    stack: Stack, capsys: pytest.CaptureFixture[str], lambda_aws: LambdaAws
) -> None:
    # Given a task whose work item was run, and the same item queued again (a redelivery)
    send("hello")
    queue = lambda_aws.resources.queue_urls["WorkQueue"]
    (message,) = lambda_aws.sqs.receive_message(QueueUrl=queue, VisibilityTimeout=0)["Messages"]
    assert stack.poll("WorkerFunction", worker.handler) == 1
    lambda_aws.sqs.send_message(
        QueueUrl=queue, MessageBody=message["Body"], MessageGroupId="g", MessageDeduplicationId="again"
    )
    capsys.readouterr()

    # When the worker gets it
    assert stack.poll("WorkerFunction", worker.handler) == 1

    # Then it counts as processed, with no run and no task latency
    metrics = emitted(capsys)
    assert only(metrics, "WorkItemsProcessed").values == [1.0]
    assert not [m for m in metrics if m.name in {"RunDuration", "TaskLatency"}]


def test_a_webhook_that_fails_writes_its_post_as_a_retry(
    stack: Stack, webhook_receiver: WebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    webhook_receiver.set_down(503)
    send("hello", webhook=f"{webhook_receiver.url}/hook")
    stack.poll("WorkerFunction", worker.handler)
    stack.dispatch()
    capsys.readouterr()

    assert stack.poll("PushDeliveryFunction", push_delivery.handler) == 1

    metrics = emitted(capsys)
    assert only(metrics, "WebhookLatency").dimensions["outcome"] == "retry"
    assert only(metrics, "PushDeliveryRetries").values == [1.0]


def test_a_dead_letter_counts_the_task_it_failed(
    stack: Stack, capsys: pytest.CaptureFixture[str], lambda_aws: LambdaAws
) -> None:
    # Given a work item that reached the dead-letter queue while its task still waited on it
    send("hello")
    res = lambda_aws.resources
    (message,) = lambda_aws.sqs.receive_message(QueueUrl=res.queue_urls["WorkQueue"])["Messages"]
    lambda_aws.sqs.send_message(
        QueueUrl=res.queue_urls["WorkDeadLetterQueue"],
        MessageBody=message["Body"],
        MessageGroupId="g",
        MessageDeduplicationId="dead",
    )
    capsys.readouterr()

    assert stack.poll("DeadLetterFunction", dead_letter.handler) == 1

    metrics = emitted(capsys)
    assert only(metrics, "DeadLettersReceived").values == [1.0]
    assert only(metrics, "TasksFailedFromDeadLetters").values == [1.0]


def test_a_run_s_large_parts_moved_to_the_blob_bucket_are_counted(
    stack: Stack, capsys: pytest.CaptureFixture[str], lambda_aws: LambdaAws
) -> None:
    # Given the blob bucket (S3 in moto), and a task whose agent answers with a 40 KB file
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="fn-test-blobs")
    lambda_aws.configure(A2A_BLOB_BUCKET="fn-test-blobs")
    send("file 40kb")
    capsys.readouterr()

    # When the worker runs it
    assert stack.poll("WorkerFunction", worker.handler) == 1

    # Then the part the run stored in S3 is counted (and an ordinary answer counts none)
    assert only(emitted(capsys), "PartsOffloaded").values == [1.0]
    send("hello")
    stack.poll("WorkerFunction", worker.handler)
    assert only(emitted(capsys), "PartsOffloaded").values == [0.0]


def test_an_api_function_counts_its_requests_and_errors_by_its_method(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    send("hello")
    sent = emitted(capsys)
    invoke("list_tasks", api_event("GET", "/tasks", query={"pageSize": "0"}))  # 400: an invalid page size
    refused = emitted(capsys)

    function = {"service": "a2a-serverless", "function": "SendMessage"}
    assert (only(sent, "Requests").dimensions, only(sent, "Requests").values) == (function, [1.0])
    assert not [m for m in sent if m.name in {"ServerErrors", "ClientErrors"}]
    assert only(refused, "ClientErrors").dimensions == {"service": "a2a-serverless", "function": "ListTasks"}


def test_the_durable_worker_writes_the_metrics_of_the_runs_it_makes(
    stack: Stack, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given durable mode: each task an execution of the durable worker's Lambda entry point, on the
    # local runner (as the local stack runs it)
    stack.aws.configure(
        A2A_EXECUTION_MODE="durable",
        A2A_DURABLE_FUNCTION="arn:aws:lambda:us-east-1:123456789012:function:fn-test-DurableWorkerFunction:live",
    )
    worker = importlib.import_module("a2a_serverless.functions.durable_worker").handler
    runs = LocalDurableRuns(worker, execution_timeout=120)
    monkeypatch.setattr(wiring_module, "_runtime", build_runtime(Settings.from_env(), durable=runs))
    try:
        # When a task asks for input, and its answer resumes the execution to the end
        asked = send("ask me")
        arn = runs.execution_arn(asked["id"])
        assert arn is not None
        wait_until(lambda: bool(_head(asked["id"]).waiting_callback), "the execution waits for input", within=20)
        send_answer("Ann", asked["id"])
        assert runs.runner.wait_for_result(arn, timeout=20).status.name == "SUCCEEDED"
    finally:
        runs.close()

    # Then each turn's run wrote its metrics once: how it ended, the state it left the task in, its writes
    metrics = emitted(capsys)
    assert [m.dimensions["outcome"] for m in every(metrics, "RunDuration")] == ["returned", "returned"]
    assert [m.dimensions["state"] for m in every(metrics, "TaskLatency")] == ["input_required", "completed"]
    assert all(m.values[0] > 0 for m in every(metrics, "RunEvents"))


def _head(task_id: str) -> Any:
    head = get_runtime().store.get_head(Scope("", "user-alice"), task_id)
    assert head is not None
    return head


def send_answer(text: str, task_id: str) -> None:
    message = {"messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}], "taskId": task_id}
    response = invoke("send_message", api_event("POST", "/message:send", body={"message": message}))
    assert response["statusCode"] == 200, response
