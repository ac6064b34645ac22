"""``a2a-serverless dev`` in a subprocess, started as a user starts it, for the scripts that measure
the local stack from outside (``idle.py``, ``devloop.py``).

:class:`DevStack` runs the given command (the caller chooses it, its working directory and its
environment: a tree's own ``shared/`` first on ``PYTHONPATH``, say), reads its output line by line on
a thread (kept in ``lines``) and returns once the stack prints its ready line
(``A2A agent card: <base>/.well-known/agent-card.json``): ``base`` is that URL's origin,
``ready_seconds`` the time from the command's start. ``busy`` processes spin on the CPU while it
starts (:class:`Busy`: a loaded machine), stopped at the ready line. :meth:`DevStack.stop` sends
SIGTERM (the stack stops its children, then itself) and kills the whole process tree
(:func:`descendants`) if it has not ended within a minute.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

READY = re.compile(r"^A2A agent card: (http://127\.0\.0\.1:\d+)/\.well-known/agent-card\.json$")


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (children of children too)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


class Busy:
    """``count`` processes spinning on the CPU until stopped: a loaded machine."""

    def __init__(self, count: int) -> None:
        spin = [sys.executable, "-c", "while True: pass"]
        self.processes = [subprocess.Popen(spin) for _ in range(count)]

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


class DevStack:
    def __init__(
        self,
        command: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        ready_timeout: float = 180,
        busy: int = 0,
    ) -> None:
        load = Busy(busy)
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env
        )
        self.lines: list[str] = []
        ready = threading.Event()

        def pump() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.lines.append(line.rstrip("\n"))
                if READY.match(self.lines[-1]) and not ready.is_set():
                    self.ready_seconds = time.perf_counter() - self.started
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(ready_timeout)
        load.stop()
        if not ready.is_set():
            self.stop()
            raise RuntimeError("the stack did not start:\n" + "\n".join(self.lines[-40:]))
        self.base = next(m.group(1) for line in self.lines if (m := READY.match(line)))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # SIGTERM: the stack stops its children, then itself
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                for pid in descendants(self.process.pid):
                    os.kill(pid, 9)
                self.process.wait()
