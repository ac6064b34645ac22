"""Tracing on AWS (docs/tracing.md), on the template as CloudFormation receives it: off by default,
with nothing of OpenTelemetry attached; the Tracing parameter switches every function on at once
(its layer beside the core layer, the exporter's variables, the X-Ray propagator), CloudWatch
signed by the functions themselves or forwarded by a collector layer, and Transaction Search
created only when asked for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cloudformation import Deployed

Translate = Callable[[dict[str, str]], dict[str, Any]]
XRAY_WRITE = "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"
COLLECTOR = "arn:aws:lambda:us-east-1:123456789012:layer:otel-collector:1"


def deploy(translate: Translate, **parameters: str) -> Deployed:
    return Deployed(translate(parameters), **parameters)


def layer_id(deployed: Deployed, prefix: str) -> str:
    (found,) = [
        k for k, v in deployed.resources.items() if v["Type"] == "AWS::Lambda::LayerVersion" and k.startswith(prefix)
    ]
    return found


def layer_refs(deployed: Deployed, function: str) -> list[str]:
    """The function's layers: logical ids of the template's own, ``arn`` for one named by ARN."""
    layers = deployed.resources[function]["Properties"]["Layers"]
    return [entry.get("Ref", "arn") for entry in layers]


def variables(deployed: Deployed, function: str) -> dict[str, Any]:
    env: dict[str, Any] = deployed.resources[function]["Properties"]["Environment"]["Variables"]
    return {k: v for k, v in env.items() if k.startswith(("A2A_TRACING", "OTEL_"))}


def test_off_by_default_no_function_gets_the_tracing_layer(translated: dict[str, Any]) -> None:
    # Given the template's defaults
    deployed = Deployed(translated)

    # Then there is no tracing layer, each function has the core layer only (the gateway the
    # adapter's too), and its variables switch nothing on
    assert deployed.parameters["Tracing"] == "Off"
    assert [k for k in deployed.resources if k.startswith("TracingLayer")] == []
    core = layer_id(deployed, "CoreLayer")
    for function in deployed.functions():
        expected = [core, "arn"] if function == "GatewayFunction" else [core]
        assert layer_refs(deployed, function) == expected, function
        assert variables(deployed, function) == {
            "A2A_TRACING": "",
            "A2A_TRACING_SIGV4": "",
            # OpenTelemetry's own defaults, for an agent that uses it by itself
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:4318/v1/traces",
            "OTEL_PROPAGATORS": "tracecontext,baggage",
        }, function
    # and nothing of Transaction Search (the functions' own log groups are not tracing's)
    assert not any(
        v["Type"].startswith("AWS::XRay::") or v["Type"] == "AWS::Logs::ResourcePolicy"
        for v in deployed.resources.values()
    )


def test_cloudwatch_signs_each_export_to_the_regions_otlp_endpoint(translate: Translate) -> None:
    # Given Tracing CloudWatch, no collector layer
    deployed = deploy(translate, Tracing="CloudWatch")
    core, tracing = layer_id(deployed, "CoreLayer"), layer_id(deployed, "TracingLayer")

    for function in deployed.functions():
        # Then every function has the tracing layer after the core layer (the gateway after the adapter's)
        expected = [core, "arn", tracing] if function == "GatewayFunction" else [core, tracing]
        assert layer_refs(deployed, function) == expected, function
        # ... exports OTLP to CloudWatch's traces endpoint in its Region, signed for X-Ray, and
        # continues API Gateway's and Lambda's X-Ray context
        assert variables(deployed, function) == {
            "A2A_TRACING": "otlp",
            "A2A_TRACING_SIGV4": "xray",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": {"Fn::Sub": "https://xray.${AWS::Region}.amazonaws.com/v1/traces"},
            "OTEL_PROPAGATORS": "tracecontext,baggage,xray-lambda",
        }, function
        # ... and its role may write traces (xray:PutTraceSegments, which the endpoint authorises)
        role = deployed.resources[deployed.role(function)]["Properties"]
        assert XRAY_WRITE in role["ManagedPolicyArns"], function
    # The tracing layer is built for the functions' Python and architecture
    layer = deployed.resources[tracing]["Properties"]
    assert layer["CompatibleRuntimes"] == ["python3.13"]
    assert layer["CompatibleArchitectures"] == [{"Ref": "Architecture"}]


def test_otlp_exports_to_the_endpoint_given_unsigned(translate: Translate) -> None:
    deployed = deploy(translate, Tracing="Otlp", TracingEndpoint="https://otel.example.com/v1/traces")
    for function in deployed.functions():
        assert variables(deployed, function) == {
            "A2A_TRACING": "otlp",
            "A2A_TRACING_SIGV4": "",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": {"Ref": "TracingEndpoint"},
            "OTEL_PROPAGATORS": "tracecontext,baggage,xray-lambda",
        }, function


@pytest.mark.parametrize("tracing", ["CloudWatch", "Otlp"])
@pytest.mark.parametrize("adapter", ["25", "0"])
def test_a_collector_layer_receives_the_spans_on_localhost(translate: Translate, tracing: str, adapter: str) -> None:
    # Given a collector extension layer (it signs or forwards as its own configuration says)
    deployed = deploy(translate, Tracing=tracing, TracingCollectorLayerArn=COLLECTOR, WebAdapterLayerVersion=adapter)
    core, tracing_layer = layer_id(deployed, "CoreLayer"), layer_id(deployed, "TracingLayer")
    for function in deployed.functions():
        # Then every function has it last, and sends it its spans unsigned
        layers = deployed.resources[function]["Properties"]["Layers"]
        assert layers[-1] == {"Ref": "TracingCollectorLayerArn"}, function
        web_adapter = function == "GatewayFunction" and adapter != "0"
        expected = [core, "arn", tracing_layer, "TracingCollectorLayerArn"] if web_adapter else [core, tracing_layer]
        assert layer_refs(deployed, function)[: len(expected)] == expected, function
        env = variables(deployed, function)
        assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == "http://localhost:4318/v1/traces", function
        assert env["A2A_TRACING_SIGV4"] == "", function


@pytest.mark.parametrize(
    ("parameters", "created"),
    [
        pytest.param({"Tracing": "CloudWatch"}, False, id="existing-by-default"),
        pytest.param({"Tracing": "CloudWatch", "TracingTransactionSearch": "Create"}, True, id="created"),
        pytest.param({"Tracing": "Off", "TracingTransactionSearch": "Create"}, False, id="not-without-cloudwatch"),
    ],
)
def test_transaction_search_is_created_only_when_asked_for(
    translate: Translate, parameters: dict[str, str], created: bool
) -> None:
    # Transaction Search is account-wide: a stack creates it only on request
    deployed = deploy(translate, **parameters)
    types = {v["Type"]: (k, v) for k, v in deployed.resources.items()}
    assert ("AWS::XRay::TransactionSearchConfig" in types) is created
    assert ("AWS::Logs::ResourcePolicy" in types) is created
    if created:
        _, config = types["AWS::XRay::TransactionSearchConfig"]
        policy_id, policy = types["AWS::Logs::ResourcePolicy"]
        # after the policy that lets X-Ray write the spans into CloudWatch Logs
        assert config["DependsOn"] == policy_id
        document = policy["Properties"]["PolicyDocument"]["Fn::Sub"]
        assert '"Service": "xray.amazonaws.com"' in document
        assert "log-group:aws/spans:*" in document
