"""Streaming task shapes on the local stack: how fast the worker commits a streamed answer, and how
late each chunk reaches a streaming client (issue 13: an LLM agent streams its answer in chunks).

Each shape is one task: ``stream_<N>_burst`` (N chunks of 40 bytes of text appended to one
artifact as fast as the event queue takes them) or ``stream_<N>_paced`` (the same, 50 chunks per
second), between a WORKING and a COMPLETED status update; the executor is ``chunks N INTERVAL`` of
``bench/_stream_agents.py``. The task is sent with ``POST /message:stream`` by an SSE client that
notes when each event arrives. Per shape:

* **worker events/s**: executor events committed to the task's event log, divided by the time from
  the executor's first emit to the commit of the last one. An event's commit time is the
  ``createdAt`` of its item in the log (the store's clock, millisecond precision, taken as the
  commit starts), read from moto after the run; events committed before the executor's first
  emit (the worker's claim) are not counted. Also given: the same count over the first-to-last
  commit span. If the log's items are not found (another table layout), the arrival of each event
  at the SSE client stands in for its commit (an upper bound) and ``commit_times_from`` says so;
* **executor emit rate**: events the executor handed to its event queue per second, first to last
  emit (in the worker's process: the local stack runs it in this one), and how long each hand-over
  took (on main it returns once the event is committed);
* **send → terminal**: from the SendStreamingMessage request to the terminal status update's
  arrival at the client (or, if the stream ended without one, to a GetTask that saw it);
* **outcome**: final state and status message, chunks that reached the stream, chunks stored in
  the task's artifact (and whether in order);
* **stream latency**: per chunk, executor emit time (``metadata.emittedAt``) → arrival at the SSE
  client, p50 / p95 / max;
* the worker's invocations and their wall time.

Each shape is capped (``--timeout``, seconds): then what happened so far is reported. The stack
runs with its default options (only the port, the worker pollers and the executor are set).

    .venv/bin/python bench/stream_shapes.py [--shapes stream_800_burst,stream_800_paced,stream_200_burst]
        [--timeout 300] [--json PATH]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import sys
import threading
import time
import uuid
import zlib
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(BENCH)]

from _stack import measure_on_local_stack  # noqa: E402
from aws_calls import TERMINAL, Activity, stream_shape, wrap_handlers  # noqa: E402

DEFAULT_SHAPES = ("stream_800_burst", "stream_800_paced", "stream_200_burst")
EXECUTOR = "bench._stream_agents:TickExecutor"
HEADERS = {"A2A-Version": "1.0"}
QUIET_SECONDS = 1.0
"""No invocation or request for this long: the stack is done with a shape."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 0.5), 1),
        "p95": round(percentile(values, 0.95), 1),
        "max": round(max(values), 1),
    }


def rate(count: int, seconds: float | None) -> float | None:
    return round(count / seconds, 1) if seconds and seconds > 0 else None


# ------------------------------------------------------------------------------------ SSE client
class SseClient(threading.Thread):
    """``POST /message:stream``: every event with its arrival time, until the stream ends or the
    deadline passes (checked at each line; ``: ping`` comments come at least every 15 s)."""

    def __init__(self, base: str, text: str, deadline: float) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.text = text
        self.deadline = deadline
        self.sent_at = 0.0
        self.events: list[dict[str, Any]] = []
        """``{"at": arrival (epoch s), "id": the SSE id, "data": the StreamResponse}``."""
        self.errors: list[Any] = []
        self.cut_at_deadline = False

    def run(self) -> None:
        body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": self.text}]}}
        try:
            with httpx.Client(base_url=self.base, timeout=httpx.Timeout(60.0, connect=10.0)) as client:
                self.sent_at = time.time()
                with client.stream("POST", "/message:stream", json=body, headers=HEADERS) as response:
                    response.raise_for_status()
                    self._read(response)
        except Exception as exc:
            self.errors.append(repr(exc))

    def _read(self, response: httpx.Response) -> None:
        data: list[str] = []
        event_id = ""
        kind = ""
        for line in response.iter_lines():
            if time.monotonic() > self.deadline:
                self.cut_at_deadline = True
                return
            if line.startswith("data:"):
                data.append(line[5:].strip())
            elif line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("event:"):
                kind = line[6:].strip()
            elif not line and data:
                payload = json.loads("".join(data))
                if kind == "error":
                    self.errors.append(payload)
                else:
                    self.events.append({"at": time.time(), "id": event_id, "data": payload})
                data, event_id, kind = [], "", ""


