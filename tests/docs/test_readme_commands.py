"""Every command in the fenced ```bash blocks of README.md and docs/*.md runs as written.

Each block is split into commands the way bash reads them (a line ending in ``\\``, an open quote or
a trailing ``&&`` continues the command: ``bash -n`` says when a command is complete). A command is
run unless a rule of ``SKIPPED`` matches it, and every rule says why that command cannot run here
(it needs AWS, the network, or it is the long-running stack itself): a command added to the docs is
run until someone writes down why it cannot be.

How the commands are run:

* One local stack for all blocks (``python -m a2a_serverless_dev dev``, as ``make dev`` runs
  it; see ``tests/e2e/e2e_stack.py``), on a free port: ``127.0.0.1:8000`` in a command, the port
  the docs name, is rewritten to that port before it runs. Nothing else in a command is changed.
* The commands of a block run one after the other, each with ``bash`` (``set -o pipefail``), in a
  scratch copy of the checkout (symlinks to its top-level entries, ``.venv`` included) so that a
  path relative to it (``../weather-agent``) lands in a temporary directory; a ``cd`` carries over
  to the block's next command, as in the reader's shell. ``PATH`` starts with this checkout's
  ``.venv/bin`` (the README says so where it matters).
* With ``DOCS_TEST_VENV`` set (``infra/profiles`` sets it to a virtualenv made as
  ``make dev`` makes it), that virtualenv is the reader's ``.venv``: the stack is its
  ``a2a-serverless dev``, the scratch checkout's ``.venv`` is it and ``PATH`` starts with its ``bin``.
  A documented ``pip install`` is skipped as always, and so are the commands after it in its block,
  which need what it installs.
* ``TASK_ID`` is the id of the task named by the output of the block's latest earlier command that
  names one (the task it created, or the newest one it listed); ``Last-Event-ID: 3`` and the like run
  as written.
* Each command must exit 0 within its timeout (streams, ``curl -N``, end when their task does);
  every HTTP answer curl gets must be 2xx (a ``curl`` shell function adds ``--write-out`` to
  standard error, so what the docs show on standard output is untouched); no JSON document it
  prints (the whole output, or each ``data:`` line of a stream) may have a top-level ``"error"``.

Each block's assertion messages list which of its commands ran and which were skipped, and why.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from e2e_stack import running_stack

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
SHELL_LANGUAGES = {"bash", "sh", "shell"}
DOCUMENTED_HOST = "127.0.0.1:8000"
# Hang guards, not budgets (a documented stream ends with its task, in seconds on an idle machine).
COMMAND_TIMEOUT_SECONDS = 300.0
STREAM_TIMEOUT_SECONDS = 120.0
STATUS_MARK = "@@docs-test-http-status "
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<language>[\w+-]*)")
TASK_ID = re.compile(r"\bTASK_ID\b")
MESSAGE_ID = re.compile(r'"messageId"\s*:\s*"([^"]+)"')
OLD_MODULES = re.compile(r"\ba2a_devstack\b|(?<![\w./])functions/\w+\.py\b")


@dataclass(frozen=True)
class Skip:
    pattern: str
    """Searched (``re.search``, multiline) in the command as written."""
    reason: str


SKIPPED: tuple[Skip, ...] = (
    Skip(
        r"^make dev\b",
        "long-running: the local stack itself, until Ctrl-C (these commands run against a stack started "
        "as it starts it, python -m a2a_serverless_dev dev)",
    ),
    Skip(
        r"(^|\s)(\S*/)?a2a-serverless dev\b",
        "long-running: the local stack itself, until Ctrl-C (these commands run against one started the same way)",
    ),
    Skip(
        r"^make test\b",
        "runs everything CI runs (this test included): minutes, and installs the SAM CLI from PyPI",
    ),
    Skip(
        r"^make a2a03\b",
        "installs a2a-sdk 0.3.x from PyPI into .venv-a2a03 (network), then runs the interop matrix (~35 s, part of "
        "make test)",
    ),
    Skip(
        r"pytest tests/e2e/test_interop_matrix\.py",
        "the interop matrix: ~35 s and .venv-a2a03 (make a2a03, from PyPI); make test runs it",
    ),
    Skip(
        r"matrix_table\.py /tmp/matrix\.json",
        "reads /tmp/matrix.json, which the matrix run before it (skipped) writes",
    ),
    Skip(r"^sam build\b", "needs the AWS SAM CLI and a real Python 3.13 (make template runs it)"),
    Skip(
        r"^docker (network create|run -d)\b",
        "starts a Docker network or container that outlives the command: the sam local setup, which "
        "tests/lambda_runtime/test_sam_local.py runs (and takes down)",
    ),
    Skip(
        r"(^|\s)infra/lambda-image/sam-local\b",
        "runs the functions in Lambda containers: needs Docker and the image (tests/lambda_runtime; the doc's "
        "marked blocks run in tests/docs/test_lambda_runtime_doc.py)",
    ),
    Skip(
        r"\bdex-local-runner start-server\b",
        "the durable execution emulator beside sam local invoke: long-running, with Docker "
        "(tests/lambda_runtime/test_sam_local_invoke.py runs it)",
    ),
    Skip(
        r"^\.venv/bin/python -m pytest\b",
        "the init project's test in its own virtualenv, which the pip install before it (skipped) makes: "
        "make profile-init runs that block's install, test and stack as written",
    ),
    Skip(
        r"^gateway=\$\(docker network inspect\b|\btests/lambda_runtime/forwarder\.py\b",
        "the forwarder to the durable execution emulator, on Docker's bridge, long-running "
        "(tests/lambda_runtime/test_sam_local_invoke.py runs it)",
    ),
    Skip(
        r'--task-id "\$task"',
        "the task the doc's runs-in-ci blocks sent before it (tests/docs/test_lambda_runtime_doc.py runs those; "
        "tests/lambda_runtime/test_sam_local_invoke.py this one's invoke)",
    ),
    Skip(r"^aws apigateway\b", "changes an AWS account's settings: needs an account and credentials"),
    Skip(r"^sam deploy\b", "deploys to AWS: needs an account and credentials (--guided also asks questions)"),
    Skip(r"\bpip install\b", "installs from the network (PyPI)"),
    Skip(
        r"\bpush-redrive --stack\b",
        "reads a deployed stack's queues: needs AWS credentials (the local stack prints its own push-redrive line)",
    ),
)


# docs/lambda-runtime.md's blocks marked so run in order, with Docker, in a test of their own.
RUNS_IN_CI_MARK = "<!-- runs-in-ci"
RUN_BY_ITS_DOC_TEST = Skip(
    "",
    "a block marked runs-in-ci: tests/docs/test_lambda_runtime_doc.py runs it, in order with the doc's others, "
    "with Docker",
)


@dataclass(frozen=True)
class Command:
    text: str
    """As written: its lines joined with newlines."""
    line: int
    """Where it starts in its file (1-based)."""
    marked: bool = False
    """Its block is marked runs-in-ci (:data:`RUN_BY_ITS_DOC_TEST`)."""

    @property
    def summary(self) -> str:
        first, *rest = self.text.splitlines()
        return f"L{self.line}: {first}{' ...' if rest else ''}"

    def skip(self) -> Skip | None:
        if self.marked:
            return RUN_BY_ITS_DOC_TEST
        return next((rule for rule in SKIPPED if re.search(rule.pattern, self.text, re.MULTILINE)), None)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    """The opening fence's line."""
    commands: tuple[Command, ...]
    problems: tuple[str, ...]
    """Text that is not complete bash (an unclosed quote at the block's end, a syntax error)."""

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def _complete(text: str) -> bool:
    """bash would run ``text`` as it is (it does not wait for another line)."""
    if text.endswith("\\"):
        return False
    return subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True, check=False).returncode == 0


