"""template.yaml against the method table: every unary A2A route reaches the function that
serves it, with and without the tenant prefix."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from a2a_serverless.methods import METHODS, Method
from a2a_serverless.transport.rows import Endpoint
from a2a_serverless.transport.v03 import REST_ROWS
from a2a_serverless_dev.resources import load_template


def _function_logical_id(module: str) -> str:
    return "".join(p.capitalize() for p in module.split("_")) + "Function"


def _api_events(template: dict[str, Any], logical_id: str) -> dict[tuple[str, str], str]:
    """(verb, path) -> response transfer mode of each API event of the function."""
    props = template["Resources"][logical_id]["Properties"]
    return {
        (e["Properties"]["Method"].upper(), e["Properties"]["Path"]): e["Properties"].get(
            "ResponseTransferMode", "BUFFERED"
        )
        for e in props.get("Events", {}).values()
        if e["Type"] == "Api"
    }


def _api_path(path: str) -> str:
    """The API Gateway resource serving a method-table path. Path parts are whole segments, so
    '/tasks/{id}:cancel' is served on '/tasks/{id}'; and sibling path variables must share one name,
    so the task is '{id}' everywhere and a push config '{configId}'."""
    path = re.sub(r"(\{[a-z_]+\}):[a-zA-Z]+$", r"\1", path)
    path = path.replace("/pushNotificationConfigs/{id}", "/pushNotificationConfigs/{configId}")
    path = path.replace("{config_id}", "{configId}")
    return path.replace("{task_id}", "{id}")


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_each_method_is_routed_to_its_function(template: dict[str, Any], method: Method) -> None:
    logical_id = _function_logical_id(method.function)
    props = template["Resources"][logical_id]["Properties"]
    gateway = method.function == "gateway"
    # The gateway's: run.sh under the Lambda Web Adapter, else its module (test_template_lambda.py)
    handlers = props["Handler"]["Fn::If"][1:] if gateway else [props["Handler"]]
    assert f"a2a_serverless.functions.{method.function}.handler" in handlers
    events = _api_events(template, logical_id)
    for route in method.routes:
        for path in (_api_path(route.path), "/{tenant}" + _api_path(route.path)):
            assert (route.verb, path) in events
            # streaming exactly where the function can stream (the gateway) and the method needs it
            assert events[(route.verb, path)] == ("RESPONSE_STREAM" if gateway else "BUFFERED")
        assert gateway or not method.streaming


@pytest.mark.parametrize("row", REST_ROWS, ids=lambda r: f"{r.route.verb} {r.route.path}")
def test_each_v03_route_is_routed_to_the_function_of_its_v1_twin(template: dict[str, Any], row: Endpoint) -> None:
    method, route = row.method, row.route
    assert route is not None
    events = _api_events(template, _function_logical_id(method.function))
    gateway = method.function == "gateway"
    assert events.get((route.verb, _api_path(route.path))) == ("RESPONSE_STREAM" if gateway else "BUFFERED")


def test_no_two_functions_claim_the_same_route(template: dict[str, Any]) -> None:
    seen: dict[tuple[str, str], str] = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for route in _api_events(template, logical_id):
            assert route not in seen, f"{route} is routed to {seen[route]} and {logical_id}"
            seen[route] = logical_id


def test_gateway_runs_the_app_under_the_web_adapter_in_stream_mode(template: dict[str, Any]) -> None:
    gateway = template["Resources"]["GatewayFunction"]["Properties"]
    env = gateway["Environment"]["Variables"]
    # (with an adapter: test_template_lambda.py resolves the template without one)
    assert env["AWS_LAMBDA_EXEC_WRAPPER"]["Fn::If"][:2] == ["HasWebAdapter", "/opt/bootstrap"]
    assert env["AWS_LWA_INVOKE_MODE"]["Fn::If"][:2] == ["HasWebAdapter", "response_stream"]
    # Whatever the parameter says, a stream ends before the function's timeout
    stream_max = template["Parameters"][env["A2A_STREAM_MAX_SECONDS"]["Ref"]]
    assert stream_max["Default"] <= stream_max["MaxValue"] < gateway["Timeout"]
    run_sh = (Path(__file__).parents[2] / "functions" / "run.sh").read_text()
    assert "a2a_serverless.transport.app:create_app" in run_sh
    assert ("POST", "/") in _api_events(template, "GatewayFunction")


def test_card_and_worker_are_wired(template: dict[str, Any]) -> None:
    assert ("GET", "/.well-known/agent-card.json") in _api_events(template, "AgentCardFunction")
    worker = template["Resources"]["WorkerFunction"]["Properties"]
    (event,) = worker["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["BatchSize"] == 1
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_work_queue_outlives_the_worker_timeout(template: dict[str, Any]) -> None:
    resources = template["Resources"]
    queue = resources["WorkQueue"]["Properties"]
    assert queue["FifoQueue"] is True
    assert queue["VisibilityTimeout"] >= 6 * resources["WorkerFunction"]["Properties"]["Timeout"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["WorkDeadLetterQueue", "Arn"]}


def test_sibling_path_variables_share_one_name(template: dict[str, Any]) -> None:
    """API Gateway refuses two different variable names at the same level ("/tasks/{id}" beside
    "/tasks/{task_id}/..."): every path must name the variable at a given position the same way."""
    names: dict[tuple[str, int], set[str]] = {}
    for resource in template["Resources"].values():
        for event in resource.get("Properties", {}).get("Events", {}).values():
            if event["Type"] != "Api":
                continue
            parts = event["Properties"]["Path"].strip("/").split("/")
            for depth, part in enumerate(parts):
                if part.startswith("{"):
                    names.setdefault(
                        ("/".join(p if not p.startswith("{") else "*" for p in parts[:depth]), depth), set()
                    ).add(part)
    clashes = {k: v for k, v in names.items() if len(v) > 1}
    assert not clashes