# ------------------------------------------------------------------------------------ one shape
def run_shape(base: str, name: str, activity: Activity, cap: float) -> dict[str, Any]:
    from bench._stream_agents import ARTIFACT_ID, EMITS, stored_chunks

    spec = stream_shape(name)
    assert spec is not None, name
    count, interval = spec
    if not activity.quiet(QUIET_SECONDS, timeout=60):
        return {"skipped": "the stack was not quiet before this shape"}
    activity.window = name
    started = time.monotonic()
    deadline = started + cap
    client = SseClient(base, f"chunks {count} {interval:g}", deadline)
    client.start()
    client.join(cap + 30)
    info: dict[str, Any] = {"chunks": count, "interval_seconds": interval, "cap_seconds": cap}
    events = list(client.events)
    sent_at = client.sent_at
    task_id = next((_task_id(e["data"]) for e in events if _task_id(e["data"])), "")
    terminal_at = next((e["at"] for e in events if _state(e["data"]) in TERMINAL), None)
    with httpx.Client(base_url=base, timeout=30, headers=HEADERS) as http:
        final: dict[str, Any] = {}
        while task_id and time.monotonic() < deadline:
            final = http.get(f"/tasks/{task_id}").json()
            if final["status"]["state"] in TERMINAL:
                terminal_at = terminal_at or time.time()
                break
            time.sleep(0.2)
        info["quiet_after"] = activity.quiet(QUIET_SECONDS, timeout=max(30.0, deadline - time.monotonic()))
        activity.window = "between"
        if task_id:
            final = http.get(f"/tasks/{task_id}").json()
    status = final.get("status") or {}
    artifact = next((a for a in final.get("artifacts") or [] if a.get("artifactId") == ARTIFACT_ID), None)
    texts = [p.get("text", "") for p in (artifact or {}).get("parts", [])]
    stored, stored_in_order = stored_chunks(texts)
    chunks = [e for e in events if "artifactUpdate" in e["data"]]
    latencies = [(e["at"] - e["data"]["artifactUpdate"]["artifact"]["metadata"]["emittedAt"]) * 1000 for e in chunks]
    emits = EMITS.get(task_id, {"emitted": [], "returned": [], "kinds": []})
    emitted, returned = emits["emitted"], emits["returned"]
    handover = [(r - e) * 1000 for e, r in zip(emitted, returned, strict=False)]
    worker = [i for i in _invocations(activity, name) if i["name"] == "WorkerFunction"]
    log = task_log(task_id)
    first_emit = emitted[0] if emitted else None
    commits, source = _commit_times(log, events)
    last_commit = commits[-1] if commits else None
    info.update(
        {
            "task_id": task_id,
            "final_state": status.get("state", ""),
            "final_status_message": " ".join(p.get("text", "") for p in (status.get("message") or {}).get("parts", [])),
            "timed_out": status.get("state") not in TERMINAL,
            "stream_cut_at_deadline": client.cut_at_deadline,
            "stream_errors": client.errors,
            "seconds_send_to_terminal": round(terminal_at - sent_at, 2) if terminal_at and sent_at else None,
            "chunks_emitted_by_executor": emits.get("kinds", []).count("chunk"),
            "chunks_reached_stream": len(chunks),
            "chunks_stored": stored,
            "chunks_stored_in_order": stored_in_order,
            "stream_events": len(events),
            "log_events_total": len(log),
            "events_committed": len(commits),
            "commit_times_from": source,
            "worker_events_per_second": rate(
                len(commits), last_commit - first_emit if commits and first_emit else None
            ),
            "commit_span_events_per_second": rate(
                len(commits) - 1, last_commit - commits[0] if len(commits) > 1 and last_commit else None
            ),
            "executor_events_emitted": len(emitted),
            "executor_emit_rate_per_second": rate(len(emitted) - 1, emitted[-1] - emitted[0] if emitted else None),
            "executor_handover_ms": summary(handover),
            "stream_latency_ms": summary(latencies),
            "worker_invocations": len(worker),
            "worker_ms": [round(i["ms"], 1) for i in worker],
            "worker_seconds_total": round(sum(i["ms"] for i in worker) / 1000, 2),
            "raw": {
                "stream_latency_ms": [round(v, 1) for v in latencies],
                "executor_emitted_at": emitted,
                "executor_returned_at": returned,
                "commit_times": commits,
                "sent_at": sent_at,
            },
        }
    )
    return info


