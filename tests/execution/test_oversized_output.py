"""Large output: a task is no longer bounded by one stored item (its snapshot may not fit; reads
then fold its events), but one event still is: an executor emitting an event too large for one
item fails the task cleanly, nothing is left SUBMITTED or WORKING, and the task stays readable."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_serverless.operations import get_task, send_message
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.moto_fixes import item_size_fix
from a2a_serverless_dev.resources import create_resources
from testkit.calls import CTX
from testkit.queues import RecordingQueue


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    if request.param == "memory":
        yield MemoryTaskStore()
        return
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    # (with moto's size check made DynamoDB's: it counts a replaced attribute twice)
    with mock_aws(), item_size_fix():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        tables = create_resources(dynamodb, sqs, prefix="big").tables
        yield DynamoDBTaskStore(tables["TasksTable"], dynamodb)


def test_a_task_larger_than_one_item_completes_and_reads_back_whole(store: object) -> None:
    # Given the demo agent (it echoes the message as an artifact) and a message of 240 KB: under the
    # body limit, and message and echo together exceed one item (the task's snapshot cannot be
    # written, so reads fold the events after the last one that could)
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory"), store=store, queue=queue)  # type: ignore[arg-type]
    text = "z" * (240 * 1024)
    request = SendMessageRequest(
        message=Message(message_id="big", role=Role.ROLE_USER, parts=[Part(text=text)]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    task = send_message(request, CTX, runtime).task
    assert task is not None

    # When the worker runs it
    process_work_item(runtime, queue.items[0])

    # Then the task completed, and reads back with the whole echo
    final = get_task(GetTaskRequest(id=task.id), CTX, runtime)
    assert final.status.state is TaskState.TASK_STATE_COMPLETED
    assert final.artifacts[0].parts[0].text == f"Echo: {text}"


class HugeArtifactExecutor(AgentExecutor):
    """Emits one artifact larger than one stored event may be."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await updater.add_artifact([Part(text="h" * (450 * 1024))], name="huge")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def test_an_event_too_large_for_one_item_fails_the_task_instead_of_leaving_it_stuck(store: object) -> None:
    # Given an executor whose one artifact does not fit one stored event
    queue = RecordingQueue()
    settings = Settings(store="memory", executor=f"{__name__}:HugeArtifactExecutor")
    runtime = build_runtime(settings, store=store, queue=queue)  # type: ignore[arg-type]
    request = SendMessageRequest(
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="go")]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    task = send_message(request, CTX, runtime).task
    assert task is not None

    # When the worker runs it
    process_work_item(runtime, queue.items[0])

    # Then the task is FAILED with a safe message, and still readable
    final = get_task(GetTaskRequest(id=task.id), CTX, runtime)
    assert final.status.state is TaskState.TASK_STATE_FAILED
    assert final.status.message is not None
    assert "h" * 100 not in final.status.message.model_dump_json()
    assert final.artifacts == []
