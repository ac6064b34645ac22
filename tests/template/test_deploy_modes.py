"""Every deploy mode of the template translates (SAM, as ``sam deploy`` has it done) and cfn-lint
finds nothing above informational in the translation, which is what CloudFormation deploys:
``sam validate --lint`` and test_cfn_lint.py lint the template before translation and cannot see,
say, a dependency cycle through what SAM generates.

The modes are a pairwise covering array (tests/template/modes.py), not the full product: with 14
mode parameters the product is 36864 modes at about 2 s of cfn-lint each (20 hours on one core), while
every pair of values of two parameters appears in one of the array's 13 modes (about 35 s here). The
values come from the template's own AllowedValues, so a new value is covered without a change here.

A combination that cannot work is refused before anything is created, by the template's Rules
(evaluated here as CloudFormation evaluates them) or a parameter's AllowedPattern. What neither can
check (docs/operations.md, "Deploy modes"): a DurableExecutionTimeoutSeconds not above
InputWaitSeconds (Rules cannot compare numbers), a WebAdapterLayerVersion or collector layer that
does not exist in the Region, a Region without Lambda durable functions, a core layer built for
another Architecture than the one deployed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from cfnlint.api import ManualArgs, lint
from cloudformation import Deployed
from modes import (
    COLLECTOR,
    ENUMERATED,
    OPEN_PARAMETERS,
    PUBLIC_URL,
    TOPIC,
    covering_array,
    deployable,
    parameter_values,
)

from a2a_serverless_dev.resources import load_template
from testkit.sam_template import RESOLVED_BEFORE_SAM

JWT_RULE = "JwtNeedsIssuerAndAudience"
VALUES = parameter_values()
MODES = covering_array(VALUES)


def _mode_id(mode: Mapping[str, str]) -> str:
    """The enumerated values (a flag by its name, when true), then the open parameters set."""
    named = [name if mode[name] == "true" else mode[name] for name in ENUMERATED if mode[name] != "false"]
    on = [name for name, (off, _) in OPEN_PARAMETERS.items() if mode[name] != off]
    return "-".join([*named, *on])


def _defaults(template: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(v["Default"]) for k, v in template["Parameters"].items() if "Default" in v}


def test_the_modes_cover_every_pair_of_values_of_the_mode_parameters() -> None:
    parameters = load_template()["Parameters"]
    # The enumerated parameters' values are the template's own
    assert all(VALUES[name] == tuple(str(v) for v in parameters[name]["AllowedValues"]) for name in ENUMERATED)
    for name, (off, on) in OPEN_PARAMETERS.items():
        assert off == "0" if name == "WebAdapterLayerVersion" else off == "", name
        assert str(parameters[name]["Default"]) in (off, on), name
    # and every pair of values of two parameters is in some mode
    names = list(VALUES)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for x in VALUES[a]:
                for y in VALUES[b]:
                    assert any(m[a] == x and m[b] == y for m in MODES), (a, x, b, y)
    assert len(MODES) <= 16


@pytest.mark.parametrize("mode", [pytest.param(m, id=_mode_id(m)) for m in MODES])
def test_every_mode_translates_and_lints_clean(
    translate: Callable[[dict[str, str]], dict[str, Any]], mode: dict[str, str]
) -> None:
    # Given a deployable mode (with what the Rules require of it)
    parameters = deployable(mode)
    # When SAM translates the template for it, as CloudFormation would
    translated = translate(parameters)
    # Then cfn-lint, told the same parameter values, finds nothing above informational
    config = ManualArgs(regions=["us-east-1"], parameters=[{**_defaults(translated), **parameters}])
    matches = lint(json.dumps(translated), config=config)
    problems = [
        f"{m.rule.id} {m.message} {m.path}"
        for m in matches
        if not m.rule.id.startswith("I") and not _resolved_before_sam(m, translated, parameters)
    ]
    assert problems == []
    # and every mode passes the template's Rules
    assert _refused(translated, parameters) == []


def _resolved_before_sam(match: Any, translated: dict[str, Any], parameters: Mapping[str, str]) -> bool:
    """A warning only because AWS::LanguageExtensions resolved a property's ``Fn::If`` for this mode
    before SAM (tests/testkit/sam_template.py, :data:`RESOLVED_BEFORE_SAM`): a Ref, in such a property, to
    a resource whose condition holds in this mode (W1001), or a condition that only such properties
    used (W8001). Any other warning stands."""
    path = [str(p) for p in match.path]
    if match.rule.id == "W1001" and len(path) > 3 and path[2] == "Properties" and path[3] in RESOLVED_BEFORE_SAM:
        unavailable_unless = re.findall(r"condition '(\w+)' is False", match.message)
        deployed = Deployed(translated, **parameters)
        return bool(unavailable_unless) and all(deployed.holds({"Condition": c}) for c in unavailable_unless)
    if match.rule.id == "W8001":
        (condition,) = re.findall(r"Condition (\w+) not used", match.message)
        return condition in _used_only_before_sam()
    return False


def _used_only_before_sam() -> set[str]:
    """The conditions the template names only inside properties of :data:`RESOLVED_BEFORE_SAM`."""
    template = load_template()

    def named(value: Any, skip: bool) -> set[str]:
        found: set[str] = set()
        if isinstance(value, list):
            for item in value:
                found |= named(item, skip)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key == "Fn::If" and not skip:
                    found.add(item[0])
                if key == "Condition" and isinstance(item, str) and not skip:
                    found.add(item)
                found |= named(item, skip or key in RESOLVED_BEFORE_SAM)
        return found

    everywhere = {k: v for k, v in template.items() if k != "Resources"}
    used_elsewhere = named(everywhere, False) | named(template["Resources"], False)
    return set(template["Conditions"]) - used_elsewhere


# --------------------------------------------------------------------------- what is refused


def _value(expression: Any, parameters: Mapping[str, str]) -> Any:
    """A rule's expression as CloudFormation evaluates it (the functions Rules allow that this
    template uses; any other fails the test, so a new one is added here)."""
    if isinstance(expression, str):
        return expression
    ((function, args),) = expression.items()
    if function == "Ref":
        return parameters[args]
    if function == "Fn::Equals":
        left, right = (_value(a, parameters) for a in args)
        return str(left) == str(right)
    if function == "Fn::Not":
        return not _value(args[0], parameters)
    if function == "Fn::And":
        return all(_value(a, parameters) for a in args)
    if function == "Fn::Or":
        return any(_value(a, parameters) for a in args)
    if function == "Fn::Contains":
        items, item = args
        return _value(item, parameters) in [_value(i, parameters) for i in items]
    raise AssertionError(f"rule function {function} not understood here")


def _refused(translated: Mapping[str, Any], chosen: Mapping[str, str]) -> list[str]:
    """The rules whose assertions fail for these parameter values (over the defaults)."""
    parameters = {**_defaults(translated), **chosen}
    return [
        name
        for name, rule in translated.get("Rules", {}).items()
        if _value(rule.get("RuleCondition", True), parameters)
        and not all(_value(a["Assert"], parameters) for a in rule["Assertions"])
    ]


@pytest.mark.parametrize(
    ("chosen", "rule"),
    [
        pytest.param({"AuthMode": "Jwt"}, JWT_RULE, id="jwt-nothing"),
        pytest.param({"AuthMode": "Jwt", "JwtIssuer": "https://i.example.com"}, JWT_RULE, id="jwt-no-audience"),
        pytest.param({"AuthMode": "Jwt", "JwtAudience": "app"}, JWT_RULE, id="jwt-no-issuer"),
        pytest.param({"Tracing": "Otlp"}, "OtlpTracingNeedsAnEndpoint", id="otlp-nowhere"),
    ],
)
def test_a_combination_that_cannot_work_is_refused_by_a_rule(
    translated: dict[str, Any], chosen: dict[str, str], rule: str
) -> None:
    # The Rules survive SAM's translation: CloudFormation checks them before creating anything
    assert _refused(translated, chosen) == [rule]
    for assertion in translated["Rules"][rule]["Assertions"]:
        assert assertion["AssertDescription"]


@pytest.mark.parametrize(
    "chosen",
    [
        pytest.param({"AuthMode": "Jwt", "JwtIssuer": "https://i.example.com", "JwtAudience": "app"}, id="jwt"),
        pytest.param({"Tracing": "Otlp", "TracingEndpoint": "https://o.example.com/v1/traces"}, id="otlp-endpoint"),
        pytest.param({"Tracing": "Otlp", "TracingCollectorLayerArn": COLLECTOR}, id="otlp-collector"),
        pytest.param({"AuthMode": "Open", "Tracing": "CloudWatch"}, id="open-cloudwatch"),
        pytest.param({}, id="defaults"),
    ],
)
def test_a_combination_that_works_is_not_refused(translated: dict[str, Any], chosen: dict[str, str]) -> None:
    assert _refused(translated, chosen) == []


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        pytest.param("AlarmTopicArn", ["", TOPIC], ["my-topic", "arn:aws:sqs:us-east-1:123456789012:q"], id="topic"),
        pytest.param(
            "TracingCollectorLayerArn",
            ["", COLLECTOR],
            ["collector", "arn:aws:lambda:us-east-1:123456789012:function:f"],
            id="collector",
        ),
        pytest.param("JwtIssuer", ["", "https://i.example.com"], ["http://i.example.com"], id="issuer"),
        pytest.param("TracingEndpoint", ["", "https://o.example.com/v1/traces"], ["o.example.com"], id="endpoint"),
        pytest.param(
            "PublicUrl",
            ["", PUBLIC_URL, "https://agent.example.com", "https://agent.example.com:8443/"],
            ["agent.example.com", "http://agent.example.com", "https://agent.example.com/?x=1", "https://a b.example"],
            id="public-url",
        ),
    ],
)
def test_a_value_of_the_wrong_form_is_refused_by_its_parameter(
    translated: dict[str, Any], name: str, good: list[str], bad: list[str]
) -> None:
    parameter = translated["Parameters"][name]
    pattern = re.compile(parameter["AllowedPattern"])  # CloudFormation matches the whole value
    assert [v for v in good if not pattern.fullmatch(v)] == []
    assert [v for v in bad if pattern.fullmatch(v)] == []
    assert parameter["ConstraintDescription"]
