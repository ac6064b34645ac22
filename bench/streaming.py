"""Streaming on the local stack: event-to-client latency and event-log reads per streamed minute.

* latency: an executor emits ``--events`` artifact chunks (one every ``--interval`` s), each
  stamped with its emit time; an SSE client on SendStreamingMessage records when each arrives
  (p50 / p95 / max), at the default polling settings;
* reads: DynamoDB ``Query`` calls on the event log (only streams issue them) per minute of an
  active stream (the ticking task) and of an idle one (a subscription to a task waiting for input).

    .venv/bin/python bench/streaming.py [--events 200] [--interval 0.05] [--idle-seconds 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from _stack import run_on_local_stack

HEADERS = {"A2A-Version": "1.0"}


class QueryCounter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queries = 0

    def __call__(self, request: Any, **_: Any) -> None:
        if (request.headers.get("X-Amz-Target") or b"").endswith(b".Query"):
            with self.lock:
                self.queries += 1


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def sse_events(response: httpx.Response) -> Any:
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield json.loads("".join(data))
            data = []


def measure(base: str, counter: QueryCounter, args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with httpx.Client(base_url=base, timeout=120) as client:
        body = {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": f"tick {args.events} {args.interval}"}],
            }
        }
        latencies: list[float] = []
        queries_before = counter.queries
        started = time.monotonic()
        with client.stream("POST", "/message:stream", json=body, headers=HEADERS) as response:
            response.raise_for_status()
            for event in sse_events(response):
                update = event.get("artifactUpdate")
                if update:
                    latencies.append((time.time() - update["artifact"]["metadata"]["emittedAt"]) * 1000)
        active_minutes = (time.monotonic() - started) / 60
        results["event_to_client_ms"] = {
            "n": len(latencies),
            "p50": round(percentile(latencies, 0.5), 1),
            "p95": round(percentile(latencies, 0.95), 1),
            "max": round(max(latencies), 1),
            "mean": round(statistics.mean(latencies), 1),
        }
        results["event_log_queries_per_minute_active"] = round((counter.queries - queries_before) / active_minutes)

        ask = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "ask me"}]}}
        waiting = client.post("/message:send", json=ask, headers=HEADERS).json()["task"]
        queries_before = counter.queries
        started = time.monotonic()
        with client.stream("GET", f"/tasks/{waiting['id']}:subscribe", headers=HEADERS) as response:
            for _ in response.iter_lines():
                if time.monotonic() - started > args.idle_seconds:
                    break
        idle_minutes = (time.monotonic() - started) / 60
        results["event_log_queries_per_minute_idle"] = round((counter.queries - queries_before) / idle_minutes)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description="Streaming benchmark on the local stack")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--idle-seconds", type=float, default=20.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    counter = QueryCounter()
    return run_on_local_stack(
        lambda base: measure(base, counter, args),
        on_aws_request=counter,
        executor="bench._stream_agents:TickExecutor",
        workers=2,
        json_out=args.json,
    )


if __name__ == "__main__":
    sys.exit(main())
