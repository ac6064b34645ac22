"""Running the real local stack (``python -m a2a_serverless_dev dev``) in a subprocess, for e2e tests.

Contract with the devstack CLI: when it is ready it prints exactly one line
``A2A agent card: http://127.0.0.1:<port>/.well-known/agent-card.json``; SIGINT (or SIGTERM) stops
it cleanly with exit code 0. The fixture waits for that line (draining both pipes on threads so
the child never blocks on a full pipe), yields the base URL, and on teardown sends SIGINT and
asserts a clean exit. Captured output is shown whenever something goes wrong.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "shared" / "a2a_serverless_dev" / "cli.py"
READY = re.compile(r"^A2A agent card: (http://127\.0\.0\.1:(\d+))/\.well-known/agent-card\.json$")
CLI_WAIT_SECONDS = 180.0
# Hang guards, not budgets: a busy 2-core machine (CI) starts the stack in far less, but slowly.
START_TIMEOUT_SECONDS = 300.0
STOP_TIMEOUT_SECONDS = 30.0


@dataclass
class StackProcess:
    process: subprocess.Popen[str]
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    ready_lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    def drain(self) -> None:
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        for stream, sink, watch in (
            (self.process.stdout, self.stdout, True),
            (self.process.stderr, self.stderr, False),
        ):
            thread = threading.Thread(target=self._pump, args=(stream, sink, watch), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _pump(self, stream: IO[str], sink: list[str], watch: bool) -> None:
        for line in stream:
            line = line.rstrip("\n")
            sink.append(line)
            if watch and READY.match(line):
                self.ready_lines.append(line)
                self.ready.set()

    def output(self) -> str:
        return (
            f"exit code: {self.process.poll()}\n"
            "----- stdout -----\n" + "\n".join(self.stdout[-200:]) + "\n"
            "----- stderr -----\n" + "\n".join(self.stderr[-200:])
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_cli() -> None:
    """The CLI may still be being written when the suite starts: wait for it to appear."""
    deadline = time.monotonic() + CLI_WAIT_SECONDS
    while not CLI.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{CLI} did not appear within {CLI_WAIT_SECONDS:.0f}s")
        time.sleep(1.0)


def _stop(stack: StackProcess) -> int:
    process = stack.process
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
            pytest.fail(f"the devstack did not stop within {STOP_TIMEOUT_SECONDS:.0f}s of SIGINT\n{stack.output()}")
    for thread in stack.threads:
        thread.join(5)
    return process.returncode


@contextlib.contextmanager
def running_stack(
    cwd: Path, settings: Mapping[str, str] | None = None, *, venv: Path | None = None
) -> Iterator[tuple[str, StackProcess]]:
    """Start ``a2a-serverless dev`` in ``cwd`` with ``settings`` (A2A_* variables) on top of its
    defaults; yield its base URL and process once ready; stop it and check it exited cleanly.
    ``venv``: the stack of that virtualenv (``<venv>/bin/a2a-serverless``, its ``bin`` first on
    ``PATH``), as a reader who installed it runs it; else this interpreter's."""
    _wait_for_cli()
    port = _free_port()
    # The shell's A2A_* settings would win over the stack's defaults: leave them out.
    env = {k: v for k, v in os.environ.items() if not k.startswith("A2A_")}
    env.update(settings or {})
    env["PYTHONUNBUFFERED"] = "1"
    if venv is None:
        command = [sys.executable, "-m", "a2a_serverless_dev"]
    else:
        env = {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "DOCS_TEST_"))}
        env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))
        command = [str(venv / "bin" / "a2a-serverless")]
    command += ["dev", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    stack = StackProcess(process)
    stack.drain()
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not stack.ready.wait(0.2):
            if process.poll() is not None:
                pytest.fail(f"the devstack exited before it was ready\n{stack.output()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the devstack was not ready within {START_TIMEOUT_SECONDS:.0f}s\n{stack.output()}")
        match = READY.match(stack.ready_lines[0])
        assert match is not None
        assert int(match.group(2)) == port, stack.output()
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        raise
    yield match.group(1), stack
    code = _stop(stack)
    assert len(stack.ready_lines) == 1, f"the ready line must be printed exactly once\n{stack.output()}"
    assert code == 0, f"the devstack did not exit cleanly\n{stack.output()}"
