"""``a2a-serverless init DIR``: an agent project outside this repository, whose test passes, whose
``a2a-serverless dev`` serves its own agent with its own card, and whose template deploys the kit's
handlers (from the core layer) with the project's code. (``make template`` also runs ``sam validate
--lint`` and ``sam build`` on a generated project.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from a2a_serverless.devstack import cli
from a2a_serverless.devstack.project import create_project, kit_requirement
from a2a_serverless.devstack.resources import load_template
from testkit.devstack import DevStack

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("projects") / "Weather Bot"
    assert cli.main(["init", str(root)]) == 0
    return root


def test_the_project_holds_the_users_code_and_settings(project: Path) -> None:
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert files == [
        ".gitignore",
        "README.md",
        "kit/requirements.txt",
        "pyproject.toml",
        "samconfig.toml",
        "src/agent.json",
        "src/run.sh",
        "src/weather_bot/__init__.py",
        "src/weather_bot/agent.py",
        "template.yaml",
        "tests/test_agent.py",
    ]
    # The kit, from this checkout (the installed kit is an editable install of it), never copied
    assert kit_requirement() == f"a2a-serverless @ file://{REPO}"
    assert (project / "kit" / "requirements.txt").read_text().splitlines()[-1] == kit_requirement()
    assert not list(project.rglob("a2a_serverless"))
    readme = (project / "README.md").read_text()
    commands = re.findall(r"^(\S.*?)\s+#", readme.split("```bash\n", 1)[1].split("```", 1)[0], flags=re.M)
    assert commands == ["a2a-serverless dev", "python -m pytest"]


def test_the_template_deploys_the_kits_handlers_with_the_projects_code(project: Path) -> None:
    template = load_template(project / "template.yaml")
    kit = load_template(REPO / "template.yaml")
    functions = {k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}
    assert set(functions) == {k for k, v in kit["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}
    for name, function in functions.items():
        props = function["Properties"]
        assert props["CodeUri"] == "src/", name
        assert props["Handler"] == kit["Resources"][name]["Properties"]["Handler"], name
    assert template["Resources"]["CoreLayer"]["Properties"]["ContentUri"] == "kit/"
    parameters = template["Parameters"]
    assert parameters["ExecutorPath"]["Default"] == "weather_bot.agent:Agent"
    assert parameters["AgentName"]["Default"] == "Weather Bot"
    assert parameters["AgentCardFile"]["Default"] == "/var/task/agent.json"
    # Everything else is the kit's, resource for resource
    assert set(template["Resources"]) == set(kit["Resources"])
    assert template["Outputs"] == kit["Outputs"]


def test_the_projects_own_test_passes(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_dev_in_the_project_serves_its_agent_with_its_card(project: Path) -> None:
    with _dev(project) as base:
        card = httpx.get(f"{base}/.well-known/agent-card.json", timeout=10).json()
        assert card["name"] == "Weather Bot"
        assert [skill["id"] for skill in card["skills"]] == ["reply"]
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "sunny?"}]}
        response = httpx.post(
            f"{base}/message:send", json={"message": message}, headers={"A2A-Version": "1.0"}, timeout=30
        )
        task = response.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert task["artifacts"][0]["parts"][0]["text"] == "Weather Bot heard: sunny?"


def test_init_refuses_a_directory_that_is_not_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    assert cli.main(["init", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"a2a-serverless init: error: {tmp_path} exists and is not an empty directory"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_odd_names_make_valid_packages_and_stacks(tmp_path: Path) -> None:
    created = create_project(tmp_path / "x", name='3 "quoted" {agent}')
    assert created.package == "agent_3_quoted_agent"
    compile((created.root / "src" / created.package / "agent.py").read_text(), "agent.py", "exec")
    assert 'stack_name = "a2a-3-quoted-agent"' in (created.root / "samconfig.toml").read_text()
    assert load_template(created.root / "template.yaml")["Parameters"]["AgentName"]["Default"] == '3 "quoted" {agent}'


@contextmanager
def _dev(cwd: Path) -> Iterator[str]:
    """``a2a-serverless dev`` run in ``cwd`` (no A2A_ or AWS_ settings from this process); its base URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "AWS_"))}
    stack = DevStack.start(cwd=cwd, env=env)
    try:
        yield stack.base
    finally:
        stack.stop()


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


@pytest.mark.parametrize("shim", [True, False], ids=["pyenv-shim-for-3.11", "no-python3.13"])
def test_build_puts_a_real_python_3_13_first_for_sam(tmp_path: Path, shim: bool) -> None:
    # Given: a fake sam that reports the python3.13 it would use, a PATH whose python3.13 is a pyenv
    # shim that runs 3.11 (or none at all), and pyenv's own 3.13 install
    bin_dir, shims = tmp_path / "bin", tmp_path / "pyenv" / "shims"
    _script(bin_dir / "sam", 'echo "sam $* with $(command -v python3.13)"')
    if shim:
        _script(shims / "python3.13", f'exec {sys.executable} "$@"')  # this venv's Python: 3.11
    real = tmp_path / "pyenv" / "versions" / "3.13.0" / "bin" / "python3.13"
    _script(real, "echo True")  # answers the version probe as a 3.13 would
    path = os.pathsep.join([str(shims), str(bin_dir), "/usr/bin", "/bin"])
    env = {"PATH": path, "PYENV_ROOT": str(tmp_path / "pyenv")}

    # When
    result = subprocess.run(
        [sys.executable, "-m", "a2a_serverless.devstack", "build", "--use-container-no"],
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    # Then: sam ran, its arguments passed on, with pyenv's 3.13 first on PATH, and the user was told
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"sam build --use-container-no with {real}"
    assert f"using {real.parent}/python3.13" in result.stderr


def test_build_without_any_python_3_13_says_what_to_do(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _script(bin_dir / "sam", "echo ran")
    env = {"PATH": os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]), "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "a2a_serverless.devstack", "build"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("a2a-serverless build: error: sam build needs Python 3.13")
    assert "pyenv install 3.13" in line
