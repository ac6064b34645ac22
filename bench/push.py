"""Push notifications on the local stack: event-to-webhook latency, delivery throughput, AWS calls.

* latency: an executor emits ``--events`` artifact chunks (one every ``--interval`` s), each stamped
  with its emit time; the task's inline push config points at a local webhook receiver, which notes
  when each notification arrives (p50 / p95 / max), and checks that the sequence numbers
  (``X-A2A-Event-Sequence``) came in order, none missing, none twice;
* throughput: ``--tasks`` tasks of ``--burst`` chunks each (no pause between chunks), sent by 8
  threads, each with its own config and receiver path: notifications delivered per second, from the
  first SendMessage to the last COMPLETED notification, and every task's notifications checked
  complete and in order;
* AWS calls: the app's own DynamoDB / SQS / SSM calls during the throughput run (botocore
  ``before-send``), by operation and by the function (poller thread) that made them, per delivered
  notification. The task's own work (the API's writes, the worker's transactions and cancel watch)
  is counted too, separately, so the push functions' share is visible;
* blocking: what a webhook adds to a blocking SendMessage (a one-chunk task), ``--blocking`` rounds,
  one after the other: without a webhook, with a live one, with a dead one (a closed port), the
  answer's latency for each (p50 / p95 / max); for the live one, whether the COMPLETED push was at
  the receiver when the answer came, and when it arrived relative to the answer (negative: before).

    .venv/bin/python bench/push.py [--events 200] [--interval 0.05] [--tasks 40] [--burst 20]
        [--blocking 20] [--parts latency,throughput,blocking] [--json out.json]

The functions' metric (EMF) lines go to stdout as on Lambda; the results are the JSON printed last.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from _stack import run_on_local_stack

HEADERS = {"A2A-Version": "1.0"}
COMPLETED = "TASK_STATE_COMPLETED"
SENDERS = 8
SETTLE_SECONDS = 2.0
"""After the last COMPLETED arrives: time for its cursor write and any duplicate items to finish."""
THROUGHPUT_TIMEOUT = 150.0


class AwsCalls:
    """Counts the app's AWS calls by (function, service.operation). The function is told by the
    calling thread: the local stack's pollers (``poller-<prefix>-<FunctionId>-<n>``), the worker's
    ``asyncio.to_thread`` pool (``asyncio_<n>``), the API's AnyIO threads. Also notes when each
    delivery item was queued (the dispatcher's ``SendMessageBatch`` entries), for the latency split."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[tuple[str, str]] = Counter()
        self.queued_at: dict[tuple[str, int], float] = {}

    def __call__(self, request: Any, event_name: str = "", **_: Any) -> None:
        now = time.time()
        # event_name is "before-send.<service>.<Operation>"; X-Amz-Target as a fallback.
        parts = event_name.split(".")
        if len(parts) == 3:
            operation = f"{parts[1]}.{parts[2]}"
        else:
            target = request.headers.get("X-Amz-Target") or b""
            operation = (target.decode() if isinstance(target, bytes) else str(target)) or "unknown"
        with self.lock:
            self.counts[(_caller(threading.current_thread().name), operation)] += 1
        if operation == "sqs.SendMessageBatch":
            self._note_queued(request.body, now)

    def _note_queued(self, body: Any, now: float) -> None:
        try:
            entries = json.loads(body)["Entries"]
            items = [json.loads(entry["MessageBody"]) for entry in entries]
        except (TypeError, ValueError, KeyError):  # not the JSON protocol: no split, counts still hold
            return
        with self.lock:
            for item in items:
                self.queued_at.setdefault((item["task_id"], int(item["up_to_seq"])), now)

    def snapshot(self) -> Counter[tuple[str, str]]:
        with self.lock:
            return Counter(self.counts)


def _caller(thread_name: str) -> str:
    match = re.fullmatch(r"poller-(?:.*-)?(\w+Function)-\d+", thread_name)
    if match:
        return match.group(1)
    if thread_name.startswith("asyncio_"):
        return "WorkerFunction"
    if thread_name.startswith("AnyIO worker thread"):
        return "api"
    return thread_name


class Receiver:
    """A webhook: ``ThreadingHTTPServer`` on 127.0.0.1, answering 204, recording every request."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.requests: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrival = time.time()
                self.send_response(204)
                self.end_headers()
                record = {
                    "path": self.path,
                    "arrival": arrival,
                    "seq": int(self.headers.get("X-A2A-Event-Sequence") or 0),
                    "event_id": self.headers.get("X-A2A-Event-Id"),
                    "signed": bool(self.headers.get("X-A2A-Notification-Signature")),
                    "body": json.loads(raw),
                }
                with receiver.cond:
                    receiver.requests.append(record)
                    receiver.cond.notify_all()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="webhook-receiver", daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def for_path(self, path: str) -> list[dict[str, Any]]:
        with self.cond:
            return [r for r in self.requests if r["path"] == path]

    def wait_completed(self, paths: set[str], timeout: float) -> dict[str, float]:
        """Wait until every path got a COMPLETED status update; returns its arrival time per path."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                done = {r["path"]: r["arrival"] for r in self.requests if r["path"] in paths and _completed(r["body"])}
                left = deadline - time.monotonic()
                if done.keys() >= paths or left <= 0:
                    return done
                self.cond.wait(min(left, 1.0))


def _completed(body: dict[str, Any]) -> bool:
    return bool(body.get("statusUpdate", {}).get("status", {}).get("state") == COMPLETED)


def _kind(body: dict[str, Any]) -> str:
    """``task``, ``artifactUpdate``, or ``statusUpdate:<state>``: what one notification carried."""
    key = next(iter(body), "?")
    if key == "statusUpdate":
        return f"{key}:{body[key].get('status', {}).get('state', '?')}"
    return key


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def sequence_check(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """In arrival order: did the seqs come 1, 2, 3 ... with none missing or repeated?"""
    seqs = [r["seq"] for r in sorted(requests, key=lambda r: r["arrival"])]
    counts = Counter(seqs)
    top = max(seqs, default=0)
    return {
        "received": len(seqs),
        "first_seq": min(seqs, default=0),
        "last_seq": top,
        "in_order": seqs == sorted(seqs) and all(n == 1 for n in counts.values()),
        "missing": sorted(set(range(1, top + 1)) - counts.keys()),
        "duplicates": sorted(s for s, n in counts.items() if n > 1),
    }


def send_task(client: httpx.Client, text: str, hook_url: str) -> str:
    body = {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": {"returnImmediately": True, "taskPushNotificationConfig": {"url": hook_url}},
    }
    response = client.post("/message:send", json=body, headers=HEADERS)
    response.raise_for_status()
    return str(response.json()["task"]["id"])


def summary(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50": round(percentile(values, 0.5), 1),
        "p95": round(percentile(values, 0.95), 1),
        "max": round(max(values), 1),
        "mean": round(statistics.mean(values), 1),
    }


def measure_latency(
    client: httpx.Client, receiver: Receiver, calls: AwsCalls, args: argparse.Namespace
) -> dict[str, Any]:
    task_id = send_task(client, f"tick {args.events} {args.interval}", receiver.url + "/latency")
    completed = receiver.wait_completed({"/latency"}, timeout=args.events * args.interval + 60)
    requests = receiver.for_path("/latency")
    total: list[float] = []
    queued: list[float] = []
    delivered: list[float] = []
    for r in requests:
        if "artifactUpdate" not in r["body"]:
            continue
        emitted = r["body"]["artifactUpdate"]["artifact"]["metadata"]["emittedAt"]
        total.append((r["arrival"] - emitted) * 1000)
        at = calls.queued_at.get((task_id, r["seq"]))
        if at is not None:
            queued.append((at - emitted) * 1000)
            delivered.append((r["arrival"] - at) * 1000)
    result: dict[str, Any] = {"task_id": task_id, "completed": bool(completed)}
    if total:
        result["event_to_webhook_ms"] = summary(total)
    if queued:
        # The two stages: executor event -> its delivery item queued (store, stream, dispatcher),
        # then queued -> webhook (FIFO queue, delivery poller, reads, signing, POST).
        result["event_to_queued_ms"] = summary(queued)
        result["queued_to_webhook_ms"] = summary(delivered)
    result["sequence"] = sequence_check(requests)
    result["kinds"] = dict(Counter(_kind(r["body"]) for r in requests))
    result["signed"] = sum(r["signed"] for r in requests)
    result["event_ids_match"] = all(r["event_id"] == f"{task_id}:{r['seq']}" for r in requests)
    return result


def measure_throughput(
    client: httpx.Client, receiver: Receiver, calls: AwsCalls, args: argparse.Namespace
) -> dict[str, Any]:
    paths = [f"/t{n}" for n in range(args.tasks)]
    time.sleep(SETTLE_SECONDS)  # the latency task's last cursor write is not this part's
    before = calls.snapshot()
    started = time.time()
    with ThreadPoolExecutor(SENDERS) as pool:
        task_ids = list(pool.map(lambda p: send_task(client, f"tick {args.burst} 0", receiver.url + p), paths))
    sent = time.time()
    completed = receiver.wait_completed(set(paths), timeout=THROUGHPUT_TIMEOUT)
    last = max(completed.values(), default=time.time())
    time.sleep(SETTLE_SECONDS)
    used = calls.snapshot() - before
    per_task = {p: receiver.for_path(p) for p in paths}
    checks = {p: sequence_check(reqs) for p, reqs in per_task.items()}
    delivered = sum(len(reqs) for reqs in per_task.values())
    wall = last - started
    ids = set(task_ids)
    with calls.lock:
        queued = [at for (task_id, _), at in calls.queued_at.items() if task_id in ids]
    emitted = [
        r["body"]["artifactUpdate"]["artifact"]["metadata"]["emittedAt"]
        for reqs in per_task.values()
        for r in reqs
        if "artifactUpdate" in r["body"]
    ]
    bad = {
        task_ids[n]: check
        for n, (p, check) in enumerate(checks.items())
        if not check["in_order"] or check["missing"] or check["first_seq"] != 1 or p not in completed
    }
    result: dict[str, Any] = {
        "tasks": args.tasks,
        "notifications_per_task": sorted({len(reqs) for reqs in per_task.values()}),
        "send_seconds": round(sent - started, 2),
        "notifications_delivered": delivered,
        "wall_seconds": round(wall, 2),
        "last_chunk_emitted_seconds": round(max(emitted) - started, 2) if emitted else None,
        "last_item_queued_seconds": round(max(queued) - started, 2) if queued else None,
        "deliveries_per_second": round(delivered / wall, 1) if wall > 0 else None,
        "tasks_completed": len(completed),
        "tasks_complete_and_in_order": args.tasks - len(bad),
        "problems": bad,
    }
    by_function: dict[str, dict[str, Any]] = {}
    for (where, operation), n in sorted(used.items()):
        entry = by_function.setdefault(where, {"calls": {}, "per_delivery": {}})
        entry["calls"][operation] = n
        entry["per_delivery"][operation] = round(n / delivered, 3) if delivered else None
    result["aws_calls"] = by_function
    totals: Counter[str] = Counter()
    for (_, operation), n in used.items():
        totals[operation] += n
    result["aws_calls_per_delivery_all"] = {op: round(n / delivered, 3) for op, n in sorted(totals.items())}
    return result


def blocking_send(client: httpx.Client, text: str, hook_url: str = "") -> tuple[float, str, float]:
    """A blocking SendMessage: (latency in ms, the answer's state, when the answer came)."""
    configuration: dict[str, Any] = {"taskPushNotificationConfig": {"url": hook_url}} if hook_url else {}
    body = {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": configuration,
    }
    began = time.perf_counter()
    response = client.post("/message:send", json=body, headers=HEADERS)
    answered = time.time()
    latency = (time.perf_counter() - began) * 1000
    response.raise_for_status()
    return latency, str(response.json()["task"]["status"]["state"]), answered


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure_blocking(client: httpx.Client, receiver: Receiver, args: argparse.Namespace) -> dict[str, Any]:
    """Rounds of three blocking sends of a one-chunk task: no webhook, a live one, a dead one."""
    time.sleep(SETTLE_SECONDS)
    dead = f"http://127.0.0.1:{_closed_port()}/dead"
    plain: list[float] = []
    live: list[float] = []
    gone: list[float] = []
    there = 0
    arrival_after_answer: list[float] = []
    states: Counter[str] = Counter()
    for n in range(args.blocking):
        latency, state, _ = blocking_send(client, "tick 1 0")
        plain.append(latency)
        states[state] += 1
        path = f"/blocking{n}"
        latency, state, answered = blocking_send(client, "tick 1 0", receiver.url + path)
        live.append(latency)
        states[state] += 1
        there += any(_completed(r["body"]) for r in receiver.for_path(path))
        arrived = receiver.wait_completed({path}, timeout=30).get(path)
        if arrived is not None:
            arrival_after_answer.append((arrived - answered) * 1000)
        latency, state, _ = blocking_send(client, "tick 1 0", dead)
        gone.append(latency)
        states[state] += 1
    result: dict[str, Any] = {
        "rounds": args.blocking,
        "answer_states": dict(states),
        "no_webhook_ms": summary(plain),
        "live_webhook_ms": summary(live),
        "dead_webhook_ms": summary(gone),
        "live_added_p50_ms": round(percentile(live, 0.5) - percentile(plain, 0.5), 1),
        "dead_added_p50_ms": round(percentile(gone, 0.5) - percentile(plain, 0.5), 1),
        "completed_push_at_webhook_when_answered": f"{there}/{args.blocking}",
    }
    if arrival_after_answer:
        result["completed_push_arrival_minus_answer_ms"] = summary(arrival_after_answer)
    return result


def measure(base: str, calls: AwsCalls, args: argparse.Namespace) -> dict[str, Any]:
    parts = set(args.parts.split(","))
    results: dict[str, Any] = {}
    with Receiver() as receiver, httpx.Client(base_url=base, timeout=60) as client:
        if "latency" in parts:
            results["latency"] = measure_latency(client, receiver, calls, args)
        if "throughput" in parts:
            results["throughput"] = measure_throughput(client, receiver, calls, args)
        if "blocking" in parts:
            results["blocking"] = measure_blocking(client, receiver, args)
    # The signing key set is read once per cold start of each function (and created on first use).
    results["ssm_calls_whole_run"] = {
        f"{where} {operation}": n
        for (where, operation), n in sorted(calls.snapshot().items())
        if operation.startswith("ssm.")
    }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description="Push notification benchmark on the local stack")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--blocking", type=int, default=20, help="rounds of the blocking part")
    parser.add_argument("--parts", default="latency,throughput,blocking", help="which parts to run, comma-separated")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    calls = AwsCalls()
    return run_on_local_stack(
        lambda base: measure(base, calls, args),
        on_aws_request=calls,
        executor="bench._stream_agents:TickExecutor",
        workers=4,
        json_out=args.json,
    )


if __name__ == "__main__":
    sys.exit(main())
