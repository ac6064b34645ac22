"""``a2a-serverless init DIR``: an agent project outside this repository, whose test passes, whose
``a2a-serverless dev`` serves its own agent with its own card, whose template deploys the kit's
handlers (from the core layer) with the project's code, and which carries the kit as a wheel, so it
works moved or cloned (``init --upgrade-kit`` replaces it). (``make template`` also runs ``sam validate
--lint`` and ``sam build`` on a generated project.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from a2a_serverless_dev import cli
from a2a_serverless_dev.project import create_project
from a2a_serverless_dev.resources import load_template
from testkit.devstack import DevStack

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("projects") / "Weather Bot"
    assert cli.main(["init", str(root)]) == 0
    return root


def test_the_project_holds_the_users_code_and_settings_and_the_kit_as_a_wheel(project: Path) -> None:
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    (wheel,) = (project / "kit").glob("*.whl")
    assert files == [
        ".gitignore",
        "README.md",
        f"kit/{wheel.name}",
        "kit/layer/arm64/Makefile",
        "kit/layer/build.py",
        "kit/layer/layer.mk",
        "kit/layer/x86_64/Makefile",
        "kit/requirements.txt",
        "pyproject.toml",
        "samconfig.toml",
        "src/agent.json",
        "src/run.sh",
        "src/weather_bot/__init__.py",
        "src/weather_bot/agent.py",
        "template.yaml",
        "tests/conftest.py",
        "tests/test_agent.py",
    ]
    # The kit: its wheel, pinned by its version (the kit's, labelled with its content), from the
    # directory of the requirements file; the same pin (with the local stack) for the project's venv
    version = re.fullmatch(r"a2a_serverless-(0\.1\.0\+kit\.[0-9a-f]{12})-py3-none-any\.whl", wheel.name)
    assert version is not None, wheel.name
    requirements = [
        line for line in (project / "kit" / "requirements.txt").read_text().splitlines() if not line.startswith("#")
    ]
    assert requirements == ["--find-links .", f"a2a-serverless=={version[1]}"]
    dependencies = tomllib.loads((project / "pyproject.toml").read_text())["project"]["dependencies"]
    assert dependencies == [f"a2a-serverless[dev]=={version[1]}", "pytest>=8"]
    # No path of this machine in the project: it works moved, or cloned
    for path in project.rglob("*"):
        if path.is_file() and path.suffix != ".whl":
            assert str(REPO) not in path.read_text(), path
    readme = (project / "README.md").read_text()
    commands = re.findall(r"^(\S.*?)\s+#", readme.split("```bash\n", 1)[1].split("```", 1)[0], flags=re.M)
    assert commands == ["a2a-serverless dev", "python -m pytest"]
    # Its links lead somewhere (no placeholder)
    assert re.findall(r"\]\(([^)]*)\)", readme) == []
    assert "https://" not in readme


def test_the_kits_wheel_resolves_from_the_requirements_file_wherever_the_project_is(
    project: Path, tmp_path: Path
) -> None:
    # Given: the project moved (a clone elsewhere), and pip run from another directory, as sam build runs
    # it (the build's working directory, the requirements file by its path)
    moved = tmp_path / "elsewhere" / "clone"
    shutil.copytree(project, moved)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()

    # When: the layer's requirements are installed (no index: the kit must come from the project)
    target, requirements = tmp_path / "layer", moved / "kit" / "requirements.txt"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(target)]
    result = subprocess.run(
        [*pip, "--requirement", str(requirements)],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    # Then: pip took the wheel beside the file, and it holds both packages whole (the runtime and the
    # developer kit), as a built wheel would
    assert result.returncode == 0, result.stderr
    for package in ("a2a_serverless", "a2a_serverless_dev"):
        source = REPO / "shared" / package
        expected = {p.relative_to(source).as_posix() for p in source.rglob("*.py")}
        installed = {p.relative_to(target / package).as_posix() for p in (target / package).rglob("*.py")}
        assert installed == expected, package
    kit = target / "a2a_serverless_dev" / "kit"
    assert (kit / "template.yaml").read_bytes() == (REPO / "template.yaml").read_bytes()
    assert (kit / "run.sh").read_bytes() == (REPO / "functions" / "run.sh").read_bytes()
    (dist_info,) = target.glob("a2a_serverless-*.dist-info")
    assert "a2a-serverless = a2a_serverless_dev.cli:main" in (dist_info / "entry_points.txt").read_text()


def test_the_kit_packed_from_an_install_of_its_wheel_is_the_same_wheel(project: Path, tmp_path: Path) -> None:
    # Given: a venv with the project's kit installed from its wheel (as a team member's project venv has it)
    (wheel,) = (project / "kit").glob("*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)]
    assert subprocess.run(install, capture_output=True, timeout=120, check=False).returncode == 0

    # When: that install packs the kit for a new project
    out = tmp_path / "out"
    code = (
        "from pathlib import Path; from a2a_serverless_dev._kit_wheel import pack_kit_wheel; "
        f"print(pack_kit_wheel(Path({str(out)!r})).path)"
    )
    result = subprocess.run([str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)

    # Then: the same kit, byte for byte (a new project of that team gets the kit the first one has)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).read_bytes() == wheel.read_bytes()


def test_upgrade_kit_gives_a_project_this_kit_and_keeps_the_users_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given: a project made with an index's kit, whose requirements the user extended, and an old wheel
    created = create_project(tmp_path / "agent", kit="a2a-serverless==0.0.9")
    requirements, pyproject = created.root / "kit" / "requirements.txt", created.root / "pyproject.toml"
    assert not list((created.root / "kit").glob("*.whl"))
    requirements.write_text(
        requirements.read_text().replace("a2a-serverless==0.0.9", "a2a-serverless[a2a-sdk]==0.0.9") + "requests\n"
    )
    stale = created.root / "kit" / "a2a_serverless-0.0.9+kit.000000000000-py3-none-any.whl"
    stale.write_bytes(b"old")

    # When
    assert cli.main(["init", "--upgrade-kit", str(created.root)]) == 0

    # Then: this kit's wheel replaces the old one, and both pins name it; the rest is as it was
    (wheel,) = (created.root / "kit").glob("*.whl")
    version = wheel.name.split("-")[1]
    assert capsys.readouterr().out == f"{wheel}: the kit {version}, pinned in kit/requirements.txt and pyproject.toml\n"
    lines = [line for line in requirements.read_text().splitlines() if not line.startswith("#")]
    assert lines == ["--find-links .", f"a2a-serverless[a2a-sdk]=={version}", "requests"]
    project = tomllib.loads(pyproject.read_text())["project"]
    assert project["dependencies"] == [f"a2a-serverless[dev]=={version}", "pytest>=8"]
    assert project["name"] == "agent"

    # And again: an unchanged kit changes nothing
    before = {p: p.read_bytes() for p in created.root.rglob("*") if p.is_file()}
    assert cli.main(["init", "--upgrade-kit", str(created.root)]) == 0
    assert {p: p.read_bytes() for p in created.root.rglob("*") if p.is_file()} == before


def test_upgrade_kit_refuses_a_directory_that_is_not_a_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["init", "--upgrade-kit", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"a2a-serverless init: error: {tmp_path} is not an agent project (it has no kit/requirements.txt or "
        "pyproject.toml)"
    )
    assert list(tmp_path.iterdir()) == []


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
    assert "3 passed" in result.stdout


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
        [sys.executable, "-m", "a2a_serverless_dev", "build", "--use-container-no"],
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
        [sys.executable, "-m", "a2a_serverless_dev", "build"],
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
