"""Cold-start cost of each Lambda entry point: import time in a fresh interpreter.

Runs ``python -X importtime -c "import a2a_serverless.functions.<module>"`` several times per handler module and
prints the median cumulative import time (what a cold start pays before the first request), plus
the same for the reference SDK's server stack when ``a2a-sdk`` is installed, for comparison.

    .venv/bin/python bench/import_times.py [--runs 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\| (\s*)(\S.*)$")


def import_us(module: str, prelude: str = "") -> int:
    """Cumulative microseconds to import ``module`` (fresh interpreter, bytecode cached), after
    running ``prelude`` (its own imports are not counted apart: keep it to what must run first)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"{prelude}import {module}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    total = 0
    for line in proc.stderr.splitlines():
        match = _LINE.search(line)
        if match and not match.group(3):
            total += int(match.group(2))  # top-level entries: cumulative times add up
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    entry_points = ROOT / "shared" / "a2a_serverless" / "functions"
    modules = sorted(p.stem for p in entry_points.glob("*.py") if not p.stem.startswith("_"))
    targets = [f"a2a_serverless.functions.{m}" for m in modules]
    # The gateway function runs uvicorn serving the whole app (functions/run.sh): its cold start.
    targets.append("uvicorn, a2a_serverless.transport.app")
    targets.append("a2a.server.routes")  # the reference SDK's server stack, for comparison
    results: dict[str, float] = {}
    for target in targets:
        try:
            import_us(target)  # warm the bytecode cache
        except subprocess.CalledProcessError:
            continue
        samples = [import_us(target) for _ in range(args.runs)]
        results[target] = statistics.median(samples) / 1000
    width = max(len(t) for t in results)
    print(f"{'module':<{width}}  median import ms ({args.runs} runs)")
    for target, ms in results.items():
        print(f"{target:<{width}}  {ms:8.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
