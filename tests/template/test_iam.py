"""Least privilege, on the template as CloudFormation receives it (SAM-translated offline): each
function's role grants the IAM actions its AWS calls need (the list in tests/conftest.py), on the
resources they touch, and nothing else of write scope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

# What SAM attaches for an event source: the AWS managed execution roles, with these actions.
EVENT_SOURCE_POLICIES = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": set(),  # logs only
    "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": set(),  # traces only
    "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
    },
    "arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole": {
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
    },
}
READ_VERBS = ("Get", "Query", "Describe", "List", "Receive", "BatchGet")

# Which queues each function may send to (logical ids).
SENDS_TO = {
    "GatewayFunction": {"WorkQueue"},
    "SendMessageFunction": {"WorkQueue"},
    "PushDispatcherFunction": {"PushDeliveryQueue", "PushStreamFailureQueue"},  # + stream failures
    "PushDeliveryFunction": {"PushDeliveryQueue", "PushDeadLetterQueue"},
}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _statements(translated: dict[str, Any], function: str) -> list[dict[str, Any]]:
    resources = translated["Resources"]
    role_id = resources[function]["Properties"]["Role"]["Fn::GetAtt"][0]
    role = resources[role_id]["Properties"]
    statements = [s for p in role.get("Policies", []) for s in _as_list(p["PolicyDocument"]["Statement"])]
    for arn in role.get("ManagedPolicyArns", []):
        if isinstance(arn, dict) and "Ref" in arn:  # one of the template's managed policies
            document = resources[arn["Ref"]]["Properties"]["PolicyDocument"]
            statements.extend(_as_list(document["Statement"]))
        else:
            name = arn["Fn::Sub"] if isinstance(arn, dict) else arn
            name = name.replace("${AWS::Partition}", "aws")
            assert name in EVENT_SOURCE_POLICIES, f"{function}: unexpected managed policy {name}"
            statements.append({"Effect": "Allow", "Action": sorted(EVENT_SOURCE_POLICIES[name]), "Resource": "*"})
    return statements


def _event_source_actions(translated: dict[str, Any], function: str) -> set[str]:
    """What the AWS managed execution roles SAM attached for the function's event sources allow."""
    resources = translated["Resources"]
    role_id = resources[function]["Properties"]["Role"]["Fn::GetAtt"][0]
    arns = [a for a in resources[role_id]["Properties"].get("ManagedPolicyArns", []) if not isinstance(a, dict)]
    return set().union(*(EVENT_SOURCE_POLICIES.get(a, set()) for a in arns))


def _granted(statements: list[dict[str, Any]]) -> set[str]:
    assert all(s["Effect"] == "Allow" for s in statements)
    return {a for s in statements for a in _as_list(s["Action"])}


def _functions(translated: dict[str, Any]) -> list[str]:
    return sorted(k for k, v in translated["Resources"].items() if v["Type"] == "AWS::Lambda::Function")


def test_every_function_has_a_declared_list_of_aws_calls(
    translated: dict[str, Any], aws_calls: dict[str, set[str]]
) -> None:
    assert set(_functions(translated)) == set(aws_calls)


def test_each_role_grants_what_its_calls_need_and_no_other_write(
    translated: dict[str, Any], aws_calls: dict[str, set[str]], needed_iam_actions: Callable[[set[str]], set[str]]
) -> None:
    for function in _functions(translated):
        granted = _granted(_statements(translated, function))
        needed = needed_iam_actions(aws_calls[function])
        assert needed <= granted, f"{function} lacks {sorted(needed - granted)}"
        consumption = _event_source_actions(translated, function)
        extra_writes = {a for a in granted - needed - consumption if not a.split(":", 1)[1].startswith(READ_VERBS)}
        extra_writes -= {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
        if function == "PushDispatcherFunction":
            extra_writes -= {"sqs:SendMessage"}  # the stream's on-failure destination (SAM adds it)
        assert not extra_writes, f"{function} may also {sorted(extra_writes)}"


def test_no_wildcard_actions_and_table_actions_only_on_the_table(translated: dict[str, Any]) -> None:
    for function in _functions(translated):
        for statement in _statements(translated, function):
            for action in _as_list(statement["Action"]):
                assert "*" not in action, (function, action)
                if action.startswith("dynamodb:") and action.split(":")[1] in {
                    "GetItem",
                    "Query",
                    "PutItem",
                    "UpdateItem",
                    "DeleteItem",
                }:
                    resources = _as_list(statement["Resource"])
                    assert all("TasksTable" in str(r) for r in resources), (function, action, resources)


@pytest.mark.parametrize("function", sorted(SENDS_TO))
def test_functions_send_only_to_their_own_queues(translated: dict[str, Any], function: str) -> None:
    queues = {
        str(r["Fn::GetAtt"][0])
        for s in _statements(translated, function)
        if "sqs:SendMessage" in _as_list(s["Action"])
        for r in _as_list(s["Resource"])
    }
    assert queues == SENDS_TO[function]


def test_readers_cannot_write(translated: dict[str, Any], aws_calls: dict[str, set[str]]) -> None:
    for function in [
        "ListTasksFunction",
        "GetPushConfigFunction",
        "ListPushConfigsFunction",
        "GetExtendedCardFunction",
    ]:
        granted = _granted(_statements(translated, function))
        assert not {a for a in granted if not a.split(":", 1)[1].startswith(READ_VERBS)} - {
            "xray:PutTraceSegments",
            "xray:PutTelemetryRecords",
        }, function
