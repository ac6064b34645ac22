"""What each framework extra costs (issue 31): its install size and its cold start.

For each framework extra (``a2a-serverless[pydantic-ai]``, ``[langgraph]``, ``[strands]``,
``[openai-agents]``, ``[google-adk]``):

* **install size**: the distributions the extra adds beyond the base install, and their bytes on
  disk. The sets are resolved offline from the metadata of the installed distributions (this
  project's ``.venv``, which ``.[test]`` gives every extra): the closure of the base requirements,
  and of the base plus the extra, each requirement's markers evaluated for this interpreter; the
  difference is what the extra adds. Bytes are those of the files each added distribution's
  ``RECORD`` lists (its wheel unzipped, plus its console scripts), and apart the ``__pycache__``
  bytecode compiled at install. Versions are those installed here, not a fresh resolution.
* **import**: the wall and CPU time of ``import a2a_serverless.frameworks.<module>`` in a fresh
  interpreter (bytecode cached), median of ``--runs``; beside it the SQS worker's entry point
  (``a2a_serverless.functions.worker``: what the worker imports at init), and the two in one
  interpreter: the worker's init with the extra, before the user's module builds its agent.
  Targets take turns, so load on the machine weighs on all alike; ``--importtime`` adds the top
  third-party contributors (self time by top-level package, ``python -X importtime``, one run).
* **first turn**: in a fresh interpreter, one turn of a trivial agent (three text deltas) on the
  framework's test model (``bench/_framework_agents.py``: Pydantic AI's ``FunctionModel``, a
  LangChain fake chat model that streams, a Strands model, the scripted models of
  ``tests/frameworks`` for the OpenAI Agents SDK and ADK), through the adapter, the app on the
  in-memory runtime and its worker (``ServedAgent`` of ``tests/frameworks/conftest``):
  the adapter's import once the kit is loaded, building the executor and the app, the first turn
  and a second one; beside it the same for the kit's demo executor, as the reference.

    .venv/bin/python bench/framework_costs.py [--runs 7] [--framework NAME ...] [--importtime] \\
        [--json out.json]

``--install-only --json out.json`` recomputes the install sizes into an existing results file,
keeping its timings.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
import tomllib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "a2a-serverless"
FRAMEWORKS = {  # extra -> adapter module
    "pydantic-ai": "pydantic_ai",
    "langgraph": "langgraph",
    "strands": "strands",
    "openai-agents": "openai_agents",
    "google-adk": "google_adk",
}
WORKER = "a2a_serverless.functions.worker"
REFERENCE = "base"  # the first-run reference: the kit's demo executor
TURN_TOKENS = 3
TURN = f"tokens {TURN_TOKENS} 0"
"""A first turn: three text deltas of 4 characters, as fast as the model gives them."""
_IMPORTTIME = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\| (\s*)(\S.*)$")
_TIMED_IMPORT = (
    "import time; w, c = time.perf_counter(), time.process_time()\n"
    "import {modules}\n"
    "print(time.perf_counter() - w, time.process_time() - c)\n"
)


# Install size --------------------------------------------------------------------------------


def closure(extras: Iterable[str]) -> set[str]:
    """The distributions (canonical names) the project with ``extras`` needs, itself excluded: its
    own requirements read from ``pyproject.toml`` (an editable install's metadata can be older),
    those of the rest from their installed metadata."""
    seen: set[tuple[str, str]] = set()
    pending = [(PROJECT, ""), *((PROJECT, e) for e in extras)]
    names: set[str] = set()
    while pending:
        name, extra = pending.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        names.add(name)
        for req in _requires(name, extra):
            dep = canonicalize_name(req.name)
            pending += [(dep, ""), *((dep, e) for e in req.extras)]
    return names - {PROJECT}


def _requires(name: str, extra: str) -> Iterator[Requirement]:
    """What ``name`` with ``extra`` requires beyond ``name`` alone (``extra=""``: ``name`` alone)."""
    if name == PROJECT:
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        lines = project["optional-dependencies"][extra] if extra else project["dependencies"]
        reqs = [Requirement(line) for line in lines]
        yield from (r for r in reqs if r.marker is None or r.marker.evaluate({"extra": ""}))
        return
    for line in metadata.distribution(name).requires or []:
        req = Requirement(line)
        if req.marker is None and extra:
            continue  # an unconditional requirement: the node without extra holds it
        if req.marker is None or req.marker.evaluate({"extra": extra}):
            yield req


def installed_bytes(name: str) -> tuple[int, int]:
    """Bytes on disk of ``name``'s files (its RECORD): (files, ``__pycache__`` bytecode)."""
    dist = metadata.distribution(name)
    files = bytecode = 0
    for entry in dist.files or []:
        path = Path(str(dist.locate_file(entry)))
        size = path.stat().st_size if path.is_file() else 0
        if "__pycache__" in entry.parts:
            bytecode += size
        else:
            files += size
    return files, bytecode


def install_sizes(extras: Iterable[str]) -> dict[str, Any]:
    base = closure(())
    results: dict[str, Any] = {"base": _sized(base)}
    for extra in extras:
        results[extra] = _sized(closure([extra]) - base)
    return results


def _sized(names: set[str]) -> dict[str, Any]:
    dists = {}
    for name in sorted(names):
        files, bytecode = installed_bytes(name)
        dists[name] = {"version": metadata.version(name), "bytes": files, "bytecode_bytes": bytecode}
    return {
        "distributions": len(dists),
        "bytes": sum(d["bytes"] for d in dists.values()),
        "bytecode_bytes": sum(d["bytecode_bytes"] for d in dists.values()),
        "dists": dists,
    }


# Import time ---------------------------------------------------------------------------------


def timed_import(modules: str) -> tuple[float, float]:
    """(wall, CPU) seconds of ``import modules`` in a fresh interpreter, its start-up excluded."""
    code = _TIMED_IMPORT.format(modules=modules)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def importtime_top(modules: str, top: int = 6) -> list[tuple[str, float]]:
    """The top-level packages with the most self time importing ``modules`` (ms, one run)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {modules}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    by_package: dict[str, int] = defaultdict(int)
    for line in proc.stderr.splitlines():
        if match := _IMPORTTIME.search(line):
            by_package[match.group(4).strip().split(".")[0]] += int(match.group(1))
    ranked = sorted(by_package.items(), key=lambda kv: -kv[1])[:top]
    return [(name, us / 1000) for name, us in ranked]


def import_times(targets: dict[str, str], runs: int) -> dict[str, dict[str, float]]:
    for modules in targets.values():
        timed_import(modules)  # warm the bytecode cache
    samples: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _ in range(runs):
        for label, modules in targets.items():  # in turns: load weighs on all alike
            samples[label].append(timed_import(modules))
    return {label: _medians(s) for label, s in samples.items()}


def _medians(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "wall_ms": statistics.median(w for w, _ in samples) * 1000,
        "cpu_ms": statistics.median(c for _, c in samples) * 1000,
    }


# First turn (runs in a child interpreter: ``--probe NAME``) -----------------------------------


def _probe(name: str) -> dict[str, tuple[float, float]]:
    """Stages of one fresh interpreter's first turns with ``name``'s trivial agent."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    stages: dict[str, tuple[float, float]] = {}

    def stage(label: str, run: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        value = run()
        stages[label] = (time.perf_counter() - wall, time.process_time() - cpu)
        return value

    served_agent = stage("kit", _import_kit)
    make = stage("adapter_import", lambda: _maker(name))
    agent = stage("build", lambda: served_agent(make()))
    try:
        for label in ("first_turn", "second_turn"):
            task = stage(label, lambda: agent.send(TURN))
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
            said = "".join(p.get("text", "") for a in task["artifacts"] for p in a["parts"])
            assert name == REFERENCE or said == _answer(), said
    finally:
        agent.close()
    return stages


def _import_kit() -> Any:
    from frameworks.conftest import ServedAgent  # tests/frameworks: the app on a memory runtime

    return ServedAgent


def _maker(name: str) -> Callable[[], Any]:
    """What builds ``name``'s agent, once its adapter is imported: the kit's demo executor for the
    reference, else ``bench/_framework_agents``' agent on the framework's scripted model."""
    if name == REFERENCE:
        from a2a_serverless.execution.demo import DemoAgentExecutor

        return DemoAgentExecutor
    from bench._framework_agents import streamer

    importlib.import_module(f"a2a_serverless.frameworks.{FRAMEWORKS[name]}")
    return lambda: streamer(name)


def _answer() -> str:
    from bench._framework_agents import answer_tokens

    return "".join(answer_tokens(TURN_TOKENS))


def first_turns(names: list[str], runs: int) -> dict[str, dict[str, dict[str, float]]]:
    def run(name: str) -> dict[str, tuple[float, float]]:
        out = subprocess.run(
            [sys.executable, __file__, "--probe", name], capture_output=True, text=True, cwd=ROOT, check=True
        )
        stages: dict[str, list[float]] = json.loads(out.stdout.splitlines()[-1])
        return {label: (wall, cpu) for label, (wall, cpu) in stages.items()}

    for name in names:
        run(name)  # warm the bytecode cache
    samples: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for _ in range(runs):
        for name in names:
            for label, value in run(name).items():
                samples[name][label].append(value)
    return {name: {label: _medians(s) for label, s in stages.items()} for name, stages in samples.items()}


# Report --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--framework", action="append", choices=list(FRAMEWORKS), help="default: all")
    parser.add_argument("--importtime", action="store_true", help="top import contributors (one run each)")
    parser.add_argument("--no-first-turn", action="store_true")
    parser.add_argument(
        "--install-only", action="store_true", help="recompute the install sizes only, into --json's existing timings"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--probe", choices=[REFERENCE, *FRAMEWORKS], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(_probe(args.probe)))
        return
    extras: list[str] = args.framework or list(FRAMEWORKS)
    if args.install_only:
        results = json.loads(args.json.read_text())
        results["install"] = install_sizes(extras)
        _print(results, results["install"], results["import"], extras)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        return
    results = {"runs": args.runs, "python": sys.version.split()[0], "load": _load()}
    results["install"] = sizes = install_sizes(extras)
    targets = {REFERENCE: WORKER}
    for extra in extras:
        adapter = f"a2a_serverless.frameworks.{FRAMEWORKS[extra]}"
        targets[extra] = adapter
        targets[f"{extra} + worker"] = f"{WORKER}, {adapter}"
    results["import"] = imports = import_times(targets, args.runs)
    if args.importtime:
        results["importtime_top"] = {label: importtime_top(modules) for label, modules in targets.items()}
    if not args.no_first_turn:
        results["first_turn"] = first_turns([REFERENCE, *extras], args.runs)
    results["load_after"] = _load()
    _print(results, sizes, imports, extras)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _print(results: dict[str, Any], sizes: dict[str, Any], imports: dict[str, Any], extras: list[str]) -> None:
    mb = 1024 * 1024
    base = sizes["base"]
    print(f"load average before {results['load']}, after {results['load_after']}; medians of {results['runs']} runs")
    print(f"base install: {base['distributions']} distributions, {base['bytes'] / mb:.1f} MiB")
    print(
        f"{'extra':<14} {'dists':>5} {'MiB':>6} {'+pyc':>6}  {'import wall/cpu ms':>18}  "
        f"{'worker+extra ms':>16}  {'1st turn ms':>12}  {'2nd turn ms':>11}"
    )
    rows = [REFERENCE, *extras]
    for name in rows:
        size = sizes[name]
        imp = imports[name if name != REFERENCE else REFERENCE]
        both = imports.get(f"{name} + worker", imp)
        turn = results.get("first_turn", {}).get(name, {})
        first, second = turn.get("first_turn"), turn.get("second_turn")
        print(
            f"{name:<14} {size['distributions']:>5} {size['bytes'] / mb:>6.1f} {size['bytecode_bytes'] / mb:>6.1f}  "
            f"{imp['wall_ms']:>8.0f} / {imp['cpu_ms']:>6.0f}  {both['wall_ms']:>7.0f} / {both['cpu_ms']:>6.0f}  "
            f"{_ms(first):>12}  {_ms(second):>11}"
        )
    print("(base row: the base install; its import is the worker entry point's, its turns the demo executor's)")
    for label, top in results.get("importtime_top", {}).items():
        print(f"{label}: " + ", ".join(f"{n} {ms:.0f}" for n, ms in top))


def _ms(stage: dict[str, float] | None) -> str:
    return "-" if stage is None else f"{stage['wall_ms']:.0f}/{stage['cpu_ms']:.0f}"


if __name__ == "__main__":
    main()
