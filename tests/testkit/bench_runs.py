"""One run of a bench script, shared by a test module's checks, whose failure is reported once.

A bench smoke test starts a script under ``bench/`` in a subprocess (it usually starts the local
stack itself) and then checks what it counted. Two rules keep that reliable on a busy machine:

* **No wall-clock budget.** The script runs as long as it needs; the only limit is a hang guard
  (:data:`HANG_GUARD_SECONDS`, far above any run seen under load) so that a script that never exits
  cannot hold the suite forever. Its expiry is reported as a hang, with the output so far.
* **One failure, one traceback.** A failed run fails the first check that asks for its result, with
  the script's output; every later check of the module is skipped with a pointer to that one,
  instead of repeating the same error once per check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["HANG_GUARD_SECONDS", "BenchRun", "run_bench"]

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_SECONDS = 1800
"""Not a budget: a run this long has hung (quick runs take well under a minute on an idle machine)."""


@dataclass
class BenchRun:
    script: str
    data: dict[str, Any] | None = None
    failure: str | None = None
    reported_by: str | None = None

    def result(self, request: pytest.FixtureRequest) -> dict[str, Any]:
        """The run's JSON; on a failed run, fail this check once, skip the others."""
        if self.failure is not None:
            if self.reported_by is not None:
                pytest.skip(f"bench/{self.script} failed: reported once, by {self.reported_by}")
            self.reported_by = request.node.nodeid
            pytest.fail(self.failure, pytrace=False)
        assert self.data is not None
        return self.data


def _tail(text: str | bytes | None, limit: int = 3000) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return (text or "")[-limit:]


def run_bench(script: str, args: list[str], out: Path, *, expect_in_stdout: str = "") -> BenchRun:
    """Run ``bench/<script> <args> --json <out>`` once and read its JSON."""
    command = [sys.executable, str(ROOT / "bench" / script), *args, "--json", str(out)]
    try:
        proc = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, check=False
        )
    except subprocess.TimeoutExpired as exc:
        return BenchRun(
            script,
            failure=f"bench/{script} hung (no exit in {HANG_GUARD_SECONDS} s)\n--- stdout\n{_tail(exc.stdout)}"
            f"\n--- stderr\n{_tail(exc.stderr)}",
        )
    output = f"--- stdout\n{_tail(proc.stdout)}\n--- stderr\n{_tail(proc.stderr)}"
    if proc.returncode != 0:
        return BenchRun(script, failure=f"bench/{script} exited {proc.returncode}\n{output}")
    if expect_in_stdout and expect_in_stdout not in proc.stdout:
        return BenchRun(script, failure=f"bench/{script} did not print {expect_in_stdout!r}\n{output}")
    try:
        data = json.loads(out.read_text())
    except (OSError, ValueError) as exc:
        return BenchRun(script, failure=f"bench/{script} wrote no readable JSON to {out}: {exc}\n{output}")
    return BenchRun(script, data=data)
