"""template.yaml through the SAM translator (aws-sam-translator, offline, no credentials): it
translates, and API Gateway invokes the gateway with response streaming exactly on its routes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest


def _integrations(translated: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    (api,) = [r for r in translated["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    return {
        (verb.upper(), path): op["x-amazon-apigateway-integration"]
        for path, ops in api["Properties"]["Body"]["paths"].items()
        for verb, op in ops.items()
    }


def test_streaming_integrations_are_exactly_the_gateway_routes(translated: dict[str, Any]) -> None:
    integrations = _integrations(translated)
    assert integrations, "no API routes"
    for (verb, path), integration in integrations.items():
        uri = str(integration["uri"])
        streams = integration.get("responseTransferMode") == "STREAM"
        assert streams == ("GatewayFunction" in uri), (verb, path)
        assert ("response-streaming-invocations" in uri) == streams, (verb, path)
    assert ("POST", "/") in integrations
    assert ("GET", "/{tenant}/tasks/{id}") in integrations


def test_every_event_source_mapping_reports_partial_failures(translated: dict[str, Any]) -> None:
    resources = translated["Resources"]
    functions = [k for k, v in resources.items() if v["Type"] == "AWS::Lambda::Function"]
    assert {"GatewayFunction", "WorkerFunction", "DeadLetterFunction", "PushDeliveryFunction"} <= set(functions)
    mappings = [v["Properties"] for v in resources.values() if v["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert {m["FunctionName"]["Ref"] for m in mappings} == {
        "WorkerFunction",
        "DeadLetterFunction",
        "PushDispatcherFunction",
        "PushDeliveryFunction",
    }
    assert all(m["FunctionResponseTypes"] == ["ReportBatchItemFailures"] for m in mappings)


def test_the_dispatcher_reads_the_table_stream_with_a_filter_and_a_failure_destination(
    translated: dict[str, Any],
) -> None:
    resources = translated["Resources"]
    (mapping,) = [
        v["Properties"]
        for v in resources.values()
        if v["Type"] == "AWS::Lambda::EventSourceMapping"
        and v["Properties"]["FunctionName"]["Ref"] == "PushDispatcherFunction"
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["TasksTable", "StreamArn"]}
    assert mapping["BisectBatchOnFunctionError"] is True
    assert 0 < mapping["MaximumRetryAttempts"] <= 10
    assert 0 < mapping["MaximumRecordAgeInSeconds"] <= 86400
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": ["PushStreamFailureQueue", "Arn"]}
    inserts, heads = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert inserts["dynamodb"]["NewImage"]["sk"]["S"] == [{"prefix": "EVT#"}, {"prefix": "PUSH#"}, "META"]
    assert inserts["eventName"] == ["INSERT"]
    # a head that holds the events that ended its task, as Lambda's filter language names a present value
    assert heads["dynamodb"]["NewImage"] == {"sk": {"S": ["META"]}, "heldFirst": {"N": [{"exists": True}]}}
    assert heads["eventName"] == ["MODIFY"]


@pytest.mark.parametrize(
    ("mode", "authorizer_mode"),
    [
        pytest.param("Open", "none", id="open"),
        pytest.param("Jwt", "jwt", id="jwt"),
        pytest.param("AWS_IAM", "none", id="iam"),
    ],
)
def test_every_route_but_the_public_card_keys_and_push_receiver_goes_through_the_auth_mode(
    translate: Callable[[dict[str, str]], dict[str, Any]], mode: str, authorizer_mode: str
) -> None:
    # When the stack is deployed with this AuthMode (CloudFormation passes the value to SAM)
    translated = translate({"AuthMode": mode})
    (api,) = [r for r in translated["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    body = api["Properties"]["Body"]

    # Then every route but the card, the JWKS and delegation's push receiver (a push is checked by
    # the token it carries, which the receiver compares with the waiting task's) is checked that way
    public = {"/.well-known/agent-card.json", "/.well-known/jwks.json", "/_a2a/delegations/{ref}"}
    for path, ops in body["paths"].items():
        for verb, op in ops.items():
            expected = [{"NONE": []}] if path in public else [{mode: []}]
            assert op.get("security") == expected, (verb, path)
    definition = body["securityDefinitions"][mode]
    if mode == "AWS_IAM":
        assert definition["x-amazon-apigateway-authtype"] == "awsSigv4"
    else:
        authorizer = definition["x-amazon-apigateway-authorizer"]
        assert authorizer["type"] == "request"
        # Not cached, no identity source: requests without credentials reach the function (Open)
        assert authorizer.get("authorizerResultTtlInSeconds") == 0
        assert "identitySource" not in authorizer
    # and the authorizer function is told which check to make
    env = translated["Resources"]["AuthorizerFunction"]["Properties"]["Environment"]["Variables"]
    assert env["A2A_AUTHORIZER_MODE"] == {"Fn::If": ["IsJwtAuth", "jwt", "none"]}
    condition = translated["Conditions"]["IsJwtAuth"]["Fn::Equals"]
    assert ("jwt" if mode in condition else "none") == authorizer_mode
