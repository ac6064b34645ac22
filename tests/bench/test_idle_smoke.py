"""``bench/idle.py`` runs end to end and reports every figure: what is counted is checked (the
stack's processes sampled, the first task answered, the push notification delivered), never a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testkit.bench_runs import HANG_GUARD_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def test_idle_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "idle.json"
    command = [sys.executable, str(ROOT / "bench" / "idle.py"), "--rounds", "1", "--quiet-seconds", "0"]
    command += ["--idle-seconds", "1", "--json", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]["this"]
    assert run["ready_seconds"] > 0
    assert run["first_answer_seconds"] >= run["ready_seconds"]
    # the stack, moto, the API and the template's five functions, each sampled
    assert {"stack", "moto", "api", "WorkerFunction", "PushDeliveryFunction"} <= set(run["idle"]["per_process"])
    assert run["idle"]["processes"] >= 8
    assert run["first_events"]["hello_blocking_ms"] > 0
    assert run["first_events"]["first_push_ms"] is not None  # the notification reached the webhook
