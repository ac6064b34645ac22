"""``bench/devloop.py`` runs end to end and reports every figure: what is counted is checked (every
send completed, the Ctrl-C stop left no process, ended the stream, printed no traceback), never a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testkit.bench_runs import HANG_GUARD_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def test_devloop_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "devloop.json"
    command = [sys.executable, str(ROOT / "bench" / "devloop.py"), "--requests", "8", "--idle-seconds", "1"]
    command += ["--quiet-seconds", "0", "--json", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    figures = json.loads(out.read_text())
    for level in ("hello_c1", "hello_c8"):
        assert set(figures[level]) == {"tasks_per_s", "p50_ms", "p99_ms", "max_ms"}
        assert figures[level]["tasks_per_s"] > 0
    assert figures["idle"]["processes"] >= 7  # the stack, moto, the API and its functions
    stop = figures["ctrl_c"]
    assert (stop["exit_code"], stop["stream_ended"], stop["children_left"], stop["traceback"]) == (0, True, 0, False)
