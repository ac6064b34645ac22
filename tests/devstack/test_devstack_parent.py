"""The local stack stops with the ``make`` that started it (``make dev &`` then ``kill $!`` in a
script), and outlives a parent that is not make."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from a2a_serverless_dev._parent import stop_with_make
from testkit.waiting import wait_until

WAIT = 20.0
"""Hang guard (seconds); never a measured expectation."""

# Stands in for the stack: watches its parent as the dev command does, says when SIGTERM stopped it.
_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from a2a_serverless_dev._parent import stop_with_make

    out = sys.argv[1]
    def stopped(signum, frame):
        with open(out, "a") as f:
            f.write("stopped\\n")
        sys.exit(0)
    signal.signal(signal.SIGTERM, stopped)
    watching = stop_with_make(poll_seconds=0.05)
    with open(out, "a") as f:
        f.write(f"{os.getpid()} watching={watching}\\n")
    for _ in range(600):
        time.sleep(0.1)
    """
)


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command's name: its state, its parent's pid, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _alive(pid: int) -> bool:
    """Running: neither gone nor a zombie (exited, and not yet reaped by whoever adopted it)."""
    try:
        return _stat(pid)[0] != "Z"
    except FileNotFoundError:
        return False


def _start_child(tmp_path: Path, launcher: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], Path]:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    out = tmp_path / "child.out"
    parent = subprocess.Popen([*launcher, str(script), str(out)], env=env, cwd=tmp_path, start_new_session=True)
    wait_until(lambda: out.exists() and "watching=" in out.read_text(), "the child to start", within=WAIT)
    return parent, out


def _child_pid(out: Path) -> int:
    return int(out.read_text().split()[0])


def test_the_stack_stops_when_make_is_killed(tmp_path: Path) -> None:
    # Given the stack running under a real make, as `make dev &` runs it
    (tmp_path / "Makefile").write_text("dev:\n\t@" + sys.executable + " $(SCRIPT) $(OUT)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    script, out = tmp_path / "child.py", tmp_path / "child.out"
    script.write_text(_CHILD)
    make = subprocess.Popen(
        ["make", "--no-print-directory", "dev", f"SCRIPT={script}", f"OUT={out}"],
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: out.exists() and "watching=True" in out.read_text(), "the stack to start under make", within=WAIT
        )
        child = _child_pid(out)
        # When a script ends make with `kill` (SIGTERM)
        make.send_signal(signal.SIGTERM)
        make.wait(timeout=20)
        # Then the stack gets SIGTERM too, and exits
        wait_until(lambda: "stopped" in out.read_text(), "the stack to stop with make", within=WAIT)
        wait_until(lambda: not _alive(child), "the stack's process to exit", within=WAIT)
    finally:
        if make.poll() is None:
            make.kill()
        if out.exists() and _alive(_child_pid(out)):
            os.kill(_child_pid(out), signal.SIGKILL)


def test_a_stack_not_started_by_make_outlives_its_parent(tmp_path: Path) -> None:
    # Given the stack started by a shell (no MAKELEVEL), which then exits
    env = {k: v for k, v in os.environ.items() if k != "MAKELEVEL"}
    shell, out = _start_child(tmp_path, ["/bin/sh", "-c", f'{sys.executable} "$0" "$1" & wait'], env)
    child = _child_pid(out)
    try:
        assert "watching=False" in out.read_text()
        shell.kill()
        shell.wait(timeout=20)
        # Then nothing stops it: it is re-parented and keeps running (many polls of a watcher later)
        wait_until(lambda: _parent_of(child) != shell.pid, "the child to be re-parented", within=WAIT)
        time.sleep(0.5)
        assert _alive(child)
        assert "stopped" not in out.read_text()
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def _parent_of(pid: int) -> int:
    return int(_stat(pid)[1])


def test_only_make_children_watch() -> None:
    assert stop_with_make({}) is False
