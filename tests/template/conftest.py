"""template.yaml as CloudFormation receives it: through the SAM translator, offline."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from samtranslator.translator.transform import transform

from a2a_serverless.devstack.resources import load_template


class _NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}


def _translate(parameters: dict[str, str]) -> dict[str, Any]:
    """The template through SAM with these parameter values (as CloudFormation passes them)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        template = copy.deepcopy(load_template())
        for resource in template["Resources"].values():
            props = resource.get("Properties", {})
            for key in ("CodeUri", "ContentUri"):  # what `sam package` does: local paths -> S3
                if isinstance(props.get(key), str):
                    props[key] = "s3://bucket/" + props[key].strip("/")
        defaults = {k: str(v["Default"]) for k, v in template.get("Parameters", {}).items() if "Default" in v}
        result: dict[str, Any] = transform(template, {**defaults, **parameters}, _NoManagedPolicies())
        return result


@pytest.fixture(scope="session")
def translate() -> Callable[[dict[str, str]], dict[str, Any]]:
    return _translate


@pytest.fixture(scope="session")
def translated() -> dict[str, Any]:
    return _translate({})
