"""The package as a user gets it: an sdist and a wheel built from this checkout, installed into a
fresh virtual environment (its dependencies from the package index).

It installs two import packages and nothing else: the runtime, ``a2a_serverless`` (the Lambda entry
points included), and the developer kit, ``a2a_serverless_dev`` (the local stack, ``init``, the
``a2a-serverless`` command); the base install is what Lambda needs (uvicorn for the gateway, no moto);
``dev`` on it says in one line which extra it needs; ``init`` works on it."""

from __future__ import annotations

import email
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _build(source: Path, out: Path, kind: str) -> Path:
    code = f"from setuptools import build_meta; print(build_meta.build_{kind}({str(out)!r}))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=source, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out / result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the sdist (so both are proven), as pip would."""
    out = tmp_path_factory.mktemp("dist")
    sdist = _build(REPO, out, "sdist")
    with tarfile.open(sdist) as archive:
        archive.extractall(out / "src", filter="data")
    (unpacked,) = (out / "src").iterdir()
    return _build(unpacked, out, "wheel")


def test_the_wheel_holds_every_module_of_the_source_tree(wheel: Path) -> None:
    # A package missing from pyproject.toml's list would install without it (and the Lambda layer,
    # built from the same package, with it missing at the first import on AWS).
    expected = {
        f"{package}/{p.relative_to(REPO / 'shared' / package).as_posix()}"
        for package in ("a2a_serverless", "a2a_serverless_dev")
        for p in (REPO / "shared" / package).rglob("*.py")
    }
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.endswith(".py")}
    assert expected - shipped == set()


def test_it_installs_the_runtime_and_the_developer_kit_only(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top = {name.split("/", 1)[0] for name in names}
        metadata = email.message_from_bytes(archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))))
        kit_template = archive.read("a2a_serverless_dev/kit/template.yaml")
        kit_run = archive.read("a2a_serverless_dev/kit/run.sh")
    assert top == {"a2a_serverless", "a2a_serverless_dev", "a2a_serverless-0.1.0.dist-info"}
    assert "a2a_serverless/functions/send_message.py" in names
    assert "a2a_serverless_dev/cli.py" in names
    assert "a2a_serverless_dev/console/static/index.html" in names
    # init's kit files are the checkout's template and gateway script, as files
    assert kit_template == (REPO / "template.yaml").read_bytes()
    assert kit_run == (REPO / "functions" / "run.sh").read_bytes()
    requires = metadata.get_all("Requires-Dist") or []
    base = {r.split(">")[0].split("[")[0].strip() for r in requires if "extra ==" not in r}
    dev = {r.split(">")[0].split("[")[0].strip() for r in requires if 'extra == "dev"' in r}
    assert "uvicorn" in base  # the gateway function runs it
    assert "moto" not in base
    assert {"moto", "pyyaml"} <= dev
    assert metadata.get("Name") == "a2a-serverless"


def test_the_base_install_works_and_dev_says_which_extra_it_needs(wheel: Path, tmp_path: Path) -> None:
    # Given: a fresh virtual environment with the wheel and its base dependencies only
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python, command = env_dir / "bin" / "python", env_dir / "bin" / "a2a-serverless"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]

    def run(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=120, check=False)

    # Then: the entry points and the app import; moto is not there
    imported = run(str(python), "-c", "import a2a_serverless.functions, a2a_serverless.transport.app, uvicorn")
    assert imported.returncode == 0, imported.stderr
    assert run(str(python), "-c", "import moto").returncode != 0
    # dev: one line naming the extra, exit 2, no traceback
    dev = run(str(command), "dev")
    assert dev.returncode == 2
    (line,) = dev.stderr.splitlines()
    assert re.fullmatch(
        r"a2a-serverless dev: error: needs the \[dev\] extra \((moto|yaml) is not installed\): "
        r"pip install 'a2a-serverless\[dev\]'",
        line,
    ), line
    # init works on the base install, and names this version of the kit (not a checkout)
    init = run(str(command), "init", "my-agent")
    assert init.returncode == 0, init.stderr
    requirement = (tmp_path / "my-agent" / "kit" / "requirements.txt").read_text().splitlines()[-1]
    assert (requirement.startswith("a2a-serverless") and "==0.1.0" in requirement) or "@ file://" in requirement
