"""Throttling and 5xx from DynamoDB and SQS are retried by the adapters' own clients and lose
nothing. Faults are injected into the real botocore request path (a ``before-send`` hook that
answers some requests with the error AWS would send), in front of moto.

Two fault models: *refused* (the service never processed the request: throttling, most 5xx) and
*lost response* (the write happened, the client saw an error and retried: the hard case)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws
from moto.core.models import botocore_stubber

from a2a_serverless.adapters.dynamodb.store import DynamoDBTaskStore
from a2a_serverless.adapters.sqs import SqsWorkQueue
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import GetTaskRequest, Message, Part, Role, SendMessageConfiguration, SendMessageRequest
from a2a_serverless.operations import CallContext, get_task
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, WorkItem
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.resources import create_resources


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


class FaultInjector:
    """Answers every ``every``-th request (up to ``limit``) with an AWS error. ``refused``: moto
    does not see the request; otherwise moto processes it and only the response is lost."""

    def __init__(
        self,
        status: int,
        code: str,
        *,
        every: int = 2,
        limit: int = 1000,
        protocol: str = "json",
        refused: bool = True,
        operations: tuple[str, ...] = (),
    ) -> None:
        self.status, self.code, self.every, self.limit, self.protocol = status, code, every, limit, protocol
        self.refused, self.operations = refused, operations
        self.seen = 0
        self.injected = 0

    def install(self, client: Any, service: str) -> None:
        client.meta.events.register_first(f"before-send.{service}", self)
        # Handlers of the more specific event run first; moto's stubber listens on the generic
        # "before-send", so restoring it last there re-enables it after it skipped this request.
        client.meta.events.register_last("before-send", _restore_stubber)

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        target = (request.headers.get("X-Amz-Target") or b"").decode()
        if self.operations and not target.endswith(self.operations):
            return None
        self.seen += 1
        if self.injected >= self.limit or self.seen % self.every:
            return None
        self.injected += 1
        if self.refused:
            botocore_stubber.enabled = False  # moto skips this one request; restored below
        body = json.dumps({"__type": self.code, "message": "injected fault"}).encode()
        headers = {"x-amzn-RequestId": f"fault-{self.injected}", "Content-Type": "application/x-amz-json-1.0"}
        if self.protocol == "query-json":
            headers["x-amzn-query-error"] = f"{self.code};Sender"
        return AWSResponse(request.url, self.status, headers, _Raw(body))


def _restore_stubber(**_: Any) -> None:
    botocore_stubber.enabled = True


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        res = create_resources(boto3.client("dynamodb"), boto3.client("sqs"), prefix="faults")
        yield {"table": res.tables["TasksTable"], "queue": res.queue_urls["WorkQueue"]}


CTX = CallContext(principal=Principal("alice", authenticated=True))


@pytest.mark.parametrize(
    ("status", "code"),
    [
        pytest.param(400, "ProvisionedThroughputExceededException", id="throttled"),
        pytest.param(500, "InternalServerError", id="5xx"),
    ],
)
def test_a_whole_task_survives_repeated_dynamodb_faults(aws: dict[str, str], status: int, code: str) -> None:
    # Given a store whose every second DynamoDB call (the first four times) fails transiently
    store = DynamoDBTaskStore(aws["table"])
    injector = FaultInjector(status, code, every=2, limit=4)
    injector.install(store.client, "dynamodb")
    queue = SqsWorkQueue(aws["queue"])
    runtime = build_runtime(Settings(store="memory", cancel_wait_seconds=0), store=store, queue=queue)

    # When a message is sent and its work item processed
    request = SendMessageRequest(
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="hello")]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    record = submit_message(request, CTX, runtime)
    body = queue.client.receive_message(QueueUrl=aws["queue"])["Messages"][0]["Body"]
    process_work_item(runtime, WorkItem.from_json(body))

    # Then faults really happened, and the task completed with a complete, gap-free log
    assert injector.injected == 4
    task = get_task(GetTaskRequest(id=record.task.id), CTX, runtime)
    assert task.status.state.value == "TASK_STATE_COMPLETED"
    assert task.artifacts[0].parts[0].text == "Echo: hello"
    events = store.read_events(Scope("", "alice"), task.id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    kinds = [
        "task" if e.event.task else "artifact" if e.event.artifact_update else e.event.status_update.status.state.value
        for e in events
        if e.event.task or e.event.artifact_update or e.event.status_update
    ]
    assert kinds == ["task", "TASK_STATE_WORKING", "artifact", "TASK_STATE_COMPLETED"]


def test_sqs_send_is_retried_through_5xx(aws: dict[str, str]) -> None:
    queue = SqsWorkQueue(aws["queue"])
    injector = FaultInjector(500, "InternalError", every=1, limit=2, protocol="query-json")
    injector.install(queue.client, "sqs")
    queue.enqueue(WorkItem(tenant="", owner="alice", task_id="t1", message_id="m1"))
    assert injector.injected == 2
    got = queue.client.receive_message(QueueUrl=aws["queue"])["Messages"]
    assert [WorkItem.from_json(m["Body"]).task_id for m in got] == ["t1"]


def test_a_create_whose_response_was_lost_is_still_queued_and_runs_once(aws: dict[str, str]) -> None:
    # Given each put of the create landing but its response lost, so botocore retries it and the
    # retry finds its own write (a failed condition: a single put has no idempotency token)
    store = DynamoDBTaskStore(aws["table"])
    injector = FaultInjector(500, "InternalServerError", every=1, limit=3, refused=False, operations=("PutItem",))
    injector.install(store.client, "dynamodb")
    queue = SqsWorkQueue(aws["queue"])
    runtime = build_runtime(Settings(store="memory"), store=store, queue=queue)
    request = SendMessageRequest(
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="hello")]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    # When the message is sent
    record = submit_message(request, CTX, runtime)
    # Then the create stands as written (not abandoned and made again), the work item was queued
    # (the task is not stuck SUBMITTED), and runs once
    assert injector.injected == 3
    items = store.client.scan(TableName=aws["table"])["Items"]
    assert [i for i in items if "abandoned" in i] == []
    assert [i["taskId"]["S"] for i in items if i["sk"]["S"] == "MSG"] == [record.task.id]
    messages = queue.client.receive_message(QueueUrl=aws["queue"], MaxNumberOfMessages=10)["Messages"]
    assert len(messages) == 1
    process_work_item(runtime, WorkItem.from_json(messages[0]["Body"]))
    task = get_task(GetTaskRequest(id=record.task.id), CTX, runtime)
    assert task.status.state.value == "TASK_STATE_COMPLETED"
    assert len(task.artifacts) == 1
