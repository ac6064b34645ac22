"""``a2a-serverless dev`` in a subprocess, as a user runs it, for the tests that need the real
command (its processes, its signals, its output): started with :func:`DevStack.start` (or
:func:`DevStack.running`, which stops it too), its output kept line by line (``lines``), its base URL
from the ready line, stopped with one SIGINT."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

__all__ = ["READY", "DevStack"]

READY = re.compile(r"^A2A agent card: (http://127\.0\.0\.1:\d+)/\.well-known/agent-card\.json$")
MOTO = re.compile(r"moto at (http://127\.0\.0\.1:\d+) ")


class DevStack:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.base = ""
        self._ready = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    @classmethod
    def start(
        cls, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, wait: float = 60
    ) -> DevStack:
        command: Sequence[str] = [sys.executable, "-m", "a2a_serverless_dev", "dev", "--port", "0", *args]
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        stack = cls(process)
        if not stack._ready.wait(wait):
            stack.kill()
            raise AssertionError("the stack did not start:\n" + "\n".join(stack.lines[-50:]))
        return stack

    @classmethod
    @contextlib.contextmanager
    def running(cls, cwd: Path, env: Mapping[str, str] | None = None, *, wait: float = 60) -> Iterator[DevStack]:
        """The stack started in ``cwd`` without this process's ``A2A_*`` settings (they would win
        over the stack's defaults), with ``env`` on top, ready within ``wait`` seconds (a hang
        guard); at the end it must stop cleanly (exit 0)."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith("A2A_")}
        stack = cls.start(cwd=cwd, env={**clean, **(env or {})}, wait=wait)
        try:
            yield stack
            assert stack.stop() == 0, "\n".join(stack.lines[-50:])
        finally:
            stack.kill()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            match = READY.match(self.lines[-1])
            if match and not self.base:
                self.base = match.group(1)
                self._ready.set()

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    @property
    def moto_port(self) -> int:
        return int(self.moto.rsplit(":", 1)[1])

    @property
    def moto(self) -> str:
        """moto's endpoint, as the stack says before its ready line."""
        found = [match.group(1) for line in self.lines if (match := MOTO.search(line))]
        assert found, "the stack did not say where moto is:\n" + "\n".join(self.lines[-50:])
        return found[0]

    def stop(self, timeout: float = 60) -> int:
        """One SIGINT (a Ctrl-C); the exit code (a hang guard, not a measured time)."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
