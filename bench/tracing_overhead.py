"""What tracing costs per request, per event and per task, with it off and on (issue 32).

Each mode runs in a fresh interpreter (the tracing switch, ``A2A_TRACING``, is read once per
process): ``off``; ``memory`` (spans made and kept in the process: the cost of making them);
``file`` (what the local stack does: JSON lines in a directory); ``otlp`` (the OpenTelemetry SDK's
batch processor and OTLP/HTTP exporter, as on AWS, sending to a receiver on 127.0.0.1 that answers
200). In each, on the in-memory store, in process (no network but the OTLP receiver):

* **GetTask** and **SendMessage** (``returnImmediately``, the work item only recorded): the CPU
  time of one request through the whole app (``time.process_time``; best of ``--rounds``, per
  request), so the span of the call, the enqueue's span and the traceparent in the work item;
* **a run** of the work item: ``hello`` (WORKING, an artifact, COMPLETED) and ``chunks 800 0``
  (800 chunks as fast as the queue takes them), CPU time per run and per event (the run's span, the
  agent's, a span per commit and the traceparent on each log item);
* **spans per task** (``memory``): how many spans a hello task and an 800-chunk task make here (the
  call, the enqueue, the run, the agent, the commits; on the local stack or AWS the stream's
  dispatch and each delivery add theirs: ``docs/tracing.md``).

CPU time, not wall time, so a busy machine moves the figures less; still, compare modes of one run.

    .venv/bin/python bench/tracing_overhead.py [--modes off,memory,file,otlp] [--rounds 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODES = ("off", "memory", "file", "otlp")
REQUESTS = 200
HELLO_RUNS = 40
CHUNK_RUNS = 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_measure(args.child, args.rounds)))
        return 0
    results = {mode: _in_child(mode, args.rounds) for mode in args.modes.split(",")}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(_render(results))
    return 0


def _in_child(mode: str, rounds: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "OTEL_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--rounds", str(rounds)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"mode {mode} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- in the child


def _measure(mode: str, rounds: int) -> dict[str, Any]:
    with _tracing(mode):
        return asyncio.run(_measure_async(mode, rounds))


@contextlib.contextmanager
def _tracing(mode: str) -> Iterator[None]:
    if mode == "off":
        os.environ["A2A_TRACING"] = "off"
        yield
        return
    os.environ["A2A_TRACING"] = mode
    with contextlib.ExitStack() as stack:
        if mode == "file":
            os.environ["A2A_TRACING_DIR"] = stack.enter_context(tempfile.TemporaryDirectory())
        if mode == "otlp":
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = stack.enter_context(_otlp_receiver())
        yield
        from a2a_serverless.telemetry import _sdk

        _sdk.flush()


@contextlib.contextmanager
def _otlp_receiver() -> Iterator[str]:
    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


async def _measure_async(mode: str, rounds: int) -> dict[str, Any]:
    import httpx

    from a2a_serverless.adapters.memory_store import MemoryTaskStore
    from a2a_serverless.config import Settings
    from a2a_serverless.execution.worker import process_work_item
    from a2a_serverless.ports import WorkItem
    from a2a_serverless.transport.app import create_app
    from a2a_serverless.wiring import build_runtime

    class Recorded:
        def __init__(self) -> None:
            self.items: list[WorkItem] = []

        def enqueue(self, item: WorkItem) -> None:
            self.items.append(item)

    queue = Recorded()
    settings = Settings(store="memory", executor="bench._stream_agents:DemoWithChunksExecutor")
    runtime = build_runtime(settings, store=MemoryTaskStore(), queue=queue)
    transport = httpx.ASGITransport(app=create_app(runtime))
    headers = {"A2A-Version": "1.0"}

    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:

        async def send(text: str) -> str:
            message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
            params = {"message": message, "configuration": {"returnImmediately": True}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
            response = await http.post("/", json=body, headers=headers)
            task_id: str = response.json()["result"]["task"]["id"]
            return task_id

        task_id = await send("hello")

        async def get_task() -> None:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
            response = await http.post("/", json=body, headers=headers)
            assert "result" in response.json()

        async def send_hello() -> None:
            await send("hello")

        for _ in range(20):  # warm: imports, the exporter's first batch
            await get_task()
            await send_hello()
        get_ms = await _best(rounds, REQUESTS, get_task)
        send_ms = await _best(rounds, REQUESTS, send_hello)

        def run(text: str) -> Callable[[], Any]:
            async def go() -> None:
                await send(text)
                await asyncio.to_thread(process_work_item, runtime, queue.items[-1])

            return go

        spans_before = _span_count(mode)
        hello_run_ms = await _best(rounds, HELLO_RUNS, run("hello"))
        hello_spans = _per_task(mode, spans_before, rounds * HELLO_RUNS)
        spans_before = _span_count(mode)
        chunks_run_ms = await _best(rounds, CHUNK_RUNS, run("chunks 800 0"))
        chunk_spans = _per_task(mode, spans_before, rounds * CHUNK_RUNS)

    return {
        "mode": mode,
        "cpu_ms_per_request": {"GetTask": get_ms, "SendMessage": send_ms},
        "cpu_ms_per_run": {"hello": hello_run_ms, "chunks_800": chunks_run_ms},
        "cpu_us_per_event_800_chunks": round(chunks_run_ms * 1000 / 802, 1),
        "spans_per_task": {"hello": hello_spans, "chunks_800": chunk_spans},
    }


async def _best(rounds: int, count: int, call: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(count):
            await call()
        best = min(best, (time.process_time() - start) / count)
    return round(best * 1000, 3)


def _span_count(mode: str) -> int:
    if mode != "memory":
        return 0
    from a2a_serverless.telemetry import _sdk

    return len(_sdk.finished_spans())


def _per_task(mode: str, before: int, tasks: int) -> float | None:
    if mode != "memory":
        return None
    return round((_span_count(mode) - before) / tasks, 1)


# --------------------------------------------------------------------------- the table


def _render(results: dict[str, dict[str, Any]]) -> str:
    rows = [
        "| mode | GetTask CPU ms | SendMessage CPU ms | hello task (send + run) CPU ms | 800-chunk task CPU ms | "
        "per event µs | spans per hello / 800-chunk task |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, r in results.items():
        spans = r["spans_per_task"]
        rows.append(
            f"| {mode} | {r['cpu_ms_per_request']['GetTask']} | {r['cpu_ms_per_request']['SendMessage']} | "
            f"{r['cpu_ms_per_run']['hello']} | {r['cpu_ms_per_run']['chunks_800']} | "
            f"{r['cpu_us_per_event_800_chunks']} | "
            + (f"{spans['hello']} / {spans['chunks_800']}" if spans["hello"] is not None else "")
            + " |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
