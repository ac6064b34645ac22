"""Side by side with the reference A2A server (a2a-sdk 1.x), in one invocation.

Figures, each as ours, the peer's and ours/peer:

1. cold start: import time of each Lambda entry point vs the reference server stack (fresh
   interpreter each, A/B alternating, median);
2. protocol overhead: requests/s and p50/p99 latency of GetTask and blocking SendMessage (JSON-RPC,
   ``A2A-Version: 1.0``) at each concurrency, our app on the memory runtime vs the reference server on
   ``InMemoryTaskStore``, both under uvicorn in a subprocess with the same options, the same load
   generator, alternating A/B rounds after a discarded warm-up round, medians across rounds;
3. the same on our local stack (moto over HTTP), to show the storage cost (no peer);
4. streaming: executor-event-to-SSE-client latency p50/p95, ours in memory and on the local stack
   vs the peer;
5. AWS calls per operation and cost per million tasks, from ``bench/aws_calls.py`` (a subprocess).

    .venv/bin/python bench/compare.py [--quick] [--rounds 5] [--requests 200] [--concurrency 1,8,32]
        [--bindings jsonrpc,rest] [--ours-poll SECONDS] [--skip-imports] [--skip-local-stack]
        [--skip-aws-calls] [--json out.json]        (--help lists the rest)

The servers: ``bench/_serve.py`` (ours, the peer from ``bench/_reference_server.py``, the local
stack); the load generator and SSE client: ``bench/_loadgen.py``. How to read the output:
bench/README.md, "Side by side with the reference server".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
from _loadgen import HEADERS, Request, jsonrpc, run_load, stream_latencies, user_message
from import_times import import_us

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
HOST = "127.0.0.1"
CARD_PATH = "/.well-known/agent-card.json"

# What an app built on the reference SDK imports before its first request, with the a2a-sdk[http-server]
# extra only: grpc is importable in this virtualenv (grpcio-tools) and the SDK imports it when it can,
# which a deployment without the grpc extra does not pay, so it is hidden from the peer's interpreter.
_NO_GRPC = "import sys; sys.modules['grpc'] = None\n"
PEER_STACK = (
    "starlette.applications, a2a.server.routes, a2a.server.request_handlers, a2a.server.tasks, "
    "a2a.server.agent_execution, a2a.server.events, a2a.types, a2a.helpers"
)
GATEWAY = "uvicorn, a2a_serverless.transport.app"


# --- servers -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def server(name: str, command: list[str], port: int, logs: Path, ready_timeout: float = 120) -> Iterator[str]:
    """Start ``command`` (its own process group), wait for the agent card, yield the base URL; stop it
    (SIGINT, then SIGKILL to its group) however the block ends."""
    log = logs / f"{name}.log"
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://{HOST}:{port}"
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(base + CARD_PATH, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready after {ready_timeout:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield base
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def serve_command(side: str, port: int, args: argparse.Namespace) -> list[str]:
    """``bench/_serve.py``: ours or the peer under uvicorn; the local stack is ``a2a-serverless dev``."""
    command = [sys.executable, str(BENCH / "_serve.py"), side, "--port", str(port)]
    if side == "ours" and args.ours_poll is not None:
        command += ["--poll", str(args.ours_poll)]
    return command


# --- operations ----------------------------------------------------------------------------------


def operations(binding: str, task_id: str) -> dict[str, tuple[Callable[[], Request], Callable[[int, bytes], bool]]]:
    """Operation name -> (request factory, response check), for one binding."""

    def completed(status: int, body: bytes) -> bool:
        return status == 200 and b"TASK_STATE_COMPLETED" in body and b'"error"' not in body

    if binding == "rest":
        send_body = lambda: json.dumps({"message": user_message("hello")}).encode()  # noqa: E731
        return {
            "GetTask": (lambda: Request("GET", f"/tasks/{task_id}"), completed),
            "SendMessage": (lambda: Request("POST", "/message:send", send_body()), completed),
        }
    return {
        "GetTask": (lambda: jsonrpc("GetTask", {"id": task_id}), completed),
        "SendMessage": (lambda: jsonrpc("SendMessage", {"message": user_message("hello")}), completed),
    }


def seed_task(base: str) -> str:
    """One completed echo task, for GetTask."""
    request = jsonrpc("SendMessage", {"message": user_message("hello")})
    response = httpx.post(base + "/", content=request.body, headers=HEADERS, timeout=60)
    task: dict[str, Any] = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    return str(task["id"])


def load_cells(bindings: list[str], concurrency: list[int]) -> list[tuple[str, str, int]]:
    return [(b, op, c) for b in bindings for op in ("GetTask", "SendMessage") for c in concurrency]


def measure_load(
    sides: dict[str, str],
    cells: list[tuple[str, str, int]],
    *,
    rounds: int,
    warmup: int,
    requests: int,
    errors: list[str],
) -> dict[str, list[dict[str, Any]]]:
    """Per side, the raw result of every measured round for every cell (warm-up rounds dropped). The
    sides take turns cell by cell, and the first side alternates by round (ABBA), so drift on the
    machine hits every side alike."""
    tasks = {side: seed_task(base) for side, base in sides.items()}
    raw: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    order = list(sides)
    for number in range(warmup + rounds):
        results: dict[str, dict[str, Any]] = {side: {} for side in sides}
        for binding, op, concurrency in cells:
            for side in order if number % 2 == 0 else order[::-1]:
                port = int(sides[side].rsplit(":", 1)[1])
                make, ok = operations(binding, tasks[side])[op]
                total = requests if number >= warmup else max(concurrency, requests // 4)
                cell = asyncio.run(run_load(HOST, port, make, ok, concurrency=concurrency, total=total))
                if cell["errors"]:
                    errors.append(
                        f"{side} {binding} {op} c={concurrency}: {cell['errors']} errors, first {cell['first_error']}"
                    )
                results[side][f"{binding}/{op}/{concurrency}"] = cell
        if number >= warmup:
            for side in sides:
                raw[side].append(results[side])
        print(f"  load round {number + 1 - warmup if number >= warmup else 'warm-up'}: done", flush=True)
    return raw


def measure_streams(sides: dict[str, str], rounds: int, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    raw: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    order = list(sides)
    for number in range(1 + rounds):
        for side in order if number % 2 == 0 else order[::-1]:
            result = stream_latencies(sides[side], args.stream_events, args.stream_interval)
            if number:
                raw[side].append(result)
    return raw


def median_of(rounds: list[dict[str, Any]], key: str | None = None) -> dict[str, float]:
    """Median across rounds of each numeric field (of ``round[key]`` when given)."""
    cells = [r[key] if key else r for r in rounds]
    fields = [f for f, v in cells[0].items() if isinstance(v, int | float) and f != "n"]
    return {f: round(statistics.median(c[f] for c in cells), 2) for f in fields}


def ratio(ours: float, peer: float) -> float | None:
    return round(ours / peer, 2) if peer else None


# --- figures -------------------------------------------------------------------------------------


def import_ms(modules: str, prelude: str = "") -> float:
    """Cumulative ms to import ``modules`` in a fresh interpreter (``import_times.import_us``)."""
    return import_us(modules, prelude) / 1000


def cold_start(args: argparse.Namespace) -> dict[str, Any]:
    entry_points = ROOT / "shared" / "a2a_serverless" / "functions"
    modules = sorted(p.stem for p in entry_points.glob("*.py") if not p.stem.startswith("_"))
    if args.quick:
        modules = ["send_message"]
    pairs = [(f"a2a_serverless.functions.{m}", PEER_STACK) for m in modules] + [(GATEWAY, f"uvicorn, {PEER_STACK}")]
    peer_targets = {peer for _, peer in pairs}

    def measure(target: str) -> float:
        return import_ms(target, prelude=_NO_GRPC if target in peer_targets else "")

    for target in dict.fromkeys(t for pair in pairs for t in pair):  # warm the bytecode caches
        measure(target)
    samples: dict[str, list[float]] = {}
    for run in range(args.import_runs):
        for ours, peer in pairs:
            for target in (ours, peer) if run % 2 == 0 else (peer, ours):
                samples.setdefault(target, []).append(measure(target))
    rows = []
    for ours, peer in pairs:
        ours_ms = statistics.median(samples[ours])
        peer_ms = statistics.median(samples[peer])
        label = "gateway (uvicorn + app)" if ours == GATEWAY else ours
        peer_label = "reference stack + uvicorn" if ours == GATEWAY else "reference stack"
        rows.append(
            {
                "ours_target": label,
                "peer_target": peer_label,
                "ours": round(ours_ms, 1),
                "peer": round(peer_ms, 1),
                "ratio": ratio(ours_ms, peer_ms),
            }
        )
    return {"runs": args.import_runs, "peer_modules": PEER_STACK, "rows": rows}


def protocol(args: argparse.Namespace, logs: Path, errors: list[str]) -> dict[str, Any]:
    with ExitStack() as stack:
        sides = {}
        for side in ("ours", "peer"):
            port = free_port()
            sides[side] = stack.enter_context(server(side, serve_command(side, port, args), port, logs))
        print("in memory: ours and peer up", flush=True)
        cells = load_cells(args.bindings, args.concurrency)
        raw = measure_load(sides, cells, rounds=args.rounds, warmup=1, requests=args.requests, errors=errors)
        print("in memory: streaming", flush=True)
        streams = measure_streams(sides, args.rounds, args)
    medians: dict[str, Any] = {}
    for binding, op, concurrency in cells:
        key = f"{binding}/{op}/{concurrency}"
        ours, peer = median_of(raw["ours"], key), median_of(raw["peer"], key)
        medians[key] = {
            "binding": binding,
            "operation": op,
            "concurrency": concurrency,
            "ours": ours,
            "peer": peer,
            "ratio": {f: ratio(ours[f], peer[f]) for f in ("rps", "p50_ms", "p99_ms")},
        }
    return {"cells": medians, "streams": streams, "raw_rounds": raw}


def local_stack(args: argparse.Namespace, logs: Path, errors: list[str]) -> dict[str, Any]:
    port = free_port()
    with server("local_stack", serve_command("local_stack", port, args), port, logs) as base:
        print("local stack up", flush=True)
        raw = measure_load(
            {"local_stack": base},
            load_cells(args.bindings, args.stack_concurrency),
            rounds=args.stack_rounds,
            warmup=0 if args.quick else 1,  # the quick run only shows that everything answers
            requests=args.stack_requests,
            errors=errors,
        )
        streams = measure_streams({"local_stack": base}, args.stack_rounds, args)
    cells = {key: median_of(raw["local_stack"], key) for key in raw["local_stack"][0]}
    return {"cells": cells, "streams": streams["local_stack"], "raw_rounds": raw["local_stack"]}


def aws_calls(args: argparse.Namespace, logs: Path) -> tuple[dict[str, Any], str]:
    """Run bench/aws_calls.py; its JSON and its rendered section, or why it was skipped."""
    script = BENCH / "aws_calls.py"
    if args.skip_aws_calls:
        return {"skipped": "--skip-aws-calls"}, "AWS calls: skipped (--skip-aws-calls)."
    if not script.exists():
        return {"skipped": "bench/aws_calls.py does not exist"}, "AWS calls: skipped (bench/aws_calls.py not found)."
    out = logs / "aws_calls.json"
    command = [sys.executable, str(script), *(["--quick"] if args.quick else []), "--json", str(out)]
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
        if proc.returncode != 0 or not out.exists():
            reason = f"bench/aws_calls.py exited with {proc.returncode}: {(proc.stderr or proc.stdout)[-1500:]}"
            return {"skipped": reason}, f"AWS calls: skipped ({reason})."
        result: dict[str, Any] = json.loads(out.read_text())
        import aws_calls as module  # bench/ is on sys.path: this script's directory

        return result, str(module.render(result))
    except Exception as exc:
        reason = f"bench/aws_calls.py failed: {type(exc).__name__}: {exc}"
        return {"skipped": reason}, f"AWS calls: skipped ({reason})."


def streaming(proto: dict[str, Any], stack: dict[str, Any] | None, args: argparse.Namespace) -> dict[str, Any]:
    ours, peer = median_of(proto["streams"]["ours"]), median_of(proto["streams"]["peer"])
    result: dict[str, Any] = {
        "events": args.stream_events,
        "interval_s": args.stream_interval,
        "rounds": args.rounds,
        "stack_rounds": args.stack_rounds,
        "ours_memory": ours,
        "peer": peer,
        "ratio_memory": {f: ratio(ours[f], peer[f]) for f in ("p50_ms", "p95_ms")},
        "raw_rounds": {"ours_memory": proto["streams"]["ours"], "peer": proto["streams"]["peer"]},
    }
    if stack is not None:
        on_stack = median_of(stack["streams"])
        result["ours_local_stack"] = on_stack
        result["ratio_local_stack"] = {f: ratio(on_stack[f], peer[f]) for f in ("p50_ms", "p95_ms")}
        result["raw_rounds"]["ours_local_stack"] = stack["streams"]
    return result


# --- report --------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    mem = ""
    with suppress(OSError):
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split(":", 1)[1].strip()
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "memory": mem,
        "a2a_sdk": metadata.version("a2a-sdk"),
        "uvicorn": metadata.version("uvicorn"),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"


def render(result: dict[str, Any]) -> str:
    m, args = result["machine"], result["args"]
    lines = [
        f"Machine: {m['cpus']} cpus, {m['memory']}, Python {m['python']}, a2a-sdk {m['a2a_sdk']}, uvicorn "
        f"{m['uvicorn']}, load average {m['loadavg_start']} at start, {m['loadavg_end']} at end; "
        f"{result['duration_s']:.0f} s in all. Ratios are ours/peer.",
    ]
    if args.get("ours_poll") is not None:
        lines.append(f"Our in-memory server's poll interval: {args['ours_poll']} s (default 0.05).")
    if "import_ms" in result:
        lines += _render_imports(result["import_ms"])
    lines += _render_protocol(result)
    lines += _render_streaming(result["streaming"])
    if result["errors"]:
        lines += ["", "Errors:", *(f"- {e}" for e in result["errors"])]
    return "\n".join(lines)


def _render_imports(imports: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Cold start, import ms (median of {imports['runs']} fresh interpreters each, alternating):",
        "",
        "| ours | ms | peer | ms | ours/peer |",
        "|---|---|---|---|---|",
    ]
    for row in imports["rows"]:
        lines.append(
            f"| {row['ours_target']} | {fmt(row['ours'])} | {row['peer_target']} | {fmt(row['peer'])} | "
            f"{fmt(row['ratio'])} |"
        )
    return lines


def _render_protocol(result: dict[str, Any]) -> list[str]:
    args = result["args"]
    stack = result.get("local_stack", {}).get("cells", {})
    on_stack = (
        f"; local stack: {args['stack_rounds']} rounds of {args['stack_requests']}"
        f"{'' if args['quick'] else ' after a warm-up'}"
        if stack
        else ""
    )
    lines = [
        "",
        f"Protocol overhead, in memory (median of {args['rounds']} alternating rounds of {args['requests']} "
        f"requests after a warm-up{on_stack}):",
        "",
        "| binding | operation | conc | req/s ours | peer | ours/peer | p50 ms ours | peer | ours/peer "
        "| p99 ms ours | peer | ours/peer | local stack req/s | p50 | p99 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, cell in result["protocol"].items():
        ours, peer, r, s = cell["ours"], cell["peer"], cell["ratio"], stack.get(key, {})
        lines.append(
            f"| {cell['binding']} | {cell['operation']} | {cell['concurrency']} "
            f"| {fmt(ours['rps'])} | {fmt(peer['rps'])} | {fmt(r['rps'])} "
            f"| {fmt(ours['p50_ms'])} | {fmt(peer['p50_ms'])} | {fmt(r['p50_ms'])} "
            f"| {fmt(ours['p99_ms'])} | {fmt(peer['p99_ms'])} | {fmt(r['p99_ms'])} "
            f"| {fmt(s.get('rps'))} | {fmt(s.get('p50_ms'))} | {fmt(s.get('p99_ms'))} |"
        )
    for key, s in stack.items():  # concurrency levels run on the local stack only
        if key not in result["protocol"]:
            binding, op, concurrency = key.split("/")
            lines.append(
                f"| {binding} | {op} | {concurrency} | | | | | | | | | "
                f"| {fmt(s['rps'])} | {fmt(s['p50_ms'])} | {fmt(s['p99_ms'])} |"
            )
    return lines


def _render_streaming(st: dict[str, Any]) -> list[str]:
    def row(label: str, side: dict[str, float], ratios: dict[str, float | None] | None) -> str:
        r = ratios or {}
        return (
            f"| {label} | {fmt(side['p50_ms'])} | {fmt(side['p95_ms'])} | {fmt(side['max_ms'])} "
            f"| {fmt(r.get('p50_ms'))} | {fmt(r.get('p95_ms'))} |"
        )

    on_stack = f", {st['stack_rounds']} on the local stack" if "ours_local_stack" in st else ""
    lines = [
        "",
        f"Streaming, executor event → SSE client ms ({st['events']} chunks every {st['interval_s']} s; median of "
        f"{st['rounds']} alternating rounds in memory{on_stack}):",
        "",
        "| server | p50 | p95 | max | p50 ours/peer | p95 ours/peer |",
        "|---|---|---|---|---|---|",
        row("ours, memory runtime", st["ours_memory"], st["ratio_memory"]),
    ]
    if "ours_local_stack" in st:
        lines.append(row("ours, local stack (event log on moto)", st["ours_local_stack"], st["ratio_local_stack"]))
    lines.append(row("peer (in-process event queue)", st["peer"], None))
    return lines


DEFAULTS = {
    "rounds": 5,
    "requests": 200,
    "stack_rounds": 2,
    "stack_requests": 40,
    "stream_events": 50,
    "import_runs": 3,
}
QUICK = {"rounds": 1, "requests": 20, "stack_rounds": 1, "stack_requests": 10, "stream_events": 10, "import_runs": 1}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run (under a minute), for a smoke test")
    parser.add_argument("--rounds", type=int, help="measured A/B rounds after a warm-up round (default 5)")
    parser.add_argument("--requests", type=int, help="requests per cell and round (default 200)")
    parser.add_argument("--concurrency", default="1,8,32", help="comma-separated concurrency levels")
    parser.add_argument("--bindings", default="jsonrpc", help="jsonrpc and/or rest, comma-separated")
    parser.add_argument("--stack-rounds", type=int, help="measured rounds on the local stack (default 2)")
    parser.add_argument("--stack-requests", type=int, help="requests per cell on the local stack (default 40)")
    parser.add_argument("--stream-events", type=int, help="artifact chunks per streamed task (default 50)")
    parser.add_argument("--stream-interval", type=float, default=0.03, help="seconds between chunks (default 0.03)")
    parser.add_argument("--import-runs", type=int, help="fresh interpreters per import target (default 3)")
    parser.add_argument(
        "--ours-poll", type=float, help="our in-memory server's blocking-wait and stream poll seconds (default 0.05)"
    )
    parser.add_argument(
        "--stack-concurrency", default="1,8", help="concurrency levels on the local stack (default 1,8)"
    )
    parser.add_argument("--skip-imports", action="store_true", help="leave out the cold-start figure")
    parser.add_argument("--skip-local-stack", action="store_true", help="leave out the local stack")
    parser.add_argument("--skip-aws-calls", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else DEFAULTS
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.concurrency = [int(c) for c in str(args.concurrency).split(",")]
    args.stack_concurrency = [int(c) for c in str(args.stack_concurrency).split(",")]
    args.bindings = [b.strip() for b in str(args.bindings).split(",")]
    if not set(args.bindings) <= {"jsonrpc", "rest"}:
        parser.error("--bindings takes jsonrpc and/or rest")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    result: dict[str, Any] = {"machine": machine(), "errors": []}
    result["args"] = {k: v for k, v in vars(args).items() if k != "json"}
    errors: list[str] = result["errors"]
    with tempfile.TemporaryDirectory(prefix="a2a-compare-") as tmp:
        logs = Path(tmp)
        phases = result["phase_s"] = {}
        if not args.skip_imports:
            print("cold start: import times", flush=True)
            result["import_ms"] = cold_start(args)
            phases["import"] = round(time.monotonic() - started, 1)
        proto = protocol(args, logs, errors)
        phases["in_memory"] = round(time.monotonic() - started - sum(phases.values()), 1)
        stack = None if args.skip_local_stack else local_stack(args, logs, errors)
        if stack is not None:
            phases["local_stack"] = round(time.monotonic() - started - sum(phases.values()), 1)
            result["local_stack"] = {"cells": stack["cells"], "raw_rounds": stack["raw_rounds"]}
        result["protocol"] = proto["cells"]
        result["streaming"] = streaming(proto, stack, args)
        result["raw_rounds"] = proto["raw_rounds"]
        result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        result["duration_s"] = round(time.monotonic() - started, 1)
        print("AWS calls: bench/aws_calls.py", flush=True)
        result["aws_calls"], aws_section = aws_calls(args, logs)
    print()
    print(render(result))
    print()
    print(aws_section)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