def _task_id(data: dict[str, Any]) -> str:
    if "task" in data:
        return str(data["task"].get("id", ""))
    for key in ("statusUpdate", "artifactUpdate"):
        if key in data:
            return str(data[key].get("taskId", ""))
    return ""


def _state(data: dict[str, Any]) -> str:
    return str(((data.get("statusUpdate") or {}).get("status") or {}).get("state", ""))


def _invocations(activity: Activity, window: str) -> list[dict[str, Any]]:
    with activity.cond:
        return [i for i in activity.invocations if i["window"] == window and i["kind"] == "lambda"]


def _emitted_at(data: dict[str, Any]) -> float | None:
    """The executor's ``metadata.emittedAt`` of a streamed status or artifact update."""
    if "statusUpdate" in data:
        metadata = data["statusUpdate"].get("metadata") or {}
    elif "artifactUpdate" in data:
        metadata = data["artifactUpdate"].get("artifact", {}).get("metadata") or {}
    else:
        return None
    value = metadata.get("emittedAt")
    return float(value) if value is not None else None


def _commit_times(log: list[dict[str, Any]], events: list[dict[str, Any]]) -> tuple[list[float], str]:
    """Commit times (epoch s) of the executor's events (the ones stamped with ``emittedAt``): from
    the log's items, else their arrival at the SSE client."""
    if log:
        return sorted(e["committed_at"] for e in log if e["executor"]), "log createdAt"
    arrivals = [e["at"] for e in events if _emitted_at(e["data"]) is not None]
    return arrivals, "SSE arrival (the log's items were not found: another table layout?)"


def task_log(task_id: str) -> list[dict[str, Any]]:
    """The task's events as moto stores them (in this process; no AWS call): each with its ``seq``,
    commit time (``createdAt`` of the log item holding it) and whether the executor stamped it
    (``emittedAt`` in the event; the events the worker adds itself are not). Log items hold one
    event (``event``) or a commit's events (``first`` .. ``seq``, ``events`` or zlib ``eventsZ``).
    Empty if the layout is not one this knows (items with ``taskId``, ``seq``, ``createdAt``)."""
    if not task_id:
        return []
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    for _ in range(5):
        try:
            out = []
            for table in list(backend.tables.values()):
                for item in table.all_items():
                    attrs = item.attrs
                    task = attrs.get("taskId")
                    if task is None or task.value != task_id or "seq" not in attrs or "createdAt" not in attrs:
                        continue
                    committed = datetime.fromisoformat(str(attrs["createdAt"].value).replace("Z", "+00:00"))
                    for seq, event in _item_events(attrs):
                        out.append(
                            {"seq": seq, "committed_at": committed.timestamp(), "executor": "emittedAt" in event}
                        )
            return sorted(out, key=lambda e: e["seq"])
        except RuntimeError:  # the table changed while it was read
            time.sleep(0.05)
    return []


def _item_events(attrs: dict[str, Any]) -> list[tuple[int, str]]:
    """(seq, event JSON) of each event a log item holds."""
    last = int(attrs["seq"].value)
    if "event" in attrs:
        return [(last, str(attrs["event"].value))]
    if "events" in attrs:
        text = str(attrs["events"].value)
    elif "eventsZ" in attrs:
        raw = attrs["eventsZ"].value
        text = zlib.decompress(base64.b64decode(raw) if isinstance(raw, str) else bytes(raw)).decode()
    else:
        return []
    events = json.loads(text)
    first = int(attrs["first"].value)
    return [(first + n, json.dumps(event)) for n, event in enumerate(events)]


