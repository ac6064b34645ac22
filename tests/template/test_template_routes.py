"""template.yaml against the method table: every unary A2A route reaches the function that
serves it, with and without the tenant prefix."""

from __future__ import annotations

import re
from typing import Any

import pytest

from a2a_devstack.resources import load_template
from a2a_serverless.methods import METHODS, Method


def _function_logical_id(module: str) -> str:
    return "".join(p.capitalize() for p in module.split("_")) + "Function"


def _api_events(template: dict[str, Any], logical_id: str) -> set[tuple[str, str]]:
    props = template["Resources"][logical_id]["Properties"]
    return {
        (e["Properties"]["Method"].upper(), e["Properties"]["Path"])
        for e in props.get("Events", {}).values()
        if e["Type"] == "Api"
    }


def _api_path(path: str) -> str:
    """API Gateway path parts are whole segments: '/tasks/{id}:cancel' is served on '/tasks/{id}'."""
    return re.sub(r"(\{[a-z_]+\}):[a-zA-Z]+$", r"\1", path)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


@pytest.mark.parametrize("method", [m for m in METHODS if not m.streaming], ids=lambda m: m.name)
def test_each_unary_method_is_routed_to_its_function(template: dict[str, Any], method: Method) -> None:
    logical_id = _function_logical_id(method.function)
    props = template["Resources"][logical_id]["Properties"]
    assert props["Handler"] == f"{method.function}.handler"
    events = _api_events(template, logical_id)
    for route in method.routes:
        assert (route.verb, _api_path(route.path)) in events
        assert (route.verb, "/{tenant}" + _api_path(route.path)) in events


def test_jsonrpc_card_and_worker_are_wired(template: dict[str, Any]) -> None:
    assert ("POST", "/") in _api_events(template, "JsonRpcFunction")
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
