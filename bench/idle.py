"""The local stack at rest: how long ``a2a-serverless dev`` takes to be ready, what it costs while
nobody uses it, and how fast it answers the first event after a quiet spell.

Each round starts the stack of each tree as a user does (the ``a2a-serverless`` command of this
interpreter's virtualenv, with ``PYTHONPATH=<tree>/shared`` and the tree as the working directory,
so its own code and ``template.yaml`` run), the trees taking turns round after round so a shared
machine's load falls on them alike, and measures:

* ready: seconds from the command's start to its ready line (``A2A agent card: ...``); with
  ``--busy N``, N processes spinning on the CPU meanwhile (a loaded machine), stopped at the ready
  line;
* first answer: seconds from the command's start to the answer of a blocking SendMessage ``hello``
  sent at the ready line (what a script that starts the stack and talks to it waits);
* idle: after ``--quiet-seconds`` without a request, the CPU time (user + sys, ``/proc/<pid>/stat``)
  of the stack's whole process tree (the stack, moto, the API, each function) over
  ``--idle-seconds``, as a percentage of one core, and per process;
* first events after the idle window: a blocking SendMessage ``hello`` (the worker's queue poller
  waking), then a task with an inline push config whose first notification reaches a webhook on
  127.0.0.1 (the table's stream poller and the delivery queue's poller waking): milliseconds.

    .venv/bin/python bench/idle.py --tree before=/tmp/idle-base --tree after=. --rounds 3 \\
        [--busy 4] --json bench/results-idle.json

Prints per-run figures as they come, then the medians per tree as JSON. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from _dev_process import DevStack, descendants

V1 = {"A2A-Version": "1.0"}
ROOT = Path(__file__).resolve().parents[1]
HZ = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime


def label(pid: int) -> str:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return str(pid)
    words = [a.decode(errors="replace") for a in args if a]
    if any("_moto_process" in w for w in words):
        return "moto"
    if any(w.endswith("._processes") for w in words):
        kind = words[words.index(next(w for w in words if w.endswith("._processes"))) + 1]
        if kind == "api":
            return "api"
        spec = json.loads(words[-1])
        return str(spec.get("function_id", kind))
    return "stack"


class Hooks(ThreadingHTTPServer):
    """A webhook receiver on 127.0.0.1 that notes when each path's first notification came."""

    def __init__(self) -> None:
        self.first: dict[str, float] = {}
        self.arrived = threading.Condition()
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                with hooks.arrived:
                    hooks.first.setdefault(self.path, time.perf_counter())
                    hooks.arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def wait(self, path: str, timeout: float) -> float | None:
        with self.arrived:
            self.arrived.wait_for(lambda: path in self.first, timeout)
            return self.first.get(path)


class Stack(DevStack):
    """The stack of ``tree`` as a user starts it: the ``a2a-serverless`` command of this interpreter's
    virtualenv, with the tree's ``shared/`` first on ``PYTHONPATH`` and the tree as working directory."""

    def __init__(self, tree: Path, busy: int = 0) -> None:
        command = [str(Path(sys.executable).with_name("a2a-serverless")), "dev", "--port", "0"]
        env = {**os.environ, "PYTHONPATH": str(tree / "shared")}
        super().__init__(command, cwd=tree, env=env, ready_timeout=180, busy=busy)


def idle(stack: Stack, seconds: float) -> dict[str, Any]:
    pids = descendants(stack.process.pid)
    names = {pid: label(pid) for pid in pids}
    before = {pid: cpu_ticks(pid) for pid in pids}
    time.sleep(seconds)
    used = {names[pid]: (cpu_ticks(pid) - before[pid]) / HZ for pid in pids}
    return {
        "processes": len(pids),
        "percent_of_a_core": round(100 * sum(used.values()) / seconds, 2),
        "per_process": {name: round(100 * cpu / seconds, 2) for name, cpu in sorted(used.items())},
    }


def hello(base: str) -> None:
    """A blocking SendMessage ``hello``, answered COMPLETED."""
    body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hello"}]}}
    task = httpx.post(f"{base}/message:send", json=body, headers=V1, timeout=90).json()["task"]
    if task["status"]["state"] != "TASK_STATE_COMPLETED":
        raise RuntimeError(f"hello not completed: {task['status']}")


def first_events(stack: Stack, hooks: Hooks) -> dict[str, float | None]:
    with httpx.Client(base_url=stack.base, headers=V1, timeout=90) as client:
        started = time.perf_counter()
        hello(stack.base)
        hello_ms = (time.perf_counter() - started) * 1000
        time.sleep(12)  # quiet again: the stream poller back at its quiet rate
        path = f"/hook-{uuid.uuid4().hex}"
        push = {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hello"}]},
            "configuration": {
                "returnImmediately": True,
                "taskPushNotificationConfig": {"url": f"http://127.0.0.1:{hooks.server_address[1]}{path}"},
            },
        }
        started = time.perf_counter()
        client.post("/message:send", json=push).raise_for_status()
        arrived = hooks.wait(path, 90)
    return {
        "hello_blocking_ms": round(hello_ms, 1),
        "first_push_ms": None if arrived is None else round((arrived - started) * 1000, 1),
    }


def run_once(tree: Path, args: argparse.Namespace, hooks: Hooks) -> dict[str, Any]:
    stack = Stack(tree, args.busy)
    try:
        result: dict[str, Any] = {"ready_seconds": round(stack.ready_seconds, 2)}
        hello(stack.base)
        result["first_answer_seconds"] = round(time.perf_counter() - stack.started, 2)
        time.sleep(args.quiet_seconds)
        result["idle"] = idle(stack, args.idle_seconds)
        if not args.skip_events:
            result["first_events"] = first_events(stack, hooks)
    finally:
        stack.stop()
    return result


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 2) if present else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", action="append", default=[], metavar="NAME=PATH", help="a checkout to run (default: this one)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--quiet-seconds", type=float, default=15.0, help="quiet time before the idle window")
    parser.add_argument("--busy", type=int, default=0, help="processes spinning on the CPU while the stack starts")
    parser.add_argument("--skip-events", action="store_true", help="no first events after the idle window")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    trees = [(name, Path(path).resolve()) for name, path in (t.split("=", 1) for t in args.tree)]
    trees = trees or [("this", ROOT)]
    hooks = Hooks()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    for n in range(args.rounds):
        for name, tree in trees:
            result = run_once(tree, args, hooks)
            runs[name].append(result)
            sys.stdout.write(f"round {n + 1} {name}: {json.dumps(result)}\n")
            sys.stdout.flush()
    summary: dict[str, Any] = {}
    for name, results in runs.items():
        processes = sorted({p for r in results for p in r["idle"]["per_process"]})
        summary[name] = {
            "runs": len(results),
            "ready_seconds": median([r["ready_seconds"] for r in results]),
            "first_answer_seconds": median([r["first_answer_seconds"] for r in results]),
            "idle_percent_of_a_core": median([r["idle"]["percent_of_a_core"] for r in results]),
            "idle_per_process": {p: median([r["idle"]["per_process"].get(p) for r in results]) for p in processes},
            "hello_blocking_ms": median([r.get("first_events", {}).get("hello_blocking_ms") for r in results]),
            "first_push_ms": median([r.get("first_events", {}).get("first_push_ms") for r in results]),
        }
    text = json.dumps({"median": summary, "runs": runs}, indent=2)
    sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
