"""The local stack as a developer lives in it (issue 16): ``a2a-serverless dev`` started as a user
starts it, then

* blocking SendMessage "hello" at concurrency 1 and 8: tasks/s, p50, p99 and the slowest request;
* idle CPU: the CPU time of every process of the stack (the stack, moto, the API, each function)
  over ``--idle-seconds``, from ``/proc/<pid>/stat``, after the stack has been quiet for 15 s;
* Ctrl-C: one SIGINT 3 s into a ``sleep 60`` run whose stream is open; the time until the stack's
  process is gone, whether its children are gone too, and whether the output has a traceback.

    .venv/bin/python bench/devloop.py --requests 80 --idle-seconds 30 --json bench/results-devloop.json

Executor event to SSE client is ``compare.py``'s (its local-stack section). Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from _dev_process import DevStack

V1 = {"A2A-Version": "1.0"}
ROOT = Path(__file__).resolve().parents[1]


class Stack(DevStack):
    """This checkout's stack: ``python -m a2a_serverless_dev dev`` of this interpreter."""

    def __init__(self) -> None:
        command = [sys.executable, "-m", "a2a_serverless_dev", "dev", "--port", "0"]
        super().__init__(command, cwd=ROOT, ready_timeout=90)

    def pids(self) -> list[int]:
        children = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True, check=False)
        return [self.process.pid, *(int(p) for p in children.stdout.split())]


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def send(base: str, n: int) -> float:
    body = {"message": {"messageId": f"m-{n}-{time.monotonic_ns()}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}
    started = time.perf_counter()
    response = httpx.post(f"{base}/message:send", json=body, headers=V1, timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    task = response.json()["task"]
    if task["status"]["state"] != "TASK_STATE_COMPLETED":
        raise RuntimeError(f"not completed: {task['status']}")
    return elapsed


def load(base: str, concurrency: int, requests: int) -> dict[str, float]:
    for n in range(concurrency):  # warm-up
        send(base, n)
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        latencies = sorted(pool.map(lambda n: send(base, n), range(requests)))
    wall = time.perf_counter() - started
    return {
        "tasks_per_s": round(requests / wall, 2),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1),
        "max_ms": round(latencies[-1], 1),
    }


def idle(stack: Stack, seconds: float, quiet: float) -> dict[str, Any]:
    time.sleep(quiet)  # quiet first: the pollers at their idle rates
    pids = stack.pids()
    before = {pid: cpu_ticks(pid) for pid in pids}
    time.sleep(seconds)
    ticks = sum(cpu_ticks(pid) - before[pid] for pid in pids)
    hz = os.sysconf("SC_CLK_TCK")
    return {"processes": len(pids), "percent_of_a_core": round(100 * ticks / hz / seconds, 2)}


def ctrl_c(stack: Stack) -> dict[str, Any]:
    children = stack.pids()[1:]
    events: list[str] = []
    message = {"messageId": f"m-stop-{time.monotonic_ns()}", "role": "ROLE_USER", "parts": [{"text": "sleep 60"}]}
    body = {"message": message}

    def stream() -> None:
        try:
            with httpx.stream("POST", f"{stack.base}/message:stream", json=body, headers=V1, timeout=90) as r:
                events.extend(line for line in r.iter_lines() if line.startswith("data:"))
        except httpx.HTTPError as exc:
            events.append(f"error: {type(exc).__name__}")

    reader = threading.Thread(target=stream, daemon=True)
    reader.start()
    time.sleep(3)
    mark = len(stack.lines)
    started = time.perf_counter()
    stack.process.send_signal(signal.SIGINT)
    code = stack.process.wait(timeout=120)
    stopped = time.perf_counter() - started
    reader.join(10)
    alive = [pid for pid in children if Path(f"/proc/{pid}").exists()]
    return {
        "seconds": round(stopped, 2),
        "exit_code": code,
        "stream_ended": not reader.is_alive(),
        "children_left": len(alive),
        "traceback": any("Traceback" in line for line in stack.lines[mark:]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=80, help="blocking sends per concurrency level")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--quiet-seconds", type=float, default=15.0, help="quiet time before the idle window")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    stack = Stack()
    try:
        result: dict[str, Any] = {
            "hello_c1": load(stack.base, 1, args.requests // 2),
            "hello_c8": load(stack.base, 8, args.requests),
        }
        result["idle"] = idle(stack, args.idle_seconds, args.quiet_seconds)
        result["ctrl_c"] = ctrl_c(stack)
    finally:
        if stack.process.poll() is None:
            stack.process.kill()
    text = json.dumps(result, indent=2)
    sys.stdout.write(text + "\n")
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