# ------------------------------------------------------------------------------------ the run
def measure(base: str, shapes: list[str], activity: Activity, cap: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for shape in shapes:
        if results and not all(r.get("quiet_after", True) for r in results.values()):
            results[shape] = {"skipped": "the stack was not quiet after the previous shape"}
            continue
        results[shape] = run_shape(base, shape, activity, cap)
    return {"shapes": results}


def render(result: dict[str, Any]) -> str:
    out = [
        "| shape | outcome | chunks: stream / stored (in order) | send → terminal s | worker events/s "
        "(commit span) | executor emit/s | hand-over p50 / max ms | stream p50 / p95 / max ms | "
        "worker s (invocations) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in result["shapes"].items():
        if "skipped" in s:
            out.append(f"| {name} | skipped: {s['skipped']} | | | | | | | |")
            continue
        lat, hand = s["stream_latency_ms"], s["executor_handover_ms"]
        outcome = s["final_state"].removeprefix("TASK_STATE_") or "?"
        if s["timed_out"]:
            outcome += f" (cap {s['cap_seconds']:g} s)"
        out.append(
            f"| {name} | {outcome} | {s['chunks_reached_stream']} / {s['chunks_stored']} of {s['chunks']} "
            f"({'yes' if s['chunks_stored_in_order'] else 'NO'}) | {s['seconds_send_to_terminal']} | "
            f"{s['worker_events_per_second']} ({s['commit_span_events_per_second']}) | "
            f"{s['executor_emit_rate_per_second']} | {hand.get('p50', '-')} / {hand.get('max', '-')} | "
            f"{lat.get('p50', '-')} / {lat.get('p95', '-')} / {lat.get('max', '-')} | "
            f"{s['worker_seconds_total']} ({s['worker_invocations']}) |"
        )
    for name, s in result["shapes"].items():
        if s.get("final_status_message"):
            out.append(f"- `{name}` final status message: {s['final_status_message']!r}")
        if s.get("stream_errors"):
            out.append(f"- `{name}` stream errors: {s['stream_errors']}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Streaming task shapes on the local stack")
    parser.add_argument(
        "--shapes",
        default=",".join(DEFAULT_SHAPES),
        help="comma-separated stream_<N>_<burst|paced> (default: %(default)s)",
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="cap per shape, seconds (default 300)")
    parser.add_argument("--workers", type=int, default=2, help="worker pollers (default 2: a 2-core machine)")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    args = parser.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    bad = [s for s in shapes if stream_shape(s) is None]
    if bad or not shapes:
        parser.error(f"unknown shapes {bad}: use stream_<N>_<burst|paced>")

    activity = Activity()
    with contextlib.redirect_stdout(sys.stderr):  # the functions' EMF lines and the ready line
        outcome = measure_on_local_stack(
            lambda base: measure(base, shapes, activity, args.timeout),
            executor=EXECUTOR,
            workers=args.workers,
            resolve_handler=wrap_handlers(activity),
        )
    outcome["meta"] = {
        "date": time.strftime("%Y-%m-%d"),
        "shapes": shapes,
        "timeout_seconds": args.timeout,
        "workers": args.workers,
        "executor": EXECUTOR,
        "definitions": {
            "worker_events_per_second": "executor events committed to the task's log (log createdAt at or after "
            "the executor's first emit) / (last such commit - the executor's first emit)",
            "commit_span_events_per_second": "(those events - 1) / (last commit - first commit)",
            "executor_emit_rate_per_second": "(events handed to the event queue - 1) / (last - first hand-over)",
            "executor_handover_ms": "how long each enqueue_event call took (on main: until committed)",
            "stream_latency_ms": "per chunk: metadata.emittedAt -> arrival at the SSE client of POST /message:stream",
            "seconds_send_to_terminal": "SendStreamingMessage request -> the terminal status at the client",
        },
    }
    if args.json:
        args.json.write_text(json.dumps(outcome, indent=2))
    if "error" in outcome:
        print(json.dumps(outcome, indent=2))
        return 1
    print(render(outcome))
    return 0


if __name__ == "__main__":
    sys.exit(main())
