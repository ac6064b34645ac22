"""``a2a-serverless init DIR --framework NAME``: a project whose agent is built on that framework
through its adapter, whose kit requirement names the framework's extra (for the core layer and the
project's own venv), and whose own test passes without a model key."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from a2a_serverless.devstack import cli

FRAMEWORKS = [
    pytest.param("pydantic-ai", "a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor", id="pydantic-ai"),
    pytest.param("langgraph", "a2a_serverless.frameworks.langgraph import langgraph_executor", id="langgraph"),
]


@pytest.mark.parametrize(("framework", "adapter"), FRAMEWORKS)
def test_a_framework_project_wraps_its_agent_in_the_adapter_and_its_own_test_passes(
    tmp_path: Path, framework: str, adapter: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "Trip Planner"

    assert cli.main(["init", str(root), "--framework", framework]) == 0

    assert "(trip_planner.agent:executor)" in capsys.readouterr().out
    assert f"from {adapter}" in (root / "src" / "trip_planner" / "agent.py").read_text()
    requirements = (root / "kit" / "requirements.txt").read_text()
    assert re.search(rf"^a2a-serverless\[{framework}\]==0\.1\.0\+kit\.[0-9a-f]{{12}}$", requirements, re.M)
    (dependency, _) = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    assert dependency.startswith(f"a2a-serverless[{framework},dev]==")
    assert 'ExecutorPath=\\"trip_planner.agent:executor\\"' in (root / "samconfig.toml").read_text()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_an_unknown_framework_is_refused_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        cli.main(["init", str(tmp_path / "x"), "--framework", "crewai"])

    assert refused.value.code == 2
    assert "langgraph" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
