"""The install profiles users run, each in a virtualenv made only as the docs make it (``make
profiles``; issue 39). CI's ``.venv`` holds every extra, so it cannot see what a user's install
lacks; each profile here installs what one documented path installs, and nothing else:

* ``dev``: ``make dev``'s ``.venv`` (``python -m venv``, then ``pip install --editable '.[dev]'``, as
  the Makefile does), and the README's commands (``tests/docs/test_readme_commands.py``, run by
  this checkout's pytest) against a stack started from it (``DOCS_TEST_VENV``);
* ``init``: a project of ``a2a-serverless init DIR`` in its own ``.venv`` made as its README says
  (``python3 -m venv .venv && .venv/bin/pip install --find-links kit -e .``), its test (``python -m
  pytest``) and one message through its local stack;
* ``frameworks``: the same for ``init --framework X``, each of the five, and its test;
* ``base``: ``pip install .`` (what the Lambda layer holds) into a Python 3.13 virtualenv, where
  every function's handler imports and answers one recorded event (``base_handlers.py``) against
  a moto server run from ``.venv``.

The virtualenvs live in ``.venv-profiles/``. One is reused only while what it was installed from is
unchanged (a stamp file names the checksum of ``pyproject.toml``, the generated project's
``pyproject.toml`` without the kit's content label, and the interpreter); an init project's is given
the new kit as its README says (``pip install --find-links kit -e .`` again). Prints one line per
profile as it ends; a failure prints its command and that command's output, once. ``--jobs N`` runs N
profiles at once (``make profiles`` runs two: most of a profile is ``pip install``, one core each).
"""

# The commands are the documented ones, with arguments built here (no shell, no user input); the
# AWS credentials are moto's placeholders.
# ruff: noqa: S603, S106

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / ".venv-profiles"
VENV_BIN = REPO / ".venv" / "bin"
FRAMEWORKS = ("pydantic-ai", "langgraph", "strands", "openai-agents", "google-adk")
KIT_LABEL = re.compile(r"\+kit\.[0-9a-f]+")
MAKE_VENV = re.compile(r"^python3 -m venv \.venv && (\.venv/bin/pip install [^\n#]+?)\s*$", re.MULTILINE)
"""How the generated README makes the project's ``.venv``: the install is taken from it, as written."""
READY = re.compile(r"A2A agent card: (http://127\.0\.0\.1:\d+)/\.well-known/agent-card\.json")
INSTALL_TIMEOUT = 1200.0
RUN_TIMEOUT = 900.0
STACK_START_TIMEOUT = 120.0


class Failed(Exception):
    def __init__(self, command: Sequence[object], output: str, why: str) -> None:
        super().__init__(why)
        self.command = " ".join(str(part) for part in command)
        self.output = output


