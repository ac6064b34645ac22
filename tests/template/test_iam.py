"""Least privilege, on the template as CloudFormation receives it (SAM-translated offline): each
function's role grants the IAM actions its AWS calls need (the list in tests/conftest.py), on the
resources they touch, and nothing else of write scope, in both execution modes (conditional
resources and policies resolved as CloudFormation resolves them for the mode)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cloudformation import Deployed

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

MODES = ["Queue", "Durable"]
# The calls that only ExecutionMode Durable makes (tests/conftest.py declares them with the others):
# starting and resuming durable executions, and the durable worker's checkpoints.
DURABLE_ONLY = {
    "lambda:InvokeFunction",
    "lambda:SendDurableExecutionCallbackSuccess",
    "lambda:SendDurableExecutionCallbackFailure",
    "lambda:CheckpointDurableExecution",
    "lambda:GetDurableExecutionState",
}

# The calls that only CardSigning=true makes: signing the cards with the KMS key.
CARD_SIGNING_ONLY = {"kms:Sign", "kms:GetPublicKey"}

# Which queues each function may send to (logical ids).
SENDS_TO = {
    "GatewayFunction": {"WorkQueue"},
    "SendMessageFunction": {"WorkQueue"},
    "PushDispatcherFunction": {"PushDeliveryQueue", "PushStreamFailureQueue"},  # + stream failures
    "PushDeliveryFunction": {"PushDeliveryQueue", "PushDeadLetterQueue"},
}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.fixture(scope="module", params=MODES)
def deployed(request: pytest.FixtureRequest, translate: Callable[[dict[str, str]], dict[str, Any]]) -> Deployed:
    mode: str = request.param
    return Deployed(translate({"ExecutionMode": mode}), ExecutionMode=mode)


def _statements(deployed: Deployed, function: str) -> list[dict[str, Any]]:
    resources = deployed.resources
    role_id = deployed.role(function)
    role = resources[role_id]["Properties"]
    statements = [s for p in role.get("Policies", []) for s in _as_list(p["PolicyDocument"]["Statement"])]
    # Policies of their own attached to the role (one that names the function would be a cycle in it)
    for resource in resources.values():
        if resource["Type"] == "AWS::IAM::RolePolicy" and resource["Properties"]["RoleName"] == {"Ref": role_id}:
            statements.extend(_as_list(resource["Properties"]["PolicyDocument"]["Statement"]))
        policy_types = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
        if resource["Type"] in policy_types and {"Ref": role_id} in resource["Properties"].get("Roles", []):
            statements.extend(_as_list(resource["Properties"]["PolicyDocument"]["Statement"]))
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


def _event_source_actions(deployed: Deployed, function: str) -> set[str]:
    """What the AWS managed execution roles SAM attached for the function's event sources allow."""
    role = deployed.resources[deployed.role(function)]["Properties"]
    arns = [a for a in role.get("ManagedPolicyArns", []) if not isinstance(a, dict)]
    return set().union(*(EVENT_SOURCE_POLICIES.get(a, set()) for a in arns))


def _granted(statements: list[dict[str, Any]]) -> set[str]:
    assert all(s["Effect"] == "Allow" for s in statements)
    return {a for s in statements for a in _as_list(s["Action"])}


def _needed(deployed: Deployed, actions: set[str]) -> set[str]:
    """The actions a function's calls need in the deployed mode: Queue makes no durable calls, and
    without CardSigning nothing signs cards."""
    if deployed.parameters["ExecutionMode"] != "Durable":
        actions = actions - DURABLE_ONLY
    if deployed.parameters.get("CardSigning") != "true":
        actions = actions - CARD_SIGNING_ONLY
    return actions


def _functions(translated: dict[str, Any]) -> list[str]:
    return sorted(k for k, v in translated["Resources"].items() if v["Type"] == "AWS::Lambda::Function")


def test_every_function_has_a_declared_list_of_aws_calls(
    translated: dict[str, Any], aws_calls: dict[str, set[str]]
) -> None:
    assert set(_functions(translated)) == set(aws_calls)


