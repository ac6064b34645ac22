"""The official A2A TCK (a2aproject/a2a-tck, branch 1.0-dev) against the local stack in its default
configuration, with the TCK's behaviour agent (``bench/_tck_agent.py``): JSON-RPC and HTTP+JSON
(the kit serves no gRPC). Prints and writes the per-level counts and every failure.

The TCK is not part of this repository: bring its source and an environment of its own::

    git clone --branch 1.0-dev https://github.com/a2aproject/a2a-tck /tmp/a2a-tck
    python3 -m venv /tmp/tck-venv && /tmp/tck-venv/bin/pip install -e /tmp/a2a-tck
    .venv/bin/python bench/tck.py --tck /tmp/a2a-tck --tck-python /tmp/tck-venv/bin/python

It runs the TCK's own ``run_tck.py`` in its directory (reports in ``<tck>/reports/``) and reads
``reports/compatibility.json``. Not in CI: a run takes minutes and needs the TCK.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._stack import measure_on_local_stack  # noqa: E402 - after the path


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """The TCK's compatibility figures (its summary) and every requirement that failed, with the
    transports it failed on and its first errors."""
    summary = {k: v for k, v in report["summary"].items() if k.endswith("compatibility")}
    counts = Counter((r["level"], r["status"]) for r in report["per_requirement"].values())
    failures = [
        {
            "requirement": requirement,
            "level": result["level"],
            "transports": result["transports"],
            "errors": [str(e)[:300] for e in result["errors"][:2]],
        }
        for requirement, result in sorted(report["per_requirement"].items())
        if result["status"] == "FAIL"
    ]
    return {
        "compatibility": summary,
        "requirements": {f"{level} {status}": n for (level, status), n in sorted(counts.items())},
        "failures": failures,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tck", type=Path, required=True, help="a checkout of a2a-tck, branch 1.0-dev")
    parser.add_argument("--tck-python", default=sys.executable, help="the Python of the TCK's environment")
    parser.add_argument("--transport", default="jsonrpc,http_json")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results-tck.json")
    args = parser.parse_args()
    tck = args.tck.resolve()

    def measure(base_url: str) -> dict[str, Any]:
        command = [args.tck_python, "run_tck.py", "--sut-host", base_url, "--transport", args.transport]
        run = subprocess.run(command, cwd=tck, capture_output=True, text=True, timeout=3600, check=False)
        report = json.loads((tck / "reports" / "compatibility.json").read_text())
        tail = run.stdout.strip().splitlines()[-1:] if run.stdout.strip() else []
        return {"tck_exit_status": run.returncode, "pytest": tail, **summarize(report)}

    outcome = measure_on_local_stack(measure, executor="bench._tck_agent:TckExecutor")
    text = json.dumps(outcome, indent=2)
    print(text)
    args.json.write_text(text + "\n")
    return 1 if "error" in outcome else 0


if __name__ == "__main__":
    sys.exit(main())
