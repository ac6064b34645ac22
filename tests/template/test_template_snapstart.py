"""The SnapStart parameter, in the translated template: on, every function but the durable worker is
snapshotted, published and invoked through its alias, and a replaced version is deleted; off, no
function has a version or alias it did not have without the parameter."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from cloudformation import Deployed

from a2a_serverless_dev.resources import load_template

Translate = Callable[[dict[str, str]], dict[str, Any]]
JWT = {"AuthMode": "Jwt", "JwtIssuer": "https://issuer.example.com", "JwtAudience": "a2a-clients"}
DURABLE = "DurableWorkerFunction"


def _of_type(deployed: Deployed, kind: str) -> dict[str, Any]:
    return {k: v for k, v in deployed.resources.items() if v["Type"] == kind}


def _versions(translated: dict[str, Any]) -> dict[str, str]:
    """Each function's version resource (its logical ID), by function."""
    return {
        v["Properties"]["FunctionName"]["Ref"]: k
        for k, v in translated["Resources"].items()
        if v["Type"] == "AWS::Lambda::Version"
    }


@pytest.mark.parametrize(
    "mode", [pytest.param({}, id="queue"), pytest.param({"ExecutionMode": "Durable"}, id="durable")]
)
def test_off_no_function_has_a_version_or_snapshot_but_the_durable_workers_own(
    translate: Translate, mode: dict[str, str]
) -> None:
    deployed = Deployed(translate({**JWT, **mode}), **JWT, **mode)
    functions = _of_type(deployed, "AWS::Lambda::Function")
    assert all("SnapStart" not in f["Properties"] for f in functions.values())
    aliases = {v["Properties"]["FunctionName"]["Ref"] for v in _of_type(deployed, "AWS::Lambda::Alias").values()}
    assert aliases == ({DURABLE} if mode else set())


def test_on_every_function_but_the_durable_worker_is_snapshotted_and_keeps_one_version(translate: Translate) -> None:
    # Given SnapStart on (with the durable worker deployed too)
    chosen = {**JWT, "ExecutionMode": "Durable", "SnapStart": "true"}
    deployed = Deployed(translate(chosen), **chosen)
    functions = _of_type(deployed, "AWS::Lambda::Function")
    # Then each function but the durable worker has SnapStart on its published versions
    snapshotted = {
        k for k, v in functions.items() if v["Properties"].get("SnapStart") == {"ApplyOn": "PublishedVersions"}
    }
    assert snapshotted == set(functions) - {DURABLE}
    assert "SnapStart" not in functions[DURABLE]["Properties"]
    # and every function a version and the alias live; a replaced version is deleted (its snapshot
    # stops billing), but the durable worker's stay (an execution replays on its own version)
    versions = _of_type(deployed, "AWS::Lambda::Version")
    deletion = {v["Properties"]["FunctionName"]["Ref"]: v["DeletionPolicy"] for v in versions.values()}
    assert deletion == {name: "Retain" if name == DURABLE else "Delete" for name in functions}
    aliases = _of_type(deployed, "AWS::Lambda::Alias")
    assert {
        v["Properties"]["FunctionName"]["Ref"] for v in aliases.values() if v["Properties"]["Name"] == "live"
    } == set(functions)


def test_on_every_event_source_and_api_integration_invokes_the_alias(translate: Translate) -> None:
    chosen = {**JWT, "SnapStart": "true"}
    deployed = Deployed(translate(chosen), **chosen)
    alias_of = {v["Properties"]["FunctionName"]["Ref"]: k for k, v in _of_type(deployed, "AWS::Lambda::Alias").items()}
    aliases = set(alias_of.values())
    # Queues, the table's stream and the sweeper's schedule
    mappings = _of_type(deployed, "AWS::Lambda::EventSourceMapping").values()
    assert {m["Properties"]["FunctionName"]["Ref"] for m in mappings} <= aliases
    rules = _of_type(deployed, "AWS::Events::Rule").values()
    assert all(t["Arn"]["Ref"] in aliases for r in rules for t in r["Properties"]["Targets"])
    # API Gateway's permissions (the authorizer's included) and its integrations' URIs
    permissions = _of_type(deployed, "AWS::Lambda::Permission").values()
    assert {p["Properties"]["FunctionName"]["Ref"] for p in permissions} <= aliases
    assert alias_of["AuthorizerFunction"] in {p["Properties"]["FunctionName"]["Ref"] for p in permissions}
    body = json.dumps(deployed.resources["Api"]["Properties"]["Body"])
    invoked = set(re.findall(r"functions/\$\{(\w+)", body)) - {"__FunctionArn__"}
    assert invoked
    assert invoked <= aliases
    assert alias_of["AuthorizerFunction"] in body


def test_on_no_function_uses_what_snapstart_does_not_support(translate: Translate) -> None:
    # (https://docs.aws.amazon.com/lambda/latest/dg/snapstart.html: Python 3.12 and later; not with
    # provisioned concurrency, EFS, or ephemeral storage over 512 MB)
    chosen = {"SnapStart": "true"}
    deployed = Deployed(translate(chosen), **chosen)
    for name, function in _of_type(deployed, "AWS::Lambda::Function").items():
        props = function["Properties"]
        if "SnapStart" not in props:
            continue
        major, minor = re.fullmatch(r"python(\d+)\.(\d+)", props["Runtime"]).groups()  # type: ignore[union-attr]
        assert (int(major), int(minor)) >= (3, 12), name
        assert "FileSystemConfigs" not in props, name
        assert props.get("EphemeralStorage", {"Size": 512})["Size"] <= 512, name
    for alias in _of_type(deployed, "AWS::Lambda::Alias").values():
        assert "ProvisionedConcurrencyConfig" not in alias["Properties"]


def test_on_a_new_layer_publishes_a_new_version_of_every_function(translate: Translate) -> None:
    # Given the template as `sam package` makes it twice, the core layer's content changed between
    template = load_template()
    changed = copy.deepcopy(template)
    changed["Resources"]["CoreLayer"]["Properties"]["ContentUri"] = "shared-changed/"
    from testkit.sam_template import translate as translate_template

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        before = _versions(translate_template({"SnapStart": "true"}, template))
        after = _versions(translate_template({"SnapStart": "true"}, changed))
    # Then every function that runs on the layer gets a new version (its alias moves to it), so no
    # alias keeps serving the old layer
    assert set(before) == set(after)
    assert [name for name in before if before[name] == after[name]] == [DURABLE]
