"""ExecutionMode Durable, on the template as CloudFormation receives it (SAM-translated offline): a
durable worker with DurableConfig from the parameters, invoked through an alias the functions that
start executions are told, alarms on failed and timed-out executions; and in Queue mode (the default) none of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cloudformation import evaluate

from a2a_serverless.config import Settings


def _alias_arn(translated: dict[str, Any]) -> str:
    """The ARN of the durable worker's ``live`` alias in the stack :data:`cloudformation.PSEUDO` is."""
    (alias,) = [v for v in translated["Resources"].values() if v["Type"] == "AWS::Lambda::Alias"]
    assert alias["Properties"]["FunctionName"] == {"Ref": "DurableWorkerFunction"}
    name = evaluate(translated["Resources"]["DurableWorkerFunction"]["Properties"]["FunctionName"])
    assert len(name) <= 64  # Lambda's limit, whatever the stack's name
    return f"arn:aws:lambda:us-east-1:123456789012:function:{name}:{alias['Properties']['Name']}"


DURABLE_CONDITIONS = {"IsDurable", "HasDurableAlarms"}
STARTERS = {"GatewayFunction", "SendMessageFunction"}
"""The functions that start durable executions (SendMessage, SendStreamingMessage)."""
TOPIC = "arn:aws:sns:us-east-1:123456789012:alarms"


def _holds(expression: Any, parameters: dict[str, str], conditions: dict[str, Any]) -> bool:
    ((function, args),) = expression.items()
    if function == "Condition":
        return _holds(conditions[args], parameters, conditions)
    if function == "Fn::Not":
        return not _holds(args[0], parameters, conditions)
    if function == "Fn::And":
        return all(_holds(a, parameters, conditions) for a in args)
    if function == "Fn::Equals":
        left, right = (parameters[a["Ref"]] if isinstance(a, dict) else str(a) for a in args)
        return bool(left == right)
    raise AssertionError(f"condition function {function} not understood here")


def _deployed(translated: dict[str, Any], **chosen: str) -> set[str]:
    """The logical ids of the resources CloudFormation creates with these parameter values."""
    defaults = {k: str(v["Default"]) for k, v in translated["Parameters"].items() if "Default" in v}
    parameters = {**defaults, **chosen}
    conditions = translated["Conditions"]
    return {
        k
        for k, v in translated["Resources"].items()
        if "Condition" not in v or _holds({"Condition": v["Condition"]}, parameters, conditions)
    }


@pytest.fixture(scope="module")
def durable(translate: Callable[[dict[str, str]], dict[str, Any]]) -> dict[str, Any]:
    return translate({"ExecutionMode": "Durable", "AlarmTopicArn": TOPIC})


def test_queue_is_the_default_and_creates_nothing_durable(translated: dict[str, Any]) -> None:
    parameter = translated["Parameters"]["ExecutionMode"]
    assert (parameter["Default"], parameter["AllowedValues"]) == ("Queue", ["Queue", "Durable"])
    deployed = _deployed(translated, AlarmTopicArn=TOPIC)
    assert not {k for k in deployed if "Durable" in k}
    # the queue path stays as it is in both modes
    assert {"WorkQueue", "WorkerFunction", "WorkerErrorsAlarm"} <= deployed
    assert {"WorkQueue", "WorkerFunction"} <= _deployed(translated, ExecutionMode="Durable")


def test_every_durable_resource_is_created_only_in_durable_mode(durable: dict[str, Any]) -> None:
    named = {k: v for k, v in durable["Resources"].items() if "Durable" in k}
    assert {
        "DurableWorkerFunction",
        "DurableWorkerRole",
        "DurableWorkerCheckpointPolicy",
        "DurableExecutionsPolicy",
        "DurableWorkerFunctionAliaslive",
        "DurableExecutionsFailedAlarm",
        "DurableExecutionsTimedOutAlarm",
    } <= set(named)
    assert all(v.get("Condition") in DURABLE_CONDITIONS for v in named.values()), {
        k: v.get("Condition") for k, v in named.items()
    }
    deployed = _deployed(durable, ExecutionMode="Durable", AlarmTopicArn=TOPIC)
    assert set(named) <= deployed


