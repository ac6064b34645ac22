"""cfn-lint on template.yaml (it applies the SAM transform itself, offline): nothing above
informational, in every region the template is meant for."""

from __future__ import annotations

from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "ap-southeast-2"])
def test_cfn_lint_reports_nothing_above_informational(region: str) -> None:
    matches = lint_file(TEMPLATE, config=ManualArgs(regions=[region]))
    problems = [f"{m.rule.id} {m.message} (line {m.linenumber})" for m in matches if not m.rule.id.startswith("I")]
    assert problems == []
