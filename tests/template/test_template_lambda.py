"""What the template asks of Lambda, on the template as CloudFormation receives it (SAM-translated
offline): every function and the core layer on the one ``Architecture``; the core layer built by
its Makefile for that architecture; the gateway under the Lambda Web Adapter of that architecture,
or, with no adapter version, a Python handler with none of the adapter's settings; and the
variable ``sam local --env-vars`` sets to point the functions at a local AWS endpoint."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cloudformation import Deployed

from a2a_serverless_dev.project import LAYER_BUILD, project_template
from a2a_serverless_dev.resources import load_template
from testkit.sam_template import RESOLVED_BEFORE_SAM

REPO = Path(__file__).resolve().parents[2]
ADAPTER_SETTINGS = {
    "AWS_LAMBDA_EXEC_WRAPPER",
    "AWS_LWA_INVOKE_MODE",
    "AWS_LWA_PORT",
    "AWS_LWA_READINESS_CHECK_PROTOCOL",
}
ADAPTER_LAYERS = {"arm64": "LambdaAdapterLayerArm64", "x86_64": "LambdaAdapterLayerX86"}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def test_arm64_is_the_default_and_x86_64_the_alternative(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["Architecture"]
    assert parameter["Default"] == "arm64"
    assert set(parameter["AllowedValues"]) == set(ADAPTER_LAYERS)


def test_every_function_and_the_core_layer_are_on_the_architecture(translated: dict[str, Any]) -> None:
    deployed = Deployed(translated)
    architectures = {name: deployed.resources[name]["Properties"]["Architectures"] for name in deployed.functions()}
    assert architectures
    assert all(value == [{"Ref": "Architecture"}] for value in architectures.values()), architectures
    (layer,) = [r for r in deployed.resources.values() if r["Type"] == "AWS::Lambda::LayerVersion"]
    assert layer["Properties"]["CompatibleArchitectures"] == [{"Ref": "Architecture"}]


@pytest.mark.parametrize("architecture", sorted(ADAPTER_LAYERS))
def test_the_core_layer_is_built_by_the_makefile_of_its_architecture(
    template: dict[str, Any], architecture: str
) -> None:
    # Given the layer's build metadata (SAM resolves its parameters; a Makefile gets none of them)
    metadata = template["Resources"]["CoreLayer"]["Metadata"]
    assert metadata["BuildMethod"] == "makefile"
    assert metadata["BuildArchitecture"] == {"Ref": "Architecture"}
    context = metadata["ContextPath"]["Fn::Sub"].replace("${Architecture}", architecture)
    # Then the Makefile SAM runs for the architecture names it, and builds the layer's target
    makefile = (REPO / context / "Makefile").read_text()
    assert re.search(rf"^ARCHITECTURE := {architecture}$", makefile, flags=re.MULTILINE)
    included = (REPO / context / "../layer.mk").read_text()
    assert re.search(r"^build-CoreLayer:", included, flags=re.MULTILINE)
    assert "--architecture $(ARCHITECTURE)" in included


@pytest.mark.parametrize("architecture", sorted(ADAPTER_LAYERS))
def test_the_gateway_streams_under_the_web_adapter_of_its_architecture(
    translate: Callable[[dict[str, str]], dict[str, Any]], architecture: str
) -> None:
    deployed = Deployed(translate({"Architecture": architecture}), Architecture=architecture)
    gateway = deployed.resources["GatewayFunction"]["Properties"]
    assert gateway["Handler"] == "run.sh"
    env = gateway["Environment"]["Variables"]
    assert env["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream"
    core, adapter = gateway["Layers"]
    assert core == {"Ref": _core_layer(deployed)}
    arn, names = adapter["Fn::Sub"]
    assert arn.endswith(":layer:${Adapter}:${WebAdapterLayerVersion}")
    assert deployed.resolve(names["Adapter"]) == ADAPTER_LAYERS[architecture]


def test_with_no_adapter_the_gateway_is_a_python_handler_without_its_settings(
    translate: Callable[[dict[str, str]], dict[str, Any]],
) -> None:
    # Given no Web Adapter (what sam local needs: it cannot fetch the layer, and does not stream)
    deployed = Deployed(translate({"WebAdapterLayerVersion": "0"}), WebAdapterLayerVersion="0")
    gateway = deployed.resources["GatewayFunction"]["Properties"]
    # Then the gateway is the buffered handler, with the core layer only and the adapter's settings
    # empty (an empty AWS_LAMBDA_EXEC_WRAPPER is none: the runtime runs the handler itself)
    assert gateway["Handler"] == "a2a_serverless.functions.gateway.handler"
    assert gateway["Layers"] == [{"Ref": _core_layer(deployed)}]
    assert {name: gateway["Environment"]["Variables"][name] for name in ADAPTER_SETTINGS} == dict.fromkeys(
        ADAPTER_SETTINGS, ""
    )
    # (and its handler is the one the app's tests drive: tests/functions/test_gateway_buffered.py)
    assert (REPO / "shared" / "a2a_serverless" / "functions" / "gateway.py").is_file()


def test_sam_local_can_resolve_every_function(template: dict[str, Any]) -> None:
    # SAM CLI's resolver cannot resolve an Fn::If branch of AWS::NoValue, and then leaves the whole
    # function unresolved (its handler, layers and environment): no function may use one, but in the
    # properties AWS::LanguageExtensions resolves first (SAM CLI runs that transform before its resolver)
    def outside_language_extensions(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: outside_language_extensions(v) for k, v in value.items() if k not in RESOLVED_BEFORE_SAM}
        if isinstance(value, list):
            return [outside_language_extensions(v) for v in value]
        return value

    functions = {k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}
    assert "AWS::NoValue" not in json.dumps(outside_language_extensions(functions))
    assert "AWS::NoValue" not in json.dumps(outside_language_extensions(template["Globals"]))


def _core_layer(deployed: Deployed) -> str:
    (layer,) = [k for k, v in deployed.resources.items() if v["Type"] == "AWS::Lambda::LayerVersion"]
    return layer


def test_the_aws_endpoint_variable_is_declared_empty_for_sam_local(template: dict[str, Any]) -> None:
    # sam local overrides (--env-vars) only the variables the template declares
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["A2A_AWS_ENDPOINT_URL"] == ""


def test_an_agent_projects_layer_is_built_by_the_kits_makefiles(tmp_path: Path) -> None:
    # Given the template a2a-serverless init writes (its layer is kit/, its build kit/layer/)
    written = tmp_path / "template.yaml"
    written.write_text(project_template((REPO / "template.yaml").read_text(), name="Bot", executor="bot.agent:Agent"))
    metadata = load_template(written)["Resources"]["CoreLayer"]["Metadata"]
    # Then SAM runs the Makefile of the architecture from the project's copy of the kit's build
    assert metadata["ContextPath"] == {"Fn::Sub": "kit/layer/${Architecture}"}
    assert all((REPO / "shared" / "layer" / name).is_file() for name in LAYER_BUILD)
