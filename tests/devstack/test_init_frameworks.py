"""``a2a-serverless init DIR --framework NAME``: a project whose agent is built on that framework
through its adapter, whose kit requirement names the framework's extra (for the core layer and the
project's own venv), and whose own test passes without a model key.

The projects' own tests run in one pytest process for the five frameworks: each framework's import
costs seconds (up to tens under load), and one run pays pytest's start and the kit's import once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from a2a_serverless_dev import cli

ADAPTERS = {
    "pydantic-ai": "a2a_serverless.frameworks.pydantic_ai import pydantic_ai_executor",
    "langgraph": "a2a_serverless.frameworks.langgraph import langgraph_executor",
    "strands": "a2a_serverless.frameworks.strands import strands_executor",
    "openai-agents": "a2a_serverless.frameworks.openai_agents import openai_agents_executor",
    "google-adk": "a2a_serverless.frameworks.google_adk import adk_executor",
}


@pytest.mark.parametrize("framework", ADAPTERS)
def test_a_framework_project_wraps_its_agent_in_the_adapter_and_requires_the_extra(
    tmp_path: Path, framework: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "Trip Planner"

    assert cli.main(["init", str(root), "--framework", framework]) == 0

    assert "(trip_planner.agent:executor)" in capsys.readouterr().out
    assert f"from {ADAPTERS[framework]}" in (root / "src" / "trip_planner" / "agent.py").read_text()
    requirements = (root / "kit" / "requirements.txt").read_text()
    assert re.search(rf"^a2a-serverless\[{framework}\]==0\.1\.0\+kit\.[0-9a-f]{{12}}$", requirements, re.M)
    (dependency, _) = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    assert dependency.startswith(f"a2a-serverless[{framework},dev]==")
    assert 'ExecutorPath=\\"trip_planner.agent:executor\\"' in (root / "samconfig.toml").read_text()


def test_each_framework_projects_own_test_passes_without_a_model_key(tmp_path: Path) -> None:
    roots = [tmp_path / f"Trip Planner {framework}" for framework in ADAPTERS]  # a package per project
    for root, framework in zip(roots, ADAPTERS, strict=True):
        assert cli.main(["init", str(root), "--framework", framework]) == 0
    # Each project's pyproject.toml puts its src/ on the path; one run over five projects says so here.
    path = os.pathsep.join(str(root / "src") for root in roots)
    options = [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        "--import-mode=importlib",
        "--rootdir",
        str(tmp_path),
    ]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *options, *(str(root / "tests") for root in roots)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{3 * len(roots)} passed" in result.stdout


@pytest.mark.parametrize(("directory", "package"), [("agents", "agents_agent"), ("Strands", "strands_agent")])
def test_a_project_named_like_a_framework_gets_a_package_that_does_not_hide_it(
    tmp_path: Path, directory: str, package: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["init", str(tmp_path / directory), "--framework", "openai-agents"]) == 0

    assert f"({package}.agent:executor)" in capsys.readouterr().out
    assert (tmp_path / directory / "src" / package / "agent.py").is_file()


def test_an_unknown_framework_is_refused_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        cli.main(["init", str(tmp_path / "x"), "--framework", "crewai"])

    assert refused.value.code == 2
    assert "langgraph" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


WITHOUT = (
    "import sys; sys.modules[{module!r}] = None; "  # as if the framework's extra were not installed
    "sys.argv[0] = {program!r}; {main}"
)


def _without(module: str, program: str, main: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT.format(module=module, program=program, main=main), *args],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if not k.startswith("A2A_")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_without_its_frameworks_extra_pytest_and_dev_say_the_same_one_line(tmp_path: Path) -> None:
    # Given a pydantic-ai project in an environment without pydantic-ai
    root = tmp_path / "Trip Planner"
    assert cli.main(["init", str(root), "--framework", "pydantic-ai"]) == 0
    line = (
        "A2A_EXECUTOR 'trip_planner.agent:executor' needs pydantic_ai, which is not installed: "
        "pip install 'a2a-serverless[pydantic-ai]'"
    )

    # When its own tests run
    tests = _without(
        "pydantic_ai",
        "pytest",
        "import pytest; raise SystemExit(pytest.main(sys.argv[1:]))",
        ["-q", "-p", "no:cacheprovider"],
        root,
    )

    # Then pytest stops before any test with that one line, as `a2a-serverless dev` does
    assert tests.returncode == 4, tests.stdout + tests.stderr
    assert tests.stderr.strip() == f"ERROR: {line}"
    assert "Traceback" not in tests.stdout + tests.stderr
    dev = _without(
        "pydantic_ai",
        "a2a-serverless",
        "from a2a_serverless_dev.cli import main; raise SystemExit(main(sys.argv[1:]))",
        ["dev", "--port", "0"],
        root,
    )
    assert dev.returncode == 2, dev.stdout + dev.stderr
    assert dev.stderr.strip().splitlines()[-1] == f"a2a-serverless dev: error: {line}"
