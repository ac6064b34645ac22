"""What the security scan (``make checkov``, mk/checkov.mk) relies on, and what it made the template
do: each check the template does not pass is waived on its resource with a one-line reason; every
function logs to a group of its own with a retention; the API's access logs are one parameter away.
checkov itself runs in its own virtualenv, on the translations tests/template/modes.py writes."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from cloudformation import Deployed
from modes import SCANNED, deployable, for_checkov

from a2a_serverless_dev.resources import load_template


def _waivers(resource: dict[str, Any]) -> list[dict[str, str]]:
    skips: list[dict[str, str]] = resource.get("Metadata", {}).get("checkov", {}).get("skip", [])
    return skips


def test_every_waiver_names_a_check_and_says_why_in_one_line() -> None:
    waived = {name: _waivers(r) for name, r in load_template()["Resources"].items() if _waivers(r)}
    assert waived
    for name, skips in waived.items():
        ids = [s["id"] for s in skips]
        assert len(ids) == len(set(ids)), name
        for skip in skips:
            assert re.fullmatch(r"CKV2?_AWS_\d+", skip["id"]), (name, skip)
            reason = skip.get("comment", "")
            assert 20 <= len(reason) <= 140, (name, skip)
            assert "\n" not in reason, (name, skip)


def test_the_scanned_translation_has_the_modes_defaults_and_the_apis_waivers_on_its_stage(
    translate: Callable[[dict[str, str]], dict[str, Any]],
) -> None:
    # Given a scanned mode's translation, as the scan's files are written
    parameters = deployable(SCANNED["jwt-durable-all"])
    scanned = for_checkov(translate(parameters), parameters)

    # Then checkov (which decides Conditions from the defaults) sees the mode's resources
    assert all(scanned["Parameters"][k]["Default"] == v for k, v in parameters.items())
    # and the API's waivers are on the stage SAM made of it
    resources = scanned["Resources"]
    (stage,) = [r for r in resources.values() if r["Type"] == "AWS::ApiGateway::Stage"]
    assert _waivers(stage) == _waivers(resources["Api"])
    assert {s["id"] for s in _waivers(stage)} == {"CKV_AWS_76", "CKV_AWS_120"}


@pytest.mark.parametrize("mode", ["Queue", "Durable"])
def test_every_function_logs_to_its_own_group_with_a_retention(
    translate: Callable[[dict[str, str]], dict[str, Any]], mode: str
) -> None:
    deployed = Deployed(translate({"ExecutionMode": mode}), ExecutionMode=mode)
    groups = []
    for function in deployed.functions():
        config = deployed.resources[function]["Properties"]["LoggingConfig"]
        assert config["LogFormat"] == "JSON", function
        (group,) = config["LogGroup"].values()
        assert deployed.resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        groups.append(group)
    assert len(set(groups)) == len(groups) == len(deployed.functions())
    assert ("DurableWorkerLogs" in groups) == (mode == "Durable")


@pytest.mark.parametrize("on", ["true", "false"])
def test_access_logs_are_written_to_a_group_with_a_retention_when_turned_on(
    translate: Callable[[dict[str, str]], dict[str, Any]], on: str
) -> None:
    deployed = Deployed(translate({"ApiAccessLogs": on}), ApiAccessLogs=on)
    (stage,) = [r["Properties"] for r in deployed.resources.values() if r["Type"] == "AWS::ApiGateway::Stage"]
    if on == "false":
        # (they need the Region's API Gateway CloudWatch Logs role, which a fresh account lacks)
        assert "AccessLogSetting" not in stage
        assert "ApiAccessLogGroup" not in deployed.resources
        return
    assert stage["AccessLogSetting"]["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogGroup", "Arn"]}
    fields = re.findall(r'"(\w+)":"\$context\.([\w.]+)"', stage["AccessLogSetting"]["Format"])
    assert {"requestId", "status", "route", "principal"} <= {name for name, _ in fields}
    group = deployed.resources["ApiAccessLogGroup"]["Properties"]
    assert group["RetentionInDays"] == {"Ref": "LogRetentionDays"}