def _split(lines: list[tuple[int, str]]) -> tuple[tuple[Command, ...], tuple[str, ...]]:
    commands: list[Command] = []
    pending: list[str] = []
    start = 0
    for number, line in lines:
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            start = number
        pending.append(line)
        if _complete("\n".join(pending)):
            commands.append(Command("\n".join(pending), start))
            pending = []
    problems = (f"L{start}: not complete bash at the end of the block:\n" + "\n".join(pending),) if pending else ()
    return tuple(commands), problems


def shell_blocks(path: Path) -> list[Block]:
    blocks: list[Block] = []
    fence: re.Match[str] | None = None
    body: list[tuple[int, str]] = []
    marked = False
    previous = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if fence is None:
            fence = FENCE.match(line)
            body = []
            marked = fence is not None and previous.lstrip().startswith(RUNS_IN_CI_MARK)
            if line.strip():
                previous = line
            continue
        closing = line.strip()
        if closing.startswith(fence["fence"]) and not closing.strip(fence["fence"][0]):
            if fence["language"] in SHELL_LANGUAGES:
                opening = number - len(body) - 1
                commands, problems = _split(body)
                if marked:
                    commands = tuple(replace(command, marked=True) for command in commands)
                blocks.append(Block(path, opening, commands, problems))
            fence = None
            previous = line
            continue
        indent = len(fence["indent"])
        body.append((number, line[indent:] if line[:indent].isspace() else line))
    return blocks


