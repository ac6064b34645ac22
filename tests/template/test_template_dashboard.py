"""The operators' dashboard (template.yaml's ``OperationsDashboard``): its body is dashboard JSON,
it shows every metric the functions emit (``lambda_/_metrics.CATALOGUE``) by the dimensions they
emit it with and no custom metric they do not, and AWS's metrics by their real names and
dimensions, of resources the template always has."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from a2a_serverless.lambda_._metrics import CATALOGUE, NAMESPACE
from a2a_serverless.lambda_._observability import metrics
from a2a_serverless_dev.resources import load_template

SUBSTITUTION = re.compile(r"\$\{([^}]*)\}")
SEARCH = re.compile(r"""^SEARCH\('\{([^}]*)\} MetricName="(\w+)"', '(\w+)', (\d+)\)$""")
STATISTICS = re.compile(r"^(SampleCount|Average|Sum|Minimum|Maximum|p\d{1,2}(\.\d+)?)$")

# AWS's metrics the dashboard may show: (namespace, name) -> the dimensions they are published by.
AWS_METRICS: dict[tuple[str, str], frozenset[str]] = {
    **{
        ("AWS/SQS", n): frozenset({"QueueName"})
        for n in ("ApproximateAgeOfOldestMessage", "ApproximateNumberOfMessagesVisible")
    },
    **{
        ("AWS/Lambda", n): frozenset({"FunctionName"})
        for n in ("Errors", "Throttles", "Duration", "ConcurrentExecutions", "IteratorAge")
    },
    **{
        ("AWS/DynamoDB", n): frozenset({"TableName"})
        for n in (
            "ConsumedReadCapacityUnits",
            "ConsumedWriteCapacityUnits",
            "ReadThrottleEvents",
            "WriteThrottleEvents",
        )
    },
    **{("AWS/ApiGateway", n): frozenset({"ApiName", "Stage"}) for n in ("Count", "4XXError", "5XXError", "Latency")},
}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


@pytest.fixture(scope="module")
def raw_body(template: dict[str, Any]) -> str:
    text: str = template["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    return text


@pytest.fixture(scope="module")
def widgets(raw_body: str) -> list[dict[str, Any]]:
    # Every substitution is a name inside a JSON string: any name stands in for it.
    body = json.loads(SUBSTITUTION.sub("x", raw_body))
    assert set(body) <= {"widgets", "periodOverride", "start", "end"}
    found: list[dict[str, Any]] = body["widgets"]
    return found


def shown(widgets: list[dict[str, Any]]) -> set[tuple[str, str, frozenset[str]]]:
    """Every (namespace, metric, dimension names) a widget draws, rows and SEARCH expressions alike."""
    metrics_shown: set[tuple[str, str, frozenset[str]]] = set()
    for widget in widgets:
        for row in widget["properties"].get("metrics", []):
            if isinstance(row[0], dict):
                (options,) = row
                schema, name, statistic, period = SEARCH.fullmatch(options["expression"]).groups()  # type: ignore[union-attr]
                namespace, *dimensions = [part.strip() for part in schema.split(",")]
                assert STATISTICS.match(statistic), options
                assert int(period) % 60 == 0, options
                metrics_shown.add((namespace, name, frozenset(dimensions)))
                continue
            fields = row[:-1] if isinstance(row[-1], dict) else row
            namespace, name, *pairs = fields
            assert len(pairs) % 2 == 0, row
            assert all(isinstance(f, str) and f != "." for f in fields), row  # no shorthand
            metrics_shown.add((namespace, name, frozenset(pairs[0::2])))
    return metrics_shown


def test_the_dashboard_is_created_only_when_asked_for(template: dict[str, Any]) -> None:
    # (an account's fourth dashboard costs 3 USD a month; the stack costs nothing at rest otherwise)
    assert template["Resources"]["OperationsDashboard"]["Condition"] == "HasDashboard"
    assert template["Conditions"]["HasDashboard"] == {"Fn::Equals": [{"Ref": "Dashboard"}, "true"]}
    assert template["Parameters"]["Dashboard"]["Default"] == "false"


def test_the_body_is_dashboard_json_of_metric_and_text_widgets(widgets: list[dict[str, Any]]) -> None:
    for widget in widgets:
        assert widget["type"] in {"metric", "text"}, widget
        assert 1 <= widget["width"] <= 24
        assert 1 <= widget["height"] <= 1000
        properties = widget["properties"]
        if widget["type"] == "text":
            assert properties["markdown"]
            continue
        assert properties["title"]
        assert properties["region"] == "x"  # ${AWS::Region}
        assert properties["metrics"]
        assert properties.get("view", "timeSeries") in {"timeSeries", "singleValue", "bar", "pie", "gauge"}
        assert STATISTICS.match(properties.get("stat", "Average"))
        assert properties["period"] % 60 == 0
        ids = [row[0]["id"] for row in properties["metrics"] if isinstance(row[0], dict)]
        assert all(re.fullmatch(r"[a-z]\w*", i) for i in ids)
        assert len(ids) == len(set(ids))


def test_every_metric_the_functions_emit_is_on_it_and_every_one_on_it_is_emitted(
    widgets: list[dict[str, Any]],
) -> None:
    emitted = {(NAMESPACE, m.name, frozenset({"service", m.dimension} - {""})) for m in CATALOGUE}
    custom = {entry for entry in shown(widgets) if not entry[0].startswith("AWS/")}
    assert custom == emitted


def test_the_aws_metrics_have_their_names_and_dimensions(widgets: list[dict[str, Any]]) -> None:
    aws = {entry for entry in shown(widgets) if entry[0].startswith("AWS/")}
    assert {(namespace, name) for namespace, name, _ in aws} == set(AWS_METRICS)
    for namespace, name, dimensions in aws:
        assert AWS_METRICS[namespace, name] == dimensions, (namespace, name)


def test_its_substitutions_name_resources_the_stack_always_has(template: dict[str, Any], raw_body: str) -> None:
    resources = template["Resources"]
    for name in set(SUBSTITUTION.findall(raw_body)):
        if name.startswith("AWS::"):
            assert name in {"AWS::Region", "AWS::StackName"}
            continue
        logical_id = name.split(".")[0]
        assert logical_id in resources, name
        assert "Condition" not in resources[logical_id], f"{name} may not exist"


def test_the_namespace_and_service_are_the_ones_the_functions_write(template: dict[str, Any], raw_body: str) -> None:
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert NAMESPACE == metrics.namespace == variables["POWERTOOLS_METRICS_NAMESPACE"]
    services = set(re.findall(r'"service", "([^"]+)"', raw_body))
    assert services == {metrics.service}


def test_the_functions_emit_metrics_only_through_the_catalogue() -> None:
    package = Path(__file__).resolve().parents[2] / "shared" / "a2a_serverless"
    catalogue = package / "lambda_" / "_metrics.py"
    direct = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path != catalogue and re.search(r"\b(add_metric|single_metric)\(", path.read_text())
    ]
    assert direct == []