def environment(venv: Path | None = None, **extra: str) -> dict[str, str]:
    """The user's shell: none of this run's pytest, virtualenv or A2A_* settings; with ``venv``, as
    ``source venv/bin/activate`` leaves it."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("A2A_", "PYTEST_", "PIP_", "DOCS_TEST_")) and key not in {"VIRTUAL_ENV", "PYTHONPATH"}
    }
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def sh(command: Sequence[object], cwd: Path, env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT) -> str:
    """Run ``command``; its output (stdout and stderr), or :class:`Failed` with it."""
    try:
        done = subprocess.run(
            [str(part) for part in command],
            cwd=cwd,
            env=env if env is not None else environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        output = exc.output.decode(errors="replace") if isinstance(exc.output, bytes) else exc.output or ""
        raise Failed(command, output, f"did not end within {timeout:.0f} s") from None
    if done.returncode != 0:
        raise Failed(command, done.stdout, f"exited with {done.returncode}")
    return done.stdout


def digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def python_version(python: str) -> str:
    return sh([python, "-c", "import sys; print(sys.version)"], REPO).strip()


def stamped(venv: Path, stamp: str) -> bool:
    return (venv / f".installed-{stamp}").is_file()


def stamp(venv: Path, value: str) -> None:
    for old in venv.glob(".installed-*"):
        old.unlink()
    (venv / f".installed-{value}").touch()


def kit_venv(venv: Path, python: str) -> tuple[str, bool]:
    """``venv`` as it stands when its stamp says it was made from this pyproject.toml with this
    Python, else made anew (empty) with ``python``: the stamp to give it once installed, and
    whether it is new."""
    key = digest((REPO / "pyproject.toml").read_text(), python_version(python))
    if stamped(venv, key):
        return key, False
    shutil.rmtree(venv, ignore_errors=True)
    sh([python, "-m", "venv", venv], REPO)
    return key, True


# --- dev: make dev's .venv, and the README's commands against its stack ---------------------------


def profile_dev(python: str) -> str:
    venv = ROOT / "dev"
    key, new = kit_venv(venv, python)
    if new:
        # As the Makefile's `make dev` makes .venv (its DEV_STAMP rule).
        sh(
            [
                venv / "bin" / "python",
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--editable",
                ".[dev]",
            ],
            REPO,
            timeout=INSTALL_TIMEOUT,
        )
        stamp(venv, key)
    sh(
        [VENV_BIN / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/docs/test_readme_commands.py"],
        REPO,
        env={**environment(), "DOCS_TEST_VENV": str(venv)},
    )
    return "new venv" if new else "venv reused"


# --- init and init --framework X: a project's own .venv, its test, a message through its stack -----


@dataclass(frozen=True)
class Project:
    root: Path
    venv: Path
    note: str


def init_project(python: str, framework: str | None) -> Project:
    """A new project of ``a2a-serverless init`` in ``.venv-profiles/init[-X]/agent``, in the
    ``.venv`` its README makes (``python3 -m venv .venv && .venv/bin/pip install ...``, the install
    as written there); an earlier run's ``.venv`` is kept while the project declares the same
    dependencies, and gets the new kit as the README says (the same ``pip install`` again)."""
    home = ROOT / (f"init-{framework}" if framework else "init")
    fresh, root = home / "new" / "agent", home / "agent"
    shutil.rmtree(fresh.parent, ignore_errors=True)
    fresh.parent.mkdir(parents=True)
    sh([VENV_BIN / "a2a-serverless", "init", fresh, *(["--framework", framework] if framework else [])], REPO)
    readme = MAKE_VENV.search((fresh / "README.md").read_text())
    if readme is None:
        raise Failed(["grep", MAKE_VENV.pattern, fresh / "README.md"], "", "the project's README no longer says so")
    install = shlex.split(readme.group(1))  # e.g. .venv/bin/pip install --find-links kit -e .
    declared = KIT_LABEL.sub("", (fresh / "pyproject.toml").read_text())
    key = digest(declared, (REPO / "pyproject.toml").read_text(), python_version(python))
    venv = root / ".venv"
    reused = stamped(venv, key)
    if reused:
        for entry in root.iterdir():
            if entry.name == ".venv":
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        for entry in fresh.iterdir():
            entry.rename(root / entry.name)
    else:
        shutil.rmtree(root, ignore_errors=True)
        fresh.rename(root)
        sh([python, "-m", "venv", ".venv"], root)  # the README's `python3 -m venv .venv` (python3: --python)
    shutil.rmtree(fresh.parent)
    sh(install, root, timeout=INSTALL_TIMEOUT)
    stamp(venv, key)
    return Project(root, venv, "venv reused" if reused else "new venv")


def run_project_test(project: Project) -> None:
    sh(["python", "-m", "pytest"], project.root, env=environment(project.venv))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def local_stack(project: Project) -> Iterator[str]:
    """``a2a-serverless dev`` of the project's ``.venv``, in the project, on a free port of
    127.0.0.1; its base URL once it says it is ready. Stopped with Ctrl-C's signal, and it must
    exit 0."""
    command = [project.venv / "bin" / "a2a-serverless", "dev", "--host", "127.0.0.1", "--port", str(free_port())]
    process = subprocess.Popen(
        [str(part) for part in command],
        cwd=project.root,
        env=environment(project.venv, PYTHONUNBUFFERED="1"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    lines: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if READY.search(line):
                ready.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + STACK_START_TIMEOUT
        while not ready.wait(0.2):
            if process.poll() is not None or time.monotonic() > deadline:
                raise Failed(command, "".join(lines), "the stack was not ready")
        match = READY.search(next(line for line in lines if READY.search(line)))
        assert match is not None
        try:
            yield match.group(1)
        except Failed as failed:
            raise Failed(command, "".join(lines), f"{failed}: {failed.command}\n{failed.output}") from None
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        reader.join(5)
    if process.returncode != 0:
        raise Failed(command, "".join(lines), f"the stack exited with {process.returncode} on SIGINT")


def send_one_message(base_url: str) -> None:
    """SendMessage over JSON-RPC (blocking): the answer must be a COMPLETED task."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "profile-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}},
    }
    command = ["POST", f"{base_url}/", json.dumps(request)]
    post = urllib.request.Request(  # noqa: S310 (http://127.0.0.1 only)
        f"{base_url}/",
        data=json.dumps(request).encode(),
        headers={"A2A-Version": "1.0", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(post, timeout=60) as response:  # noqa: S310
            answer = json.loads(response.read())
    except OSError as exc:
        raise Failed(command, str(exc), "SendMessage failed") from None
    state = answer.get("result", {}).get("task", {}).get("status", {}).get("state")
    if state != "TASK_STATE_COMPLETED":
        raise Failed(command, json.dumps(answer, indent=2), f"SendMessage answered {state or 'no task'}")


def profile_init(python: str) -> str:
    project = init_project(python, None)
    run_project_test(project)
    with local_stack(project) as base_url:
        send_one_message(base_url)
    return project.note


def profile_framework(python: str, framework: str) -> str:
    project = init_project(python, framework)
    run_project_test(project)
    return project.note


# --- base: the layer's install, every handler answers one recorded event ---------------------------


@contextmanager
def moto_server() -> Iterator[str]:
    port = free_port()
    command = [VENV_BIN / "moto_server", "-H", "127.0.0.1", "-p", str(port)]
    process = subprocess.Popen(
        [str(part) for part in command],
        cwd=REPO,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise Failed(command, "", "moto_server did not start") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def profile_base(python: str) -> str:
    venv = ROOT / "base"
    key, new = kit_venv(venv, python)
    # `pip install .` again each run: the kit's code is copied, not linked (its dependencies stay).
    sh([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "."], REPO, timeout=INSTALL_TIMEOUT)
    stamp(venv, key)
    with moto_server() as endpoint:
        queues = create_resources(endpoint)
        env = environment(
            venv,
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_DEFAULT_REGION="us-east-1",
            POWERTOOLS_METRICS_NAMESPACE="A2AProfile",
            POWERTOOLS_SERVICE_NAME="a2a-serverless",
            A2A_AWS_ENDPOINT_URL=endpoint,
            A2A_STORE="dynamodb",
            A2A_TABLE_NAME=queues.pop("table"),
            A2A_QUEUE_URL=json.loads(queues["queues"])["WorkQueue"]["url"],
            A2A_PUSH_QUEUE_URL=json.loads(queues["queues"])["PushDeliveryQueue"]["url"],
            A2A_PUSH_DEAD_LETTER_QUEUE_URL=json.loads(queues["queues"])["PushDeadLetterQueue"]["url"],
            A2A_AUTH_MODE="apigateway",
            A2A_AUTHORIZER_MODE="none",
            A2A_ALLOW_PRIVATE_WEBHOOKS="true",
            A2A_PUBLIC_URL="https://abc123defg.execute-api.us-east-1.amazonaws.com/v1",
            PROFILE_QUEUES=queues["queues"],
        )
        scratch = ROOT / "base-run"
        scratch.mkdir(exist_ok=True)  # not the checkout: `import a2a_serverless` must be the installed kit
        sh([venv / "bin" / "python", REPO / "infra" / "profiles" / "base_handlers.py"], scratch, env=env)
    return "new venv" if new else "venv reused"


def no_python313() -> str:
    raise Failed(["python3.13"], "", "no Python 3.13 for the base profile (make's PY313, --python313)")


def create_resources(endpoint: str) -> dict[str, str]:
    """The template's table and queues in the moto server, as the local stack creates them."""
    import boto3

    from a2a_serverless_dev.resources import create_resources

    clients = {
        name: boto3.client(
            name,  # type: ignore[call-overload]
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        for name in ("dynamodb", "sqs")
    }
    made = create_resources(clients["dynamodb"], clients["sqs"], prefix="a2a-profile")
    queues = {name: {"url": url, "arn": made.queue_arns[name]} for name, url in made.queue_urls.items()}
    return {"table": made.tables["TasksTable"], "queues": json.dumps(queues)}


# --- the runner -------------------------------------------------------------------------------------


def profiles(names: Sequence[str], python: str, python313: str) -> list[tuple[str, Callable[[], str]]]:
    chosen: list[tuple[str, Callable[[], str]]] = []
    for name in names:
        if name == "dev":
            chosen.append(("dev ([dev] extra, README commands)", lambda: profile_dev(python)))
        elif name == "init":
            chosen.append(("init (its test, one message)", lambda: profile_init(python)))
        elif name == "frameworks":
            for framework in FRAMEWORKS:
                chosen.append((f"init --framework {framework}", lambda f=framework: profile_framework(python, f)))  # type: ignore[misc]
        elif name == "base" and not python313:
            chosen.append(("base", no_python313))
        elif name == "base":
            chosen.append((f"base (pip install ., {Path(python313).name})", lambda: profile_base(python313)))
    return chosen


def run_one(label: str, run: Callable[[], str], lock: threading.Lock) -> bool:
    """Run one profile and print its line (and, if it failed, its command's output) whole."""
    started = time.monotonic()
    try:
        note = run()
    except Failed as failure:
        with lock:
            print(f"profile {label}: FAILED in {time.monotonic() - started:.0f} s: {failure}: {failure.command}")
            print(failure.output.rstrip(), flush=True)
        return False
    with lock:
        print(f"profile {label}: ok in {time.monotonic() - started:.0f} s ({note})", flush=True)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("profiles", nargs="+", choices=["dev", "init", "frameworks", "base"])
    parser.add_argument("--python", default="python3", help="the interpreter venvs are made with (make's PYTHON)")
    parser.add_argument("--python313", default="python3.13", help="the base profile's (the functions' runtime)")
    parser.add_argument(
        "--jobs", type=int, default=1, help="profiles run at once (each has its own venv, directory and ports)"
    )
    args = parser.parse_args(argv)
    ROOT.mkdir(exist_ok=True)
    lock = threading.Lock()
    chosen = profiles(args.profiles, args.python, args.python313)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda profile: run_one(*profile, lock), chosen))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