BLOCKS = [block for path in DOCS for block in shell_blocks(path)]


def report(block: Block, ran: list[Command]) -> str:
    lines = [f"{block.name}: {len(ran)} ran, {sum(1 for c in block.commands if c.skip())} skipped"]
    for command in block.commands:
        rule = command.skip()
        if rule is not None:
            lines.append(f"  skipped {command.summary}\n          because: {rule.reason}")
        elif command in ran:
            lines.append(f"  ran     {command.summary}")
        else:
            lines.append(f"  not run {command.summary}")
    return "\n".join(lines)


def json_documents(output: str) -> list[Any]:
    """The whole output as JSON, or else each ``data:`` line of a stream that is JSON."""
    try:
        return [json.loads(output)]
    except ValueError:
        pass
    documents = []
    for line in output.splitlines():
        if line.startswith("data:"):
            try:
                documents.append(json.loads(line[len("data:") :]))
            except ValueError:
                continue
    return documents


def _task_ids(value: Any, found: list[str]) -> None:
    if isinstance(value, dict):
        if isinstance(value.get("id"), str) and "contextId" in value and "status" in value:
            found.append(value["id"])  # a Task (v1.0 or v0.3)
        if isinstance(value.get("taskId"), str):
            found.append(value["taskId"])  # an event or a message of a task
        for item in value.values():
            _task_ids(item, found)
    elif isinstance(value, list):
        for item in value:
            _task_ids(item, found)


def task_id_in(output: str) -> str | None:
    """The first task the output names: the task an answer or a stream is about, a list's newest."""
    found: list[str] = []
    for document in json_documents(output):
        _task_ids(document, found)
    return found[0] if found else None


@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    cwd: Path
    timed_out: bool

    def details(self) -> str:
        return (
            f"exit code: {'timed out' if self.timed_out else self.code}\n"
            f"----- stdout -----\n{self.stdout[-3000:]}\n----- stderr -----\n{self.stderr[-3000:]}"
        )