def test_the_durable_worker_runs_tasks_with_the_durable_config_parameters(durable: dict[str, Any]) -> None:
    worker = durable["Resources"]["DurableWorkerFunction"]["Properties"]
    assert worker["Handler"] == "a2a_serverless.functions.durable_worker.handler"
    assert worker["Timeout"] == 900
    assert worker["DurableConfig"] == {
        "ExecutionTimeout": {"Ref": "DurableExecutionTimeoutSeconds"},
        "RetentionPeriodInDays": {"Ref": "DurableRetentionDays"},
    }
    # No event source: durable executions are started by invoking the alias, and replayed by Lambda
    mappings = [v for v in durable["Resources"].values() if v["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert all(m["Properties"]["FunctionName"] != {"Ref": "DurableWorkerFunction"} for m in mappings)
    alias = durable["Resources"]["DurableWorkerFunctionAliaslive"]["Properties"]
    assert alias["FunctionName"] == {"Ref": "DurableWorkerFunction"}


@pytest.mark.parametrize(
    ("name", "default", "low", "high"),
    [
        # DurableConfig's bounds (AWS::Lambda::Function DurableConfig)
        pytest.param("DurableExecutionTimeoutSeconds", None, 1, 31622400, id="execution-timeout"),
        pytest.param("DurableRetentionDays", 14, 1, 90, id="retention"),
        pytest.param("InputWaitSeconds", 604800, 1, 31536000, id="input-wait"),
    ],
)
def test_the_durable_parameters_are_bounded_as_lambda_and_the_settings_are(
    translated: dict[str, Any], name: str, default: int | None, low: int, high: int
) -> None:
    parameter = translated["Parameters"][name]
    assert parameter["Type"] == "Number"
    assert (parameter["MinValue"], parameter["MaxValue"]) == (low, high)
    assert low <= parameter["Default"] <= high
    assert default is None or parameter["Default"] == default
    assert parameter["Description"]


def test_a_task_waits_for_input_less_long_than_its_execution_may_last(translated: dict[str, Any]) -> None:
    parameters = translated["Parameters"]
    assert parameters["InputWaitSeconds"]["Default"] < parameters["DurableExecutionTimeoutSeconds"]["Default"]


@pytest.mark.parametrize("mode", ["Queue", "Durable"])
def test_every_function_is_told_the_mode_and_the_input_wait_and_the_starters_the_alias(
    translate: Callable[[dict[str, str]], dict[str, Any]], mode: str
) -> None:
    translated = translate({"ExecutionMode": mode})
    defaults = {k: str(v["Default"]) for k, v in translated["Parameters"].items() if "Default" in v}
    functions = {k: v for k, v in translated["Resources"].items() if v["Type"] == "AWS::Lambda::Function"}
    for name, function in functions.items():
        env = function["Properties"]["Environment"]["Variables"]
        mode_of = "durable" if name == "DurableWorkerFunction" else {"Fn::If": ["IsDurable", "durable", "queue"]}
        assert env["A2A_EXECUTION_MODE"] == mode_of, name
        assert env["A2A_INPUT_WAIT_SECONDS"] == {"Ref": "InputWaitSeconds"}, name
        # Only the functions that start executions are told the worker's alias: on any other (the
        # authorizer, the worker itself) it closed a dependency cycle through the API
        if name in STARTERS:
            condition, alias, otherwise = env["A2A_DURABLE_FUNCTION"]["Fn::If"]
            assert (condition, otherwise) == ("IsDurable", ""), name
            assert evaluate(alias) == _alias_arn(translated), name
        else:
            assert "A2A_DURABLE_FUNCTION" not in env, name
    # and the settings read what CloudFormation resolves for the mode
    durable = mode == "Durable"
    settings = Settings.from_env(
        {
            "A2A_STORE": "memory",
            "A2A_EXECUTION_MODE": "durable" if durable else "queue",
            "A2A_DURABLE_FUNCTION": "arn:aws:lambda:us-east-1:123456789012:function:w:live" if durable else "",
            "A2A_INPUT_WAIT_SECONDS": defaults["InputWaitSeconds"],
        }
    )
    assert settings.execution_mode == ("durable" if durable else "queue")
    assert settings.input_wait_seconds == int(defaults["InputWaitSeconds"])


@pytest.mark.parametrize(
    ("alarm", "metric"),
    [
        pytest.param("DurableExecutionsFailedAlarm", "DurableExecutionFailed", id="failed"),
        pytest.param("DurableExecutionsTimedOutAlarm", "DurableExecutionTimedOut", id="timed-out"),
    ],
)
def test_failed_and_timed_out_executions_are_alarmed_on_with_a_topic(
    durable: dict[str, Any], alarm: str, metric: str
) -> None:
    resource = durable["Resources"][alarm]
    props = resource["Properties"]
    assert (props["Namespace"], props["MetricName"]) == ("AWS/Lambda", metric)
    assert props["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "DurableWorkerFunction"}}]
    assert (props["Statistic"], props["Threshold"], props["ComparisonOperator"]) == (
        "Sum",
        0,
        "GreaterThanThreshold",
    )
    assert props["TreatMissingData"] == "notBreaching"
    assert props["AlarmActions"] == [{"Ref": "AlarmTopicArn"}]
    # Only in Durable mode and with a topic, like the other alarms
    for chosen, created in [
        ({"ExecutionMode": "Durable", "AlarmTopicArn": TOPIC}, True),
        ({"ExecutionMode": "Durable", "AlarmTopicArn": ""}, False),
        ({"ExecutionMode": "Queue", "AlarmTopicArn": TOPIC}, False),
    ]:
        assert (alarm in _deployed(durable, **chosen)) == created, chosen
