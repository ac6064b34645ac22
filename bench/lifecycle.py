"""Task lifecycle on the local stack (moto server + uvicorn + SQS pollers, all in this process).

Measures, with the demo executor:

* blocking SendMessage latency (p50 / p95 / max over ``--sends`` sequential requests);
* cancel latency: from POST :cancel on a running ``sleep 30`` task to the task being CANCELED;
* AWS calls made by our code, counted from botocore ``before-send`` events: per SendMessage on the
  API side, per task on the worker side, and per additional executor event (the difference
  between ``sleep 3``, which emits three more events, and ``hello``). The SQS event source's own
  ReceiveMessage / DeleteMessage calls are not ours and are not counted.

    .venv/bin/python bench/lifecycle.py [--sends 100] [--cancels 10] [--json out.json]

Absolute times on a shared 2-core machine are noisy; compare runs made side by side.
"""

from __future__ import annotations

import argparse
import collections
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from _stack import run_on_local_stack

HEADERS = {"A2A-Version": "1.0"}


class CallCounter:
    """Counts AWS API calls by side (api / worker) and operation."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()

    def __call__(self, request: Any, **_: Any) -> None:
        target = request.headers.get("X-Amz-Target") or b""
        op = target.decode().rsplit(".", 1)[-1] if target else "?"
        side = "api" if threading.current_thread().name.startswith("AnyIO") else "worker"
        with self.lock:
            self.calls[(side, op)] += 1

    def snapshot(self) -> collections.Counter[tuple[str, str]]:
        with self.lock:
            return collections.Counter(self.calls)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def send(client: httpx.Client, text: str, *, immediately: bool = False) -> dict[str, Any]:
    body = {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": {"returnImmediately": immediately},
    }
    response = client.post("/message:send", json=body, headers=HEADERS)
    response.raise_for_status()
    task: dict[str, Any] = response.json()["task"]
    return task


def wait_state(client: httpx.Client, task_id: str, states: set[str], timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task: dict[str, Any] = client.get(f"/tasks/{task_id}", headers=HEADERS).json()
        if task["status"]["state"] in states or time.monotonic() > deadline:
            return task
        time.sleep(0.01)


def per_call(
    before: collections.Counter[tuple[str, str]], after: collections.Counter[tuple[str, str]], n: int, side: str
) -> dict[str, float]:
    diff = {op: (after[(s, op)] - before[(s, op)]) / n for (s, op) in after if s == side}
    return {op: round(v, 2) for op, v in sorted(diff.items()) if v}


def measure(base_url: str, counter: CallCounter, args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for _ in range(5):  # warm up
            send(client, "warm up")
        latencies = []
        before = counter.snapshot()
        for i in range(args.sends):
            start = time.perf_counter()
            task = send(client, f"hello {i}")
            latencies.append((time.perf_counter() - start) * 1000)
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        after = counter.snapshot()
        results["blocking_send_ms"] = {
            "n": args.sends,
            "p50": round(percentile(latencies, 0.5), 1),
            "p95": round(percentile(latencies, 0.95), 1),
            "max": round(max(latencies), 1),
        }
        results["calls_per_send_api"] = per_call(before, after, args.sends, "api")
        results["calls_per_task_worker_hello"] = per_call(before, after, args.sends, "worker")

        n_sleep = 5
        before_sleep = counter.snapshot()
        for _ in range(n_sleep):
            task = send(client, "sleep 3")
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        after_sleep = counter.snapshot()
        sleep_worker = per_call(before_sleep, after_sleep, n_sleep, "worker")
        hello_worker = results["calls_per_task_worker_hello"]
        extra = {op: round((sleep_worker.get(op, 0) - hello_worker.get(op, 0)) / 3, 2) for op in sleep_worker}
        results["calls_per_extra_executor_event"] = {k: v for k, v in extra.items() if k != "GetItem"}
        results["cancel_watch_reads_per_second_of_work"] = round(
            (sleep_worker.get("GetItem", 0) - hello_worker.get("GetItem", 0)) / 3, 2
        )

        cancel_ms = []
        for _ in range(args.cancels):
            task = send(client, "sleep 30", immediately=True)
            wait_state(client, task["id"], {"TASK_STATE_WORKING"})
            time.sleep(0.3)
            start = time.perf_counter()
            canceled = client.post(f"/tasks/{task['id']}:cancel", headers=HEADERS).json()
            if canceled["status"]["state"] != "TASK_STATE_CANCELED":
                canceled = wait_state(client, task["id"], {"TASK_STATE_CANCELED"})
            cancel_ms.append((time.perf_counter() - start) * 1000)
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED", canceled
        results["cancel_to_canceled_ms"] = {
            "n": args.cancels,
            "p50": round(percentile(cancel_ms, 0.5), 1),
            "p95": round(percentile(cancel_ms, 0.95), 1),
            "max": round(max(cancel_ms), 1),
        }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description="Task lifecycle benchmark on the local stack")
    parser.add_argument("--sends", type=int, default=100)
    parser.add_argument("--cancels", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    counter = CallCounter()
    return run_on_local_stack(
        lambda base: measure(base, counter, args),
        on_aws_request=counter,
        executor=None,
        workers=4,
        json_out=args.json,
    )


if __name__ == "__main__":
    sys.exit(main())
