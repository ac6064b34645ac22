"""The local stack wires functions to queues, and sets their environment, from template.yaml."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_serverless_dev._functions import LOCAL_SQS_CONCURRENCY, concurrency
from a2a_serverless_dev._template import (
    ScheduleEventSource,
    SqsEventSource,
    code_dirs,
    function_environment,
    schedule_event_sources,
    sqs_event_sources,
)
from a2a_serverless_dev.resources import LocalResources


def test_event_sources_are_the_templates_sqs_events(template: dict[str, Any]) -> None:
    # When
    sources = sqs_event_sources(template)

    # Then: each mapping carries the template's settings, not the local stack's guesses
    assert sources == [
        SqsEventSource(
            function_id="WorkerFunction",
            handler="a2a_serverless.functions.worker:handler",
            queue_id="WorkQueue",
            batch_size=1,
            report_batch_item_failures=True,
            timeout_seconds=900,
            memory_mb=512,
            max_concurrency=20,  # WorkerMaxConcurrency's default
        ),
        SqsEventSource(
            function_id="DeadLetterFunction",
            handler="a2a_serverless.functions.dead_letter:handler",
            queue_id="WorkDeadLetterQueue",
            batch_size=1,
            report_batch_item_failures=True,
            timeout_seconds=60,
            memory_mb=512,
        ),
        SqsEventSource(
            function_id="PushDeliveryFunction",
            handler="a2a_serverless.functions.push_delivery:handler",
            queue_id="PushDeliveryQueue",
            batch_size=1,
            report_batch_item_failures=True,
            timeout_seconds=120,
            memory_mb=512,
            max_concurrency=20,  # PushDeliveryMaxConcurrency's default
        ),
    ]


def test_event_source_defaults_follow_sam_and_globals() -> None:
    # Given: a function relying on SAM's defaults and on Globals
    template = {
        "Globals": {"Function": {"Timeout": 30, "MemorySize": 256}},
        "Resources": {
            "Fn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "src/handlers/",
                    "Handler": "jobs.main",
                    "Events": {"Q": {"Type": "SQS", "Properties": {"Queue": {"Fn::GetAtt": ["Q", "Arn"]}}}},
                },
            }
        },
    }

    # When
    (source,) = sqs_event_sources(template)

    # Then
    assert source.handler == "jobs:main"  # as Lambda: the module on the path of the code (src/handlers/)
    assert (source.batch_size, source.report_batch_item_failures) == (10, False)
    assert (source.timeout_seconds, source.memory_mb) == (30, 256)
    assert source.max_concurrency is None  # no limit in the template: the stack picks one
    assert concurrency(source, None) == LOCAL_SQS_CONCURRENCY


@pytest.mark.parametrize(
    ("event", "function", "expected"),
    [
        pytest.param({"ScalingConfig": {"MaximumConcurrency": 7}}, {}, 7, id="literal"),
        pytest.param({"ScalingConfig": {"MaximumConcurrency": {"Ref": "Most"}}}, {}, 30, id="parameter"),
        pytest.param({}, {"ReservedConcurrentExecutions": 3}, 3, id="reserved"),
        pytest.param({"ScalingConfig": {"MaximumConcurrency": {"Ref": "Unknown"}}}, {}, None, id="unresolvable"),
    ],
)
def test_an_sqs_sources_concurrency_is_the_templates(
    event: dict[str, Any], function: dict[str, Any], expected: int | None
) -> None:
    # Given a function whose SQS event (or the function itself) limits how many invocations run
    template = {
        "Parameters": {"Most": {"Type": "Number", "Default": 30}},
        "Resources": {
            "Fn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "src/",
                    "Handler": "jobs.main",
                    **function,
                    "Events": {"Q": {"Type": "SQS", "Properties": {"Queue": {"Fn::GetAtt": ["Q", "Arn"]}, **event}}},
                },
            }
        },
    }
    # When the local stack reads it
    (source,) = sqs_event_sources(template)
    # Then it runs as many at once as Lambda would, unless --workers says otherwise
    assert source.max_concurrency == expected
    assert concurrency(source, None) == (expected or LOCAL_SQS_CONCURRENCY)
    assert concurrency(source, 2) == 2


def test_a_queue_given_by_name_is_rejected() -> None:
    template = {
        "Resources": {
            "Fn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "functions/",
                    "Handler": "w.handler",
                    "Events": {"Q": {"Type": "SQS", "Properties": {"Queue": "arn:aws:sqs:...:q"}}},
                },
            }
        }
    }
    with pytest.raises(ValueError, match="GetAtt"):
        sqs_event_sources(template)


def test_function_environment_resolves_refs_like_cloudformation(template: dict[str, Any]) -> None:
    # Given: the local resources created for the template
    local = LocalResources(
        tables={"TasksTable": "a2a-local-TasksTable"},
        queue_urls={"WorkQueue": "http://127.0.0.1:1/123456789012/a2a-local-WorkQueue.fifo"},
    )

    # When
    env = function_environment(template, local)

    # Then: a table's Ref is its name, a queue's its URL, a parameter's its default
    assert env.values["A2A_TABLE_NAME"] == "a2a-local-TasksTable"
    assert env.values["A2A_QUEUE_URL"] == "http://127.0.0.1:1/123456789012/a2a-local-WorkQueue.fifo"
    assert env.values["A2A_EXECUTOR"] == "a2a_serverless.execution.demo:DemoAgentExecutor"
    assert env.values["A2A_BLOCKING_WAIT_SECONDS"] == "25"
    assert env.values["A2A_STORE"] == "dynamodb"
    assert env.resource_keys == {"A2A_TABLE_NAME", "A2A_QUEUE_URL"}


def test_unresolvable_values_are_left_out() -> None:
    template = {
        "Globals": {
            "Function": {
                "Environment": {
                    "Variables": {
                        "ARN": {"Fn::GetAtt": ["Q", "Arn"]},
                        "FLAG": True,
                        "N": 3,
                        "REF": {"Ref": "X"},
                    }
                }
            }
        },
        "Resources": {},
    }
    env = function_environment(template, LocalResources())
    assert env.values == {"FLAG": "true", "N": "3"}


def test_scheduled_functions_are_the_templates_schedule_events(template: dict[str, Any]) -> None:
    # When
    sources = schedule_event_sources(template)

    # Then: the sweeper, every minute, with its own timeout
    assert sources == [
        ScheduleEventSource(
            function_id="SweeperFunction",
            handler="a2a_serverless.functions.sweeper:handler",
            rule_name="SweeperFunctionSweep",
            every_seconds=60.0,
            timeout_seconds=60,
            memory_mb=512,
        )
    ]


@pytest.mark.parametrize(
    ("expression", "seconds"),
    [("rate(1 minute)", 60.0), ("rate(5 minutes)", 300.0), ("rate(2 hours)", 7200.0), ("rate( 1 day )", 86400.0)],
)
def test_rate_expressions_are_understood(expression: str, seconds: float) -> None:
    template = _scheduled("Schedule", {"Schedule": expression})
    (source,) = schedule_event_sources(template)
    assert source.every_seconds == seconds


def test_a_scheduler_event_counts_too_and_a_cron_expression_is_refused() -> None:
    (source,) = schedule_event_sources(_scheduled("ScheduleV2", {"ScheduleExpression": "rate(10 minutes)"}))
    assert source.every_seconds == 600.0
    with pytest.raises(ValueError, match="rate"):
        schedule_event_sources(_scheduled("Schedule", {"Schedule": "cron(0 12 * * ? *)"}))


def _scheduled(kind: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "Resources": {
            "Fn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "functions/",
                    "Handler": "tick.handler",
                    "Events": {"Tick": {"Type": kind, "Properties": properties}},
                },
            }
        }
    }


def test_code_dirs_are_the_functions_code_uris() -> None:
    template = {
        "Resources": {
            "A": {"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "src/", "Handler": "a.handler"}},
            "B": {"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "functions/", "Handler": "run.sh"}},
            "T": {"Type": "AWS::DynamoDB::Table", "Properties": {}},
        }
    }
    assert code_dirs(template) == ["functions", "src"]
