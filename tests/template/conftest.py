"""template.yaml as CloudFormation receives it: through the SAM translator, offline."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from samtranslator.translator.transform import transform

from a2a_devstack.resources import load_template


class _NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}


@pytest.fixture(scope="session")
def translated() -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        template = copy.deepcopy(load_template())
        for resource in template["Resources"].values():
            props = resource.get("Properties", {})
            for key in ("CodeUri", "ContentUri"):  # what `sam package` does: local paths -> S3
                if isinstance(props.get(key), str):
                    props[key] = "s3://bucket/" + props[key].strip("/")
        result: dict[str, Any] = transform(template, {}, _NoManagedPolicies())
        return result
