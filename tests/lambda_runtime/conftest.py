"""The functions in a real Lambda runtime: the Lambda Python 3.13 image under Docker (issue 29).

Session fixtures, for these tests and for the ``sam local`` tests to come: a Docker engine, the
image (``make docker``: infra/lambda-image, docs/lambda-runtime.md), a ``sam build`` of the
template for this machine's architecture, and containers of one built function served by the
image's Runtime Interface Emulator on a port published on 127.0.0.1 only.

Locally, a missing engine, image or SAM CLI skips these tests and says how to get it. In CI
(``CI=true``) it fails them: CI runs ``make docker`` first, so a missing piece there is a broken
setup, not a reason to run nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

import httpx
import pytest

from a2a_serverless_dev.build_check import runtime_python
from a2a_serverless_dev.resources import load_template

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
IMAGE = f"a2a-serverless/lambda-python:3.13-{ARCHITECTURE}"
"""The image `make docker` builds (infra/lambda-image); `sam local` runs it with ``--invoke-image``."""
SAM = ROOT / ".venv-sam" / "bin" / "sam"
INVOCATIONS = "/2015-03-31/functions/function/invocations"  # the emulator's invoke API
# Credentials and region a function's boto3 finds; nothing here reaches AWS.
AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def unavailable(reason: str) -> NoReturn:
    """Skip locally, fail in CI: there, `make docker` has set everything up."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (in CI, make docker must have provided it)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker() -> str:
    """The docker CLI, with an engine that answers."""
    cli = shutil.which("docker")
    if cli is None:
        unavailable("Docker is not installed: `make docker` installs Debian's docker.io and starts dockerd")
    probe = subprocess.run([cli, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no answer"])[-1]
        unavailable(f"no Docker engine answers ({why}): `make docker` starts dockerd")
    return cli


@pytest.fixture(scope="session")
def lambda_image(docker: str) -> str:
    """The kit's Lambda Python 3.13 image for this machine's architecture."""
    if subprocess.run([docker, "image", "inspect", IMAGE], capture_output=True).returncode != 0:
        unavailable(f"no {IMAGE} image: `make docker` builds it")
    return IMAGE


@dataclass(frozen=True)
class SamBuild:
    """A `sam build` output: its template, the built layer and each function's built code."""

    directory: Path

    @property
    def resources(self) -> dict[str, Any]:
        resources: dict[str, Any] = load_template(self.directory / "template.yaml")["Resources"]
        return resources

    def layer(self) -> Path:
        """The core layer (the tracing layer beside it is attached only with Tracing on)."""
        return self.directory / self.resources["CoreLayer"]["Properties"]["ContentUri"]

    def function(self, logical_id: str) -> tuple[str, Path]:
        """(handler, built code directory) of a function."""
        properties = self.resources[logical_id]["Properties"]
        return properties["Handler"], self.directory / properties["CodeUri"]


@pytest.fixture(scope="session")
def python313() -> Path:
    """The functions' Python (3.13) on this machine, for what is built for them: the one `sam
    build` runs (python3.13 on PATH if it is one, else pyenv's own install, never its shim)."""
    found = runtime_python()
    if found is None:
        unavailable("no Python 3.13: install it (pyenv) or put python3.13 on PATH")
    return found


@pytest.fixture(scope="session")
def sam_build(tmp_path_factory: pytest.TempPathFactory) -> SamBuild:
    """`sam build` of the repository's template for this machine's architecture, once a run (the
    pytest-xdist workers of a run share it). A2A_LAMBDA_BUILD_DIR names a build to use instead
    (one of this architecture)."""
    reuse = os.environ.get("A2A_LAMBDA_BUILD_DIR")
    if reuse:
        return SamBuild(Path(reuse).resolve())
    if not SAM.exists():
        unavailable("no SAM CLI in .venv-sam: `make docker` installs it")
    python313 = runtime_python()
    if python313 is None:
        unavailable("no Python 3.13 for sam build: install it (pyenv) or put python3.13 on PATH")
    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent  # the run's, above each worker's own
    build_dir = run_dir / "sam-build"
    with (run_dir / "sam-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker builds, the others wait for it
        if not (build_dir / "template.yaml").exists():
            _build(build_dir, python313)
    return SamBuild(build_dir)


def _build(build_dir: Path, python313: Path) -> None:
    command = [str(SAM), "build", "--region", "us-east-1", "--build-dir", str(build_dir)]
    command += ["--cache-dir", str(build_dir.with_name("sam-build-cache"))]
    command += ["--parameter-overrides", f"Architecture={ARCHITECTURE}"]
    env = {**os.environ, "PATH": f"{python313.parent}{os.pathsep}{os.environ['PATH']}", "SAM_CLI_TELEMETRY": "0"}
    build = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, f"sam build failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"


@dataclass(frozen=True)
class LambdaContainer:
    """One function in the image, its layer at /opt and its code at /var/task (both read-only, as
    on Lambda), served by the Runtime Interface Emulator. Warm after the first invocation."""

    docker: str
    id: str
    url: str

    def invoke(self, event: Mapping[str, Any], timeout: float = 60) -> Any:
        """Invoke the function with ``event``; its result, decoded."""
        return httpx.post(self.url, content=json.dumps(event), timeout=timeout).raise_for_status().json()

    def logs(self) -> str:
        run = subprocess.run([self.docker, "logs", self.id], capture_output=True, text=True, check=False)
        return run.stdout + run.stderr


class StartFunction(Protocol):
    def __call__(self, logical_id: str, env: Mapping[str, str] = ...) -> LambdaContainer: ...


def _serving(docker: str, container: str, address: str, deadline: float) -> None:
    """Wait until the emulator in ``container`` answers: its 404 for ``/`` (any method on the
    invoke path would invoke the function), a connection error while it starts."""
    while True:
        try:
            httpx.get(f"http://{address}/", timeout=2)
            return
        except httpx.TransportError as exc:
            if time.monotonic() > deadline:
                logs = subprocess.run([docker, "logs", container], capture_output=True, text=True).stderr
                raise AssertionError(f"the emulator in {container} never answered ({exc}):\n{logs}") from exc
            time.sleep(0.2)


@pytest.fixture(scope="session")
def start_function(docker: str, lambda_image: str, sam_build: SamBuild) -> Iterator[StartFunction]:
    """Start a built function in the image (once per logical id and environment in a session:
    later calls get the same, warm container); every container is removed at the session's end."""
    started: dict[tuple[str, tuple[tuple[str, str], ...]], LambdaContainer] = {}

    def start(logical_id: str, env: Mapping[str, str] = {}) -> LambdaContainer:
        key = (logical_id, tuple(sorted(env.items())))
        if key in started:
            return started[key]
        handler, code = sam_build.function(logical_id)
        command = [docker, "run", "--detach", "--rm", "--publish", "127.0.0.1::8080"]
        command += [f"--volume={sam_build.layer()}:/opt:ro", f"--volume={code}:/var/task:ro"]
        command += [f"--env={name}={value}" for name, value in {**AWS_ENV, **env}.items()]
        container = subprocess.run([*command, lambda_image, handler], capture_output=True, text=True, check=True)
        container_id = container.stdout.strip()
        port = subprocess.run([docker, "port", container_id, "8080/tcp"], capture_output=True, text=True, check=True)
        address = port.stdout.split()[0]  # 127.0.0.1:PORT
        started[key] = LambdaContainer(docker, container_id, f"http://{address}{INVOCATIONS}")
        _serving(docker, container_id, address, time.monotonic() + 30)
        return started[key]

    yield start
    for container in started.values():
        subprocess.run([docker, "rm", "--force", container.id], capture_output=True, check=False)
