"""The local emulation of the DynamoDB Streams event source mapping (filters, order, partial
failures, on-failure destination), against moto's stream."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest

from a2a_serverless_dev._moto import moto_server
from a2a_serverless_dev._template import StreamEventSource, dynamodb_event_sources
from a2a_serverless_dev.resources import create_resources, load_template
from a2a_serverless_dev.stream_pollers import StreamPoller, matches_filters

EVT_FILTER = {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"sk": {"S": [{"prefix": "EVT#"}]}}}}


def record(name: str, sk: str) -> dict[str, Any]:
    return {"eventName": name, "dynamodb": {"NewImage": {"pk": {"S": "p"}, "sk": {"S": sk}}}}


@pytest.mark.parametrize(
    ("rec", "expected"),
    [
        pytest.param(record("INSERT", "EVT#000000000001"), True, id="event-insert"),
        pytest.param(record("MODIFY", "EVT#000000000001"), False, id="event-modify"),
        pytest.param(record("INSERT", "META"), False, id="head-insert"),
        pytest.param(record("INSERT", "PUSH#c1"), False, id="push-config"),
    ],
)
def test_the_event_log_filter_keeps_only_event_log_inserts(rec: dict[str, Any], expected: bool) -> None:
    assert matches_filters(rec, (EVT_FILTER,)) is expected


def test_stream_event_sources_are_read_from_the_template() -> None:
    (source,) = dynamodb_event_sources(load_template())
    assert source.handler == "a2a_serverless.functions.push_dispatcher:handler"
    assert (source.table_id, source.starting_position) == ("TasksTable", "TRIM_HORIZON")
    assert source.on_failure_queue_id == "PushStreamFailureQueue"
    assert source.report_batch_item_failures
    assert 0 < source.maximum_retry_attempts <= 10
    # The filter keeps event-log inserts, new push configs, new heads and heads that hold events
    assert matches_filters(record("INSERT", "EVT#000000000001"), source.filters)
    assert matches_filters(record("INSERT", "PUSH#c1"), source.filters)
    assert not matches_filters(record("MODIFY", "PUSH#c1"), source.filters)
    assert matches_filters(record("INSERT", "META"), source.filters)
    assert not matches_filters(record("MODIFY", "META"), source.filters)  # a claim, a renewal, a commit
    assert not matches_filters(record("INSERT", "META#SNAP"), source.filters)
    holding = record("MODIFY", "META")
    holding["dynamodb"]["NewImage"]["heldFirst"] = {"N": "2"}
    assert matches_filters(holding, source.filters)
    assert not matches_filters({**holding, "eventName": "REMOVE"}, source.filters)


@pytest.mark.parametrize(
    ("image", "expected"),
    [pytest.param({"a": {"N": "1"}}, True, id="present"), pytest.param({}, False, id="absent")],
)
def test_the_exists_rule_tests_a_primitive_values_presence(image: dict[str, Any], expected: bool) -> None:
    # As Lambda's filter rules: on a DynamoDB image the rule names the value under its type
    pattern = {"dynamodb": {"NewImage": {"a": {"N": [{"exists": True}]}}}}
    assert matches_filters({"dynamodb": {"NewImage": image}}, (pattern,)) is expected
    # and an object is not a primitive value
    assert not matches_filters(
        {"dynamodb": {"NewImage": {"a": {"N": "1"}}}}, ({"dynamodb": {"NewImage": {"a": [{"exists": True}]}}},)
    )


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    # The stream API as the local stack uses it: moto's server over HTTP.
    with moto_server() as endpoint:
        yield endpoint


_prefixes = itertools.count()


@pytest.fixture
def aws(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "t",
        "AWS_SECRET_ACCESS_KEY": "t",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    ddb, sqs, streams = (boto3.client(s, endpoint_url=moto_endpoint) for s in ("dynamodb", "sqs", "dynamodbstreams"))
    prefix = f"streams-{next(_prefixes)}"
    res = create_resources(ddb, sqs, prefix=prefix)
    on_failure = sqs.create_queue(QueueName=f"{prefix}-on-failure")["QueueUrl"]
    return {"ddb": ddb, "sqs": sqs, "streams": streams, "res": res, "on_failure": on_failure}


class Recorder:
    def __init__(self, fail_on: set[str] | None = None, fail_times: int = 1_000) -> None:
        self.batches: list[list[str]] = []
        self.fail_on = fail_on or set()
        self.fail_times = fail_times

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        keys = [r["dynamodb"]["NewImage"]["sk"]["S"] for r in event["Records"]]
        self.batches.append(keys)
        failures = [
            {"itemIdentifier": r["dynamodb"]["SequenceNumber"]}
            for r in event["Records"]
            if r["dynamodb"]["NewImage"]["sk"]["S"] in self.fail_on and self.fail_times > 0
        ]
        if failures:
            self.fail_times -= 1
        return {"batchItemFailures": failures}


SOURCE = StreamEventSource(
    function_id="Dispatcher",
    handler="a2a_serverless.functions.dispatcher:handler",
    table_id="TasksTable",
    starting_position="TRIM_HORIZON",
    batch_size=25,
    filters=(EVT_FILTER,),
    report_batch_item_failures=True,
    maximum_retry_attempts=10,
    maximum_record_age_seconds=3600,
    on_failure_queue_id="OnFailure",
    timeout_seconds=30,
    memory_mb=512,
)


def poller(aws: dict[str, Any], handler: Recorder, **source_changes: Any) -> StreamPoller:
    res = aws["res"]
    return StreamPoller(
        streams=aws["streams"],
        sqs=aws["sqs"],
        source=replace(SOURCE, **source_changes),
        stream_arn=res.table_stream_arns["TasksTable"],
        handler=handler,
        function_name="local-Dispatcher",
        on_failure_queue_url=aws["on_failure"],
    )


def write(aws: dict[str, Any], *sks: str) -> None:
    table = aws["res"].tables["TasksTable"]
    for sk in sks:
        aws["ddb"].put_item(TableName=table, Item={"pk": {"S": "TASK#t1"}, "sk": {"S": sk}})


def test_event_inserts_are_delivered_in_order_and_nothing_else(aws: dict[str, Any]) -> None:
    handler = Recorder()
    p = poller(aws, handler)
    write(aws, "META", "EVT#000000000001", "PUSH#c1", "EVT#000000000002", "EVT#000000000003")
    assert p.poll_once() == 3
    assert handler.batches == [["EVT#000000000001", "EVT#000000000002", "EVT#000000000003"]]
    assert p.poll_once() == 0  # checkpointed: nothing is delivered twice


def test_a_failed_record_is_retried_with_those_after_it(aws: dict[str, Any]) -> None:
    handler = Recorder(fail_on={"EVT#000000000002"}, fail_times=2)
    p = poller(aws, handler)
    write(aws, "EVT#000000000001", "EVT#000000000002", "EVT#000000000003")
    p.poll_once()
    assert handler.batches == [
        ["EVT#000000000001", "EVT#000000000002", "EVT#000000000003"],
        ["EVT#000000000002", "EVT#000000000003"],
        ["EVT#000000000002", "EVT#000000000003"],
    ]


def test_exhausted_retries_go_to_the_on_failure_destination(aws: dict[str, Any]) -> None:
    handler = Recorder(fail_on={"EVT#000000000001"})
    p = poller(aws, handler, maximum_retry_attempts=2)
    write(aws, "EVT#000000000001")
    p.poll_once()
    assert len(handler.batches) == 3
    (message,) = aws["sqs"].receive_message(QueueUrl=aws["on_failure"])["Messages"]
    info = json.loads(message["Body"])["DDBStreamBatchInfo"]
    assert info["batchSize"] == 1
    assert info["streamArn"] == aws["res"].table_stream_arns["TasksTable"]


def test_the_poller_keeps_lambdas_rate_while_records_flow_and_slows_when_quiet() -> None:
    p = StreamPoller(
        streams=None, sqs=None, source=SOURCE, stream_arn="arn", handler=lambda e, c: None, function_name="f"
    )
    full = SOURCE.batch_size
    assert p.next_poll_in(full, quiet_for=0.0) == 0.0  # a full batch: there is more, poll at once
    assert p.next_poll_in(1, quiet_for=0.0) == p.idle_seconds == 0.25  # Lambda's base rate
    assert p.next_poll_in(0, quiet_for=p.quiet_seconds - 1) == 0.25
    assert p.next_poll_in(0, quiet_for=p.quiet_seconds + 1) == p.quiet_idle_seconds == 1.0  # an idle stack
