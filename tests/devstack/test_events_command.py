"""``a2a-serverless event KIND``: the test event of each function, its message the kit's own (the
queue adapters' bodies, the store's items), in the shape its event source sends. The events run
under ``sam local invoke`` in tests/lambda_runtime/test_sam_local_invoke.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes import DynamoDBStreamEvent, SQSEvent

from a2a_serverless.lambda_.authorizer import stage_arn
from a2a_serverless.ports import WorkItem
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless_dev._functions import EventSources
from a2a_serverless_dev.cli import main
from a2a_serverless_dev.resources import load_template
from a2a_serverless_dev.stream_pollers import matches_filters


def written(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main(["event", *args]) == 0
    return json.loads(capsys.readouterr().out)


WORK = ["--task-id", "t-1", "--message-id", "m-1", "--owner", "alice", "--tenant", "acme"]


@pytest.mark.parametrize(
    ("kind", "queue"),
    [pytest.param("worker", "WorkQueue", id="worker"), pytest.param("dead-letter", "WorkDeadLetterQueue", id="dead")],
)
def test_a_work_item_event_carries_the_item_as_the_work_queue_sends_it(
    capsys: pytest.CaptureFixture[str], kind: str, queue: str
) -> None:
    # When the command writes the worker's (or the dead-letter function's) event for a turn
    event = written(capsys, kind, *WORK, "--turn", "2", "--configuration", '{"returnImmediately":true}')

    # Then it is one SQS record, from its queue, whose body is the work item, grouped by task
    (record,) = SQSEvent(event).records
    assert record.event_source == "aws:sqs"
    assert record.event_source_arn.endswith(f"-{queue}.fifo")
    item = WorkItem.from_json(record.body)
    assert item == WorkItem("acme", "alice", "t-1", "m-1", configuration='{"returnImmediately":true}', turn=2)
    assert record.attributes.message_group_id == "t-1"
    assert record.attributes.message_deduplication_id == item.deduplication_id
    assert record.attributes.approximate_receive_count == "1"


def test_a_delivery_event_carries_the_item_as_the_dispatcher_queues_it(capsys: pytest.CaptureFixture[str]) -> None:
    # When the command writes the push delivery function's event
    args = ["--task-id", "t-1", "--owner", "alice", "--config-id", "c-1", "--up-to-seq", "4", "--receive-count", "2"]
    event = written(capsys, "push-delivery", *args)

    # Then its one record's body is the delivery item, in the config's message group
    (record,) = SQSEvent(event).records
    item = DeliveryItem.from_json(record.body)
    assert item == DeliveryItem("", "alice", "t-1", "c-1", up_to_seq=4)
    assert record.attributes.message_group_id == item.group_id
    assert record.attributes.approximate_receive_count == "2"


@pytest.mark.parametrize(
    ("args", "sk"),
    [
        pytest.param(["--config-id", "c-1"], "PUSH#c-1", id="new-config"),
        pytest.param(["--seq", "7"], "EVT#000000000007", id="new-event"),
    ],
)
def test_a_stream_record_is_the_stores_item_and_passes_the_templates_filter(
    capsys: pytest.CaptureFixture[str], args: list[str], sk: str
) -> None:
    # When the command writes the dispatcher's stream event
    event = written(capsys, "push-dispatcher", "--task-id", "t-1", "--owner", "alice", *args)

    # Then it is an INSERT of the store's item, with the attributes the dispatcher reads
    (record,) = DynamoDBStreamEvent(event).records
    assert record.event_name is not None
    assert record.event_name.name == "INSERT"
    assert record.dynamodb is not None
    image = record.dynamodb.new_image
    assert (image["sk"], image["owner"], image["taskId"], image["tenant"]) == (sk, "alice", "t-1", "")
    # and the template's filter lets it through to the function
    (source,) = EventSources.of(load_template(), "PushDispatcherFunction").streams
    assert matches_filters(event["Records"][0], source.filters)


def test_the_dispatcher_event_needs_a_config_or_an_event(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["event", "push-dispatcher", "--task-id", "t-1"])
    assert exited.value.code == 2
    assert "--config-id" in capsys.readouterr().err


def test_the_sweeper_event_is_its_schedules(capsys: pytest.CaptureFixture[str]) -> None:
    event = written(capsys, "sweeper")
    assert (event["source"], event["detail-type"], event["detail"]) == ("aws.events", "Scheduled Event", {})


@pytest.mark.parametrize(
    ("token", "authorization"),
    [
        pytest.param(["--token", "abc.def.ghi"], "Bearer abc.def.ghi", id="with-token"),
        pytest.param([], None, id="none"),
    ],
)
def test_an_authorizer_event_has_the_bearer_token_or_no_header(
    capsys: pytest.CaptureFixture[str], token: list[str], authorization: str | None
) -> None:
    # When the command writes the authorizer's REQUEST event for a call of a tenant's task
    event = written(capsys, "authorizer", "--method", "GET", "--path", "/tasks/{id=t-1}", "--tenant", "acme", *token)

    # Then it names the route as API Gateway does, and the method ARN is one of the stage's
    assert (event["type"], event["resource"], event["path"]) == ("REQUEST", "/{tenant}/tasks/{id}", "/acme/tasks/t-1")
    assert event["pathParameters"] == {"tenant": "acme", "id": "t-1"}
    assert stage_arn(event["methodArn"]) == "arn:aws:execute-api:us-east-1:123456789012:abc123defg/v1/*/*"
    assert event["headers"].get("Authorization") == authorization


def test_an_api_event_is_the_proxy_event_after_the_authorizer(capsys: pytest.CaptureFixture[str]) -> None:
    # When the command writes a route's proxy event, with a body, a header and a query parameter
    body = '{"message": {}}'
    args = ["--path", "/message:send", "--body", body, "--principal", "alice", "--header", "A2A-Version: 1.0"]
    event = written(capsys, "api", *args, "--query", "a=b")

    # Then the function sees the request, and the authorizer's principal
    assert (event["httpMethod"], event["resource"], event["body"]) == ("POST", "/message:send", body)
    assert event["headers"]["A2A-Version"] == "1.0"
    assert event["multiValueQueryStringParameters"] == {"a": ["b"]}
    assert event["requestContext"]["authorizer"]["principalId"] == "alice"
    assert event["requestContext"]["path"] == "/v1/message:send"


def test_a_path_parameter_without_its_value_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["event", "api", "--path", "/tasks/{id}"]) == 2
    assert capsys.readouterr().err == ("a2a-serverless event api: error: {id}: give the value of {id} as {id=VALUE}\n")


def test_out_writes_the_event_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "event.json"
    assert main(["event", "sweeper", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text())["detail-type"] == "Scheduled Event"


def test_a_durable_event_is_the_input_sendmessage_starts_the_execution_with(capsys: pytest.CaptureFixture[str]) -> None:
    # When the command writes the durable worker's event for a task's first message
    event = written(capsys, "durable-worker", *WORK, "--turn", "1")

    # Then it is the execution's input: the work item of that turn
    assert WorkItem.from_json(event["item"]) == WorkItem("acme", "alice", "t-1", "m-1", turn=1)


def test_a_durable_event_of_a_later_turn_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # A later message resumes the execution waiting for it: no input starts one
    assert main(["event", "durable-worker", *WORK, "--turn", "2"]) == 2
    assert "starts with the task's first message" in capsys.readouterr().err