def test_each_role_grants_what_its_calls_need_and_no_other_write(
    deployed: Deployed, aws_calls: dict[str, set[str]], needed_iam_actions: Callable[[set[str]], set[str]]
) -> None:
    for function in deployed.functions():
        granted = _granted(_statements(deployed, function))
        needed = _needed(deployed, needed_iam_actions(aws_calls[function]))
        assert needed <= granted, f"{function} lacks {sorted(needed - granted)}"
        consumption = _event_source_actions(deployed, function)
        extra_writes = {a for a in granted - needed - consumption if not a.split(":", 1)[1].startswith(READ_VERBS)}
        extra_writes -= {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
        if function == "PushDispatcherFunction":
            extra_writes -= {"sqs:SendMessage"}  # the stream's on-failure destination (SAM adds it)
        assert not extra_writes, f"{function} may also {sorted(extra_writes)}"


def test_no_wildcard_actions_and_table_actions_only_on_the_table(deployed: Deployed) -> None:
    for function in deployed.functions():
        for statement in _statements(deployed, function):
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
def test_functions_send_only_to_their_own_queues(deployed: Deployed, function: str) -> None:
    queues = {
        str(r["Fn::GetAtt"][0])
        for s in _statements(deployed, function)
        if "sqs:SendMessage" in _as_list(s["Action"])
        for r in _as_list(s["Resource"])
    }
    assert queues == SENDS_TO[function]


def test_readers_cannot_write(deployed: Deployed) -> None:
    for function in [
        "ListTasksFunction",
        "GetPushConfigFunction",
        "ListPushConfigsFunction",
        "GetExtendedCardFunction",
    ]:
        granted = _granted(_statements(deployed, function))
        assert not {a for a in granted if not a.split(":", 1)[1].startswith(READ_VERBS)} - {
            "xray:PutTraceSegments",
            "xray:PutTelemetryRecords",
        }, function


def test_the_durable_worker_and_its_permissions_exist_only_in_durable_mode(deployed: Deployed) -> None:
    durable = deployed.parameters["ExecutionMode"] == "Durable"
    assert ("DurableWorkerFunction" in deployed.functions()) == durable
    granted = {
        function: {a for a in _granted(_statements(deployed, function)) if a.startswith("lambda:")}
        for function in deployed.functions()
    }
    starts = {
        "lambda:InvokeFunction",
        "lambda:SendDurableExecutionCallbackSuccess",
        "lambda:SendDurableExecutionCallbackFailure",
    }
    checkpoints = {"lambda:CheckpointDurableExecution", "lambda:GetDurableExecutionState"}
    # Queue: no function may call Lambda; Durable: the API functions that start, resume and cancel
    # tasks may start and call back executions, the durable worker may checkpoint, no other
    expected = (
        {"GatewayFunction": starts, "SendMessageFunction": starts, "DurableWorkerFunction": checkpoints}
        if durable
        else {}
    )
    assert {f: a for f, a in granted.items() if a} == expected


def test_durable_permissions_name_the_durable_worker_only(
    translate: Callable[[dict[str, str]], dict[str, Any]],
) -> None:
    deployed = Deployed(translate({"ExecutionMode": "Durable"}), ExecutionMode="Durable")
    # Executions are sub-resources of the function's versions (an alias never applies to them): the
    # callbacks and checkpoints name <function ARN>:*; a start invokes the alias the functions are told.
    executions = {"Fn::Sub": "${DurableWorkerFunction.Arn}:*"}
    alias = {"Ref": "DurableWorkerFunctionAliaslive"}
    for function in ("GatewayFunction", "SendMessageFunction", "DurableWorkerFunction"):
        for statement in _statements(deployed, function):
            actions = {a for a in _as_list(statement["Action"]) if a.startswith("lambda:")}
            if not actions:
                continue
            expected = alias if actions == {"lambda:InvokeFunction"} else executions
            assert "lambda:InvokeFunction" not in actions or actions == {"lambda:InvokeFunction"}, statement
            assert _as_list(statement["Resource"]) == [expected], (function, statement)


def test_with_card_signing_the_card_functions_sign_with_the_card_key_only(
    translate: Callable[[dict[str, str]], dict[str, Any]],
    aws_calls: dict[str, set[str]],
    needed_iam_actions: Callable[[set[str]], set[str]],
) -> None:
    deployed = Deployed(translate({"CardSigning": "true"}), CardSigning="true", ExecutionMode="Queue")
    assert deployed.resources["CardSigningKey"]["Properties"]["KeySpec"] == "RSA_2048"
    signers = {}
    for function in deployed.functions():
        statements = _statements(deployed, function)
        granted = _granted(statements)
        assert _needed(deployed, needed_iam_actions(aws_calls[function])) <= granted, function
        kms = [s for s in statements if any(a.startswith("kms:") for a in _as_list(s["Action"]))]
        if kms:
            signers[function] = {a for s in kms for a in _as_list(s["Action"])}
            assert all(_as_list(s["Resource"]) == [{"Fn::GetAtt": ["CardSigningKey", "Arn"]}] for s in kms)
    card_functions = ["AgentCardFunction", "GatewayFunction", "GetExtendedCardFunction"]
    assert signers == dict.fromkeys(card_functions, CARD_SIGNING_ONLY)
    key = deployed.resources["GatewayFunction"]["Properties"]["Environment"]["Variables"]["A2A_CARD_SIGNING_KEY"]
    assert key == {"Fn::GetAtt": ["CardSigningKey", "Arn"]}
