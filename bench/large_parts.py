"""Large parts on the local stack (issue 14): how long a 5 MiB file artifact takes to produce and
store, to ask for, and to download.

The local stack (moto with the template's table, queues and ``BlobsBucket``, ``A2A_BLOB_BUCKET`` set
as the template sets it; the pollers; uvicorn) runs in this process with the executor ``bigfile N
SEED`` of ``bench/_large_agents.py``: WORKING, one artifact holding one ``raw`` file part of N
random bytes, COMPLETED. The store puts the part in S3 and keeps a pointer in the task. Per run,
from a client's side (one task each, the stack quiet in between):

* **SendMessage (blocking) → COMPLETED**: the blocking ``POST /message:send`` until its response,
  which carries the task COMPLETED (produced and stored; the part as a presigned URL, since its
  base64 is over the 4 MiB response budget). Broken down on the server side: send → the executor
  starts (the API's transaction, the work queue, the worker's claim), the executor making the bytes
  (the benchmark's own cost), the worker's S3 PutObject of the part (botocore hooks on the default
  session, which the store's S3 client uses), the executor's hand-over of the artifact and
  COMPLETED (``add_artifact`` and ``complete`` returning); and the worker invocation's wall time
  (the whole invocation, which goes on after the response: closing the run);
* **GetTask**: ``GET /tasks/{id}``, whose response carries the presigned URL;
* **download**: a plain HTTP GET of that URL (moto serves it; no agent headers), its throughput,
  and whether the bytes are exactly the executor's (regenerated from the seed here).

The first run (cold clients, first imports) is reported apart; the others as median / min / max.

    .venv/bin/python bench/large_parts.py [--runs 5] [--size-mib 5] [--workers 2] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(BENCH)]

from _stack import measure_on_local_stack  # noqa: E402
from aws_calls import Activity, wrap_handlers  # noqa: E402

EXECUTOR = "bench._large_agents:DemoWithFilesExecutor"
HEADERS = {"A2A-Version": "1.0"}
QUIET_SECONDS = 0.5
"""No invocation or request for this long: the stack is done with a run."""
MIB = 1024 * 1024
SEED = 14

STAGES = {
    "send_to_completed_ms": "SendMessage (blocking) → response, task COMPLETED",
    "send_to_executor_start_ms": "↳ send → executor starts (API transaction, work queue, claim)",
    "executor_make_bytes_ms": "↳ executor makes the bytes (random; the bench's own cost)",
    "s3_put_ms": "↳ S3 PutObject of the part (worker)",
    "executor_handover_ms": "↳ executor hands over the artifact and COMPLETED",
    "worker_invocation_ms": "worker invocation, wall time (the whole invocation: it ends after the response)",
    "get_task_ms": "GetTask (response with the presigned URL)",
    "download_ms": "download by the URL",
}


class S3Timer:
    """botocore hooks: the wall time of each S3 PutObject / GetObject call (``before-call`` to
    ``after-call``: signing, the checksum, the request and its response), with its body size."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[dict[str, Any]] = []

    def install(self, session: Any) -> None:
        session.events.register("before-call.s3", self.before)
        session.events.register("after-call.s3", self.after)

    def before(self, context: dict[str, Any], **_: Any) -> None:
        context["large_parts_started"] = time.time()

    def after(self, model: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        started = context.get("large_parts_started")
        if started is None:
            return
        ended = time.time()
        with self.lock:
            self.calls.append(
                {
                    "op": model.name,
                    "started": started,
                    "ended": ended,
                    "ms": round((ended - started) * 1000, 1),
                    "content_length": int(parsed.get("ContentLength") or 0),
                    "error": (parsed.get("Error") or {}).get("Code", ""),
                }
            )

    def between(self, start: float, end: float) -> list[dict[str, Any]]:
        with self.lock:
            return [c for c in self.calls if start <= c["started"] <= end]


def _file_part(task: dict[str, Any]) -> dict[str, Any]:
    from bench._large_agents import FILE_ARTIFACT_ID

    artifact = next((a for a in task.get("artifacts") or [] if a.get("artifactId") == FILE_ARTIFACT_ID), None)
    parts = (artifact or {}).get("parts") or [{}]
    return dict(parts[0])


def one_run(base: str, size: int, activity: Activity, timer: S3Timer, n: int) -> dict[str, Any]:
    from bench._large_agents import executor_times, file_bytes, file_name, file_request

    if not activity.quiet(QUIET_SECONDS, timeout=60):
        raise RuntimeError(f"the stack did not go quiet before run {n}")
    activity.window = f"run{n}"
    expected = file_bytes(size, SEED)
    body = {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": file_request(size, SEED)}]},
        "configuration": {"returnImmediately": False},
    }
    out: dict[str, Any] = {"run": n}
    with httpx.Client(base_url=base, timeout=120, headers=HEADERS) as api:
        sent_at = time.time()
        response = api.post("/message:send", json=body)
        answered_at = time.time()
        response.raise_for_status()
        task = response.json()["task"]
        out["send_to_completed_ms"] = round((answered_at - sent_at) * 1000, 1)
        out["send_state"] = task["status"]["state"]
        out["send_response_bytes"] = len(response.content)
        out["send_part_fields"] = sorted(_file_part(task))
        started = time.perf_counter()
        got = api.get(f"/tasks/{task['id']}")
        out["get_task_ms"] = round((time.perf_counter() - started) * 1000, 1)
        got.raise_for_status()
        final = got.json()
        out["get_task_response_bytes"] = len(got.content)
    out["final_state"] = final["status"]["state"]
    part = _file_part(final)
    out["get_task_part_fields"] = sorted(part)
    out["filename_ok"] = part.get("filename") == file_name(size)
    out["media_type"] = part.get("mediaType", "")
    url = str(part.get("url") or "")
    if url:
        with httpx.Client(timeout=120) as plain:  # as a client would: none of the agent's headers
            started = time.perf_counter()
            downloaded = plain.get(url)
            seconds = time.perf_counter() - started
        downloaded.raise_for_status()
        data = downloaded.content
        out["download_ms"] = round(seconds * 1000, 1)
        out["download_mib_per_s"] = round(len(data) / MIB / seconds, 1) if seconds > 0 else None
        out["part_form"] = "url"
    else:
        import base64

        data = base64.b64decode(part.get("raw") or "")
        out["part_form"] = "raw" if "raw" in part else "missing"
    out["bytes_received"] = len(data)
    out["bytes_exact"] = data == expected
    out["sha256_ok"] = hashlib.sha256(data).hexdigest() == hashlib.sha256(expected).hexdigest()
    activity.quiet(QUIET_SECONDS, timeout=60)
    activity.window = "between"
    # Server side: the executor's steps, the worker's S3 PutObject, the worker's invocation.
    times = executor_times(task["id"])
    if times:
        out["send_to_executor_start_ms"] = round((times["started"] - sent_at) * 1000, 1)
        out["executor_make_bytes_ms"] = round((times["generated"] - times["started"]) * 1000, 1)
        out["executor_handover_ms"] = round((times["completed_returned"] - times["generated"]) * 1000, 1)
    puts = [c for c in timer.between(sent_at, answered_at) if c["op"] == "PutObject"]
    out["s3_puts"] = len(puts)
    if puts:
        out["s3_put_ms"] = round(sum(c["ms"] for c in puts), 1)
    with activity.cond:
        workers = [i for i in activity.invocations if i["window"] == f"run{n}" and i["name"] == "WorkerFunction"]
    out["worker_invocations"] = len(workers)
    if workers:
        out["worker_invocation_ms"] = round(sum(i["ms"] for i in workers), 1)
    return out


def measure(base: str, size: int, runs: int, activity: Activity, timer: S3Timer) -> dict[str, Any]:
    bucket = os.environ.get("A2A_BLOB_BUCKET", "")
    if not bucket:
        raise RuntimeError("the local stack set no A2A_BLOB_BUCKET: large parts would not be stored in S3")
    results = [one_run(base, size, activity, timer, n) for n in range(runs + 1)]
    return {"blob_bucket": bucket, "first_run": results[0], "runs": results[1:]}


def summarise(outcome: dict[str, Any]) -> dict[str, Any]:
    runs = outcome["runs"]
    stages: dict[str, Any] = {}
    for key in [*STAGES, "download_mib_per_s"]:
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            stages[key] = {
                "median": round(statistics.median(values), 1),
                "min": min(values),
                "max": max(values),
                "first_run": outcome["first_run"].get(key),
            }
    every = [outcome["first_run"], *runs]
    return {
        "stages": stages,
        "runs_completed": sum(r["final_state"] == "TASK_STATE_COMPLETED" for r in every),
        "runs_byte_exact": sum(bool(r["bytes_exact"]) for r in every),
        "runs_by_url": sum(r.get("part_form") == "url" for r in every),
        "runs_total": len(every),
    }


def render(result: dict[str, Any]) -> str:
    meta, summary = result["meta"], result["summary"]
    runs = len(result["runs"])
    out = [
        f"Local stack, one {meta['size_bytes']:,}-byte file artifact per task; {runs} runs after a first "
        f"(cold) one; ms, median (min-max) over the {runs} runs.",
        "",
        "| stage | median ms | min-max ms | first run ms |",
        "|---|---|---|---|",
    ]
    for key, label in STAGES.items():
        s = summary["stages"].get(key)
        if s is None:
            out.append(f"| {label} | - | - | - |")
            continue
        out.append(f"| {label} | {s['median']:,.1f} | {s['min']:,.1f}-{s['max']:,.1f} | {s['first_run']} |")
    rate = summary["stages"].get("download_mib_per_s")
    if rate:
        out.append(
            f"| download throughput (MiB/s) | {rate['median']} | {rate['min']}-{rate['max']} | {rate['first_run']} |"
        )
    total = summary["runs_total"]
    out += [
        "",
        f"Tasks COMPLETED: {summary['runs_completed']} of {total}; GetTask part by URL: {summary['runs_by_url']} of "
        f"{total}; downloads byte-exact: {summary['runs_byte_exact']} of {total}. Bucket: "
        f"`{result['blob_bucket']}`.",
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Large parts on the local stack: a file artifact's times")
    parser.add_argument("--runs", type=int, default=5, help="runs after the first (cold) one (default 5)")
    parser.add_argument("--size-mib", type=float, default=5.0, help="file size, MiB (default 5)")
    parser.add_argument("--workers", type=int, default=2, help="worker pollers (default 2: a 2-core machine)")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    args = parser.parse_args(argv)
    size = round(args.size_mib * MIB)
    if args.runs < 1 or size < 1:
        parser.error("--runs and --size-mib must be positive")

    import boto3

    boto3.setup_default_session()
    timer = S3Timer()
    timer.install(boto3.DEFAULT_SESSION)
    activity = Activity()
    with contextlib.redirect_stdout(sys.stderr):  # the functions' EMF lines and the ready line
        outcome = measure_on_local_stack(
            lambda base: measure(base, size, args.runs, activity, timer),
            executor=EXECUTOR,
            workers=args.workers,
            resolve_handler=wrap_handlers(activity),
        )
    if "error" in outcome:
        print(json.dumps(outcome, indent=2))
        return 1
    outcome["summary"] = summarise(outcome)
    outcome["meta"] = {
        "date": time.strftime("%Y-%m-%d"),
        "size_bytes": size,
        "runs": args.runs,
        "workers": args.workers,
        "executor": EXECUTOR,
        "stages": STAGES,
    }
    if args.json:
        args.json.write_text(json.dumps(outcome, indent=2))
    print(render(outcome))
    failed = outcome["summary"]["runs_byte_exact"] != outcome["summary"]["runs_total"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
