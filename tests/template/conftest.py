"""template.yaml as CloudFormation receives it: through the SAM translator, offline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from testkit.sam_template import translate as translate_template


def _translate(parameters: dict[str, str]) -> dict[str, Any]:
    """The template through SAM with these parameter values (as CloudFormation passes them)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        return translate_template(parameters)


@pytest.fixture(scope="session")
def translate() -> Callable[[dict[str, str]], dict[str, Any]]:
    return _translate


@pytest.fixture(scope="session")
def translated() -> dict[str, Any]:
    return _translate({})