def run(script: str, cwd: Path, env: dict[str, str], timeout: float, pwd_file: Path) -> Outcome:
    prelude = (
        "set -o pipefail\n"
        "trap 'pwd > \"$DOCS_TEST_PWD\"' EXIT\n"
        f"curl() {{ command curl --write-out '%{{stderr}}\\n{STATUS_MARK}%{{http_code}}\\n' \"$@\"; }}\n"
    )
    process = subprocess.Popen(
        ["bash", "-c", prelude + script],
        cwd=cwd,
        env={**env, "DOCS_TEST_PWD": str(pwd_file)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=10)
    new_cwd = Path(pwd_file.read_text().strip()) if pwd_file.exists() and pwd_file.read_text().strip() else cwd
    pwd_file.unlink(missing_ok=True)
    return Outcome(process.returncode, stdout, stderr, new_cwd, timed_out)


def failures(command: Command, outcome: Outcome) -> list[str]:
    found = []
    if outcome.timed_out:
        found.append("did not end within its timeout")
    elif outcome.code != 0:
        found.append(f"exited with {outcome.code}")
    statuses = [
        line[len(STATUS_MARK) :].strip() for line in outcome.stderr.splitlines() if line.startswith(STATUS_MARK)
    ]
    if re.search(r"(^|[\s|;&(])curl\s", command.text) and not statuses:
        found.append("curl answered nothing")
    found.extend(f"HTTP status {status}" for status in statuses if not status.startswith("2"))
    for document in json_documents(outcome.stdout):
        if isinstance(document, dict) and "error" in document:
            found.append(f"its output is an error: {json.dumps(document['error'])[:500]}")
    return found


def profile_venv() -> Path | None:
    """The virtualenv ``DOCS_TEST_VENV`` names (absolute), or None: this checkout's ``.venv``."""
    named = os.environ.get("DOCS_TEST_VENV", "")
    if not named:
        return None
    venv = Path(named).resolve()
    if not (venv / "bin" / "a2a-serverless").is_file():
        pytest.fail(f"DOCS_TEST_VENV={named}: no bin/a2a-serverless there (is the kit installed in it?)")
    return venv


INSTALLS = r"\bpip install\b"
"""A command that installs into the reader's ``.venv``: with ``DOCS_TEST_VENV``, what follows it in
its block needs what it would have installed."""


@pytest.fixture(scope="module")
def stack_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_stack(tmp_path_factory.mktemp("docs-stack"), venv=profile_venv()) as (base_url, _):
        yield base_url


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch copy of the checkout: its top-level entries as symlinks, in a directory of its own."""
    root = tmp_path_factory.mktemp("docs-checkout") / "checkout"
    root.mkdir()
    venv = profile_venv()
    for entry in REPO.iterdir():
        if not entry.name.startswith(".git"):
            (root / entry.name).symlink_to(venv if venv is not None and entry.name == ".venv" else entry)
    return root


def command_env() -> dict[str, str]:
    # The runner's pytest and A2A_* settings are not the reader's.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "A2A_"))}
    venv = profile_venv()
    if venv is not None:  # the reader's .venv is that one; this checkout's is not theirs
        env.pop("DOCS_TEST_VENV", None)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env
    env["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.e2e
@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_documented_commands_run(block: Block, stack_url: str, checkout: Path, tmp_path: Path) -> None:
    assert not block.problems, "\n".join(block.problems)
    host = stack_url.removeprefix("http://")
    env = command_env()
    cwd = checkout
    ran: list[Command] = []
    task_id: str | None = None
    installed = False
    for command in block.commands:
        installed = installed or (profile_venv() is not None and re.search(INSTALLS, command.text) is not None)
        if command.skip() is not None or installed:
            continue
        script = command.text.replace(DOCUMENTED_HOST, host)
        if TASK_ID.search(script):
            assert task_id is not None, (
                f"{command.summary}: no earlier command of the block names a task for TASK_ID\n{report(block, ran)}"
            )
            script = TASK_ID.sub(task_id, script)
        streaming = re.search(r"\bcurl\b[^\n]*\s-N\b", command.text) is not None
        timeout = STREAM_TIMEOUT_SECONDS if streaming else COMMAND_TIMEOUT_SECONDS
        outcome = run(script, cwd, env, timeout, tmp_path / "pwd")
        ran.append(command)
        problems = failures(command, outcome)
        assert not problems, (
            f"{command.summary}: {'; '.join(problems)}\nran as:\n{script}\n{outcome.details()}\n\n{report(block, ran)}"
        )
        cwd = outcome.cwd
        task_id = task_id_in(outcome.stdout) or task_id
    print(report(block, ran))


def test_the_docs_have_shell_blocks() -> None:
    assert any(block.path.name == "README.md" for block in BLOCKS), "no ```bash block found in README.md"
    runnable = [command for block in BLOCKS for command in block.commands if command.skip() is None]
    assert len(runnable) >= 10, [command.summary for command in runnable]


def test_every_skip_rule_names_a_documented_command() -> None:
    """A rule no command matches any more is dropped, so it cannot hide a new command by accident."""
    commands = [command for block in BLOCKS for command in block.commands]
    unused = [rule.pattern for rule in SKIPPED if not any(command.skip() == rule for command in commands)]
    assert not unused, f"skip rules that match no documented command (remove them): {unused}"


def test_message_ids_are_unique_across_the_docs() -> None:
    """The reader runs them all against one stack, and a second message with the same ``messageId``
    is answered with the first one's task (idempotency): it would not do what its doc says."""
    seen: dict[str, str] = {}
    reused = []
    for block in BLOCKS:
        for command in block.commands:
            for message_id in MESSAGE_ID.findall(command.text):
                where = f"{block.path.relative_to(REPO)} {command.summary}"
                if message_id in seen:
                    reused.append(f"{message_id!r}: {seen[message_id]} and {where}")
                seen.setdefault(message_id, where)
    assert not reused, "\n".join(reused)


def test_no_old_module_names() -> None:
    """The entry points are ``a2a_serverless.functions.<name>`` and the local stack
    ``a2a_serverless_dev`` (no top-level ``functions/<name>.py`` or ``a2a_devstack`` any more)."""
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in DOCS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OLD_MODULES.search(line)
    ]
    assert not found, "\n".join(found)
