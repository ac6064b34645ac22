"""What a streamed answer costs in writes through each framework adapter, beside a hand-written
streaming executor (issue 31: "a 2,000-token answer costs what a hand-written streaming executor
costs").

One task per streamer and pace: the answer is ``--tokens`` tokens of 4 characters, one text delta
each, as a model streams (``bench/_framework_agents.py``), emitted by a hand-written streaming
executor and by each of the five framework adapters on its framework's scripted model, at each
pace of ``--paces`` (0: as fast as the model gives them; 0.01: 100 tokens a second, paced like a
fast hosted model). Two measurements:

* **writes**, on the local stack in this process (moto, the worker, the push dispatcher, the API:
  the path ``bench/aws_calls.py`` measures, with its botocore recorder): each task is sent with a
  returnImmediately SendMessage, the task's window ending when it is terminal and the stack quiet
  (the driver's GetTask polls are not counted); ``--samples`` rounds at pace 0 and
  ``--paced-samples`` at the others, the streamers taking turns in each round, every figure the
  mean per task of a streamer's tasks at that pace. For each: DynamoDB write units
  (index writes included) and read units, write requests and transactions, items written, the
  bytes of the write requests, the worker's commits (its TransactWriteItems), the agent-state
  write (a framework's memory), and the cost per million such tasks at on-demand prices
  (``aws_calls.cost_of_shape``: DynamoDB, SQS, Lambda requests and duration, API Gateway). Tracing
  is off, as on AWS by default. Each streamer runs a short warm-up task first, outside the windows.
* **CPU per token**, in a fresh interpreter per streamer, no store: the executor's ``execute`` on
  an event queue that only keeps the events, the burst pace, ``--cpu-runs`` runs after a warm-up
  one; the median process time (CPU, not wall clock) of a run, and the framework's overhead per
  token: its median minus the hand-written executor's, over the token count. That is the framework
  (its agent loop, its model interface) and the adapter together, what a worker spends beyond the
  hand-written executor for each token.

    .venv/bin/python bench/framework_writes.py [--tokens 2000] [--paces 0,0.01] [--streamer NAME ...]
        [--samples 3] [--paced-samples 1] [--cpu-runs 5] [--no-stack] [--no-cpu]
        [--json bench/results-framework-writes.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import aws_calls as ac  # noqa: E402  (bench/aws_calls.py: the recorder, the units, the prices)

from bench._framework_agents import HANDWRITTEN, STREAMERS, answer_tokens  # noqa: E402

EXECUTOR = "bench._framework_agents:executor"
SEND_LABEL = "SendMessage (returnImmediately, tokens)"
WARM_UP_TOKENS = 20
CAP_SECONDS = 300.0


def window_name(streamer: str, pace: float) -> str:
    return f"{streamer} @ {pace:g}s"


def _order(tokens: int, pace: float) -> str:
    return f"tokens {tokens} {pace:g}"


# Writes: the local stack ----------------------------------------------------------------------


def run_stack(streamers: list[str], tokens: int, paces: list[float], samples: dict[float, int]) -> dict[str, Any]:
    """The local stack in this process (main thread), the tasks sent from another thread: for each
    pace, ``samples[pace]`` rounds of one task per streamer (in turns, so load from elsewhere
    weighs on all alike), each streamer's tasks of a pace in one window."""
    import boto3
    from _stack import measure_on_local_stack

    os.environ.update(
        {
            "A2A_AUTH_MODE": "api-key",
            "A2A_API_KEYS": json.dumps({"bench-key": "bench"}),
            "A2A_TRACING": "off",  # as on AWS by default (the local stack traces to files otherwise)
        }
    )
    boto3.setup_default_session()
    recorder = ac.Recorder()
    recorder.install(boto3.DEFAULT_SESSION)
    activity = ac.Activity()

    def app_factory() -> Any:
        from a2a_serverless.transport.app import create_app

        return ac.LabelMiddleware(create_app(), activity)

    def measure(base: str) -> dict[str, Any]:
        driver = ac.Driver(base, recorder, activity, receiver=None)
        tasks: dict[str, list[dict[str, Any]]] = {window_name(s, p): [] for p in paces for s in streamers}
        try:
            for streamer in streamers:  # first turns (imports, first use) outside the windows
                _send_and_wait(driver, streamer, WARM_UP_TOKENS, 0.0, "/warmup")
            first, first_invocation = len(recorder.snapshot()), len(activity.invocations)
            for pace in paces:
                for _ in range(samples[pace]):
                    for streamer in streamers:
                        tasks[window_name(streamer, pace)].append(_window(driver, streamer, tokens, pace))
        finally:
            driver.close()
        calls = [c for c in recorder.snapshot()[first:] if c["label"] != ac.WAIT_LABEL]
        with activity.cond:
            invocations = [i for i in activity.invocations[first_invocation:] if i["label"] != ac.WAIT_LABEL]
        return {"calls": calls, "invocations": invocations, "tasks": tasks}

    with contextlib.redirect_stdout(sys.stderr):  # the functions' EMF lines and the ready line
        outcome = measure_on_local_stack(
            measure, executor=EXECUTOR, workers=2, app_factory=app_factory, resolve_handler=ac.wrap_handlers(activity)
        )
    if "error" in outcome:
        raise RuntimeError(outcome["error"])
    return outcome


def _window(driver: ac.Driver, streamer: str, tokens: int, pace: float) -> dict[str, Any]:
    name = window_name(streamer, pace)
    if not driver.activity.quiet(driver.quiet_seconds):
        raise RuntimeError(f"the stack did not go quiet before window {name}")
    driver.recorder.window = driver.activity.window = name
    try:
        info = _send_and_wait(driver, streamer, tokens, pace, "/" + streamer)
        info["quiet_after"] = driver.activity.quiet(driver.quiet_seconds, timeout=60)
    finally:
        driver.recorder.window = driver.activity.window = "between"
    return info


def _send_and_wait(driver: ac.Driver, streamer: str, tokens: int, pace: float, tenant: str) -> dict[str, Any]:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": _order(tokens, pace)}],
        "metadata": {"streamer": streamer},
    }
    body = {"message": message, "configuration": {"returnImmediately": True}}
    started = time.monotonic()
    task = driver.call(SEND_LABEL, "POST", f"{tenant}/message:send", json=body)["task"]
    while task["status"]["state"] not in ac.TERMINAL and time.monotonic() - started < CAP_SECONDS:
        time.sleep(ac.WAIT_POLL_SECONDS)
        task = driver.call(ac.WAIT_LABEL, "GET", f"{tenant}/tasks/{task['id']}")
    return {"task_id": task["id"], "seconds_to_terminal": round(time.monotonic() - started, 2), **outcome(task, tokens)}


def outcome(task: dict[str, Any], tokens: int) -> dict[str, Any]:
    """The task's state and whether its one answer artifact holds the tokens, in order."""
    artifacts = task.get("artifacts") or []
    text = "".join(p.get("text", "") for a in artifacts for p in a.get("parts", []))
    return {
        "final_state": task["status"]["state"],
        "artifacts": len(artifacts),
        "parts": sum(len(a.get("parts", [])) for a in artifacts),
        "answer_exact": text == "".join(answer_tokens(tokens)),
    }


def figures(raw: dict[str, Any], paces: list[float], streamers: list[str]) -> dict[str, Any]:
    """Per window, per task (the mean of its tasks): the DynamoDB writes and the cost per million
    such tasks."""
    facts = ac.template_facts()
    windows = [window_name(s, p) for p in paces for s in streamers]
    runs = {name: len(raw["tasks"][name]) for name in windows}
    for name in windows:
        ac.SHAPES[name] = f"one {name.split(' @ ')[0]} task streaming the answer token by token ({name})"
    analysed = ac.analyse(
        {
            "calls": raw["calls"],
            "invocations": raw["invocations"],
            "notes": {},
            "window_samples": runs,
        },
        1,
        facts,
        windows,
    )
    out: dict[str, Any] = {}
    for name in windows:
        n = runs[name]
        calls = [c for c in raw["calls"] if c["window"] == name and c["service"] == "dynamodb"]
        units = ac._units(calls)
        written = [s for c in calls for s in c.get("sizes", [])]
        worker = [c for c in calls if c["component"] == "WorkerFunction"]
        cost = analysed["shapes"][name]
        tasks = raw["tasks"][name]
        out[name] = {
            "tasks": n,
            "final_states": dict(Counter(t["final_state"] for t in tasks)),
            "answers_exact": sum(t["answer_exact"] and t["artifacts"] == 1 for t in tasks),
            "seconds_to_terminal": [t["seconds_to_terminal"] for t in tasks],
            "wru": round((units["wru"] + units["wru_gsi"]) / n, 2),
            "wru_of_which_gsi": round(units["wru_gsi"] / n, 2),
            "rru": round(units["rru"] / n, 2),
            "write_requests": round(sum(k for op, k in units["calls"].items() if op[9:] in ac.WRITE_OPS) / n, 2),
            "transactions": round(units["calls"].get("dynamodb.TransactWriteItems", 0) / n, 2),
            "items_written": round(len(written) / n, 2),
            "items_written_by_kind": {kind: round(k / n, 2) for kind, k in Counter(s["item"] for s in written).items()},
            "write_request_bytes": round(units["dynamodb_write_request_bytes"] / n),
            "commits": round(sum(c["op"] == "TransactWriteItems" for c in worker) / n, 2),
            "agent_state_wru": sum(
                c.get("wru", 0) for c in calls if any(s["item"] == "STATE" for s in c.get("sizes", []))
            )
            / n,
            "dynamodb_calls": {k.split(".", 1)[1]: round(v / n, 2) for k, v in units["calls"].items()},
            "errors": units["errors"],
            "per_task": tasks,
            "units_per_task": cost["units_per_task"],
            "per_million_tasks_usd": cost["per_million_tasks_usd"],
            "total_per_million_tasks_usd": cost["total_per_million_tasks_usd"],
        }
    return {"windows": out, "measure_errors": analysed["measure_errors"], "template": facts}


# CPU per token: a fresh interpreter per streamer ----------------------------------------------


class _Kept:
    """An event queue that keeps the events (no store: the executor's own CPU)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_event(self, event: Any) -> None:
        self.events.append(event)


def _probe(name: str, tokens: int, runs: int) -> dict[str, Any]:
    from a2a_serverless.adapters.memory_agent_state import MemoryAgentStateStore
    from a2a_serverless.execution import RequestContext
    from a2a_serverless.execution.agent_state import AgentState
    from a2a_serverless.models import Message, Part, Role
    from a2a_serverless.ports import Scope
    from bench._framework_agents import streamer

    executor = streamer(name)
    state = AgentState(MemoryAgentStateStore(), None, Scope("", "bench"))
    expected = "".join(answer_tokens(tokens))
    seconds: list[float] = []
    with asyncio.Runner() as runner:
        for run in range(runs + 1):  # the first: imports and first use, not counted
            text = Part(text=_order(tokens, 0.0))
            message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[text])
            context = RequestContext(str(uuid.uuid4()), str(uuid.uuid4()), message=message, state=state)
            queue = _Kept()
            started = time.process_time()
            runner.run(executor.execute(context, queue))
            spent = time.process_time() - started
            chunks = [e for e in queue.events if getattr(e, "artifact", None) is not None]
            said = "".join(p.text or "" for e in chunks for p in e.artifact.parts)
            if said != expected or len(chunks) != tokens or not chunks[-1].last_chunk:
                raise RuntimeError(f"{name}: {len(chunks)} chunks, answer exact: {said == expected}")
            if run:
                seconds.append(spent)
    return {"cpu_ms_median": statistics.median(seconds) * 1000, "cpu_ms": [round(s * 1000, 1) for s in seconds]}


def cpu_per_token(streamers: list[str], tokens: int, runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in streamers:
        out = subprocess.run(
            [sys.executable, __file__, "--probe", name, "--tokens", str(tokens), "--cpu-runs", str(runs)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if out.returncode:
            raise RuntimeError(f"the CPU probe of {name} failed:\n{out.stderr[-3000:]}")
        results[name] = json.loads(out.stdout.splitlines()[-1])
    base = results.get(HANDWRITTEN, {}).get("cpu_ms_median")
    for result in results.values():
        if base is not None:
            result["overhead_us_per_token"] = round((result["cpu_ms_median"] - base) * 1000 / tokens, 1)
        result["cpu_ms_median"] = round(result["cpu_ms_median"], 1)
    return results


# Report ---------------------------------------------------------------------------------------


_COLUMNS: list[tuple[str, Any]] = [
    ("tasks: completed, exact", lambda w: _outcome(w)),
    ("WRU (GSI)", lambda w: f"{w['wru']:,.0f} ({w['wru_of_which_gsi']:,.0f})"),
    ("RRU", lambda w: f"{w['rru']:,.1f}"),
    ("write requests (transactions)", lambda w: f"{w['write_requests']:,} ({w['transactions']:,})"),
    ("items written", lambda w: f"{w['items_written']:,}"),
    ("bytes written", lambda w: f"{w['write_request_bytes']:,}"),
    ("commits", lambda w: f"{w['commits']:,}"),
    ("WRU / commits", lambda w: f"{w['wru'] / w['commits']:.2f}" if w["commits"] else "-"),
    ("agent state WRU", lambda w: f"{w['agent_state_wru']:g}"),
    ("DynamoDB $/M tasks", lambda w: f"{w['per_million_tasks_usd']['dynamodb']:,.2f}"),
    ("total $/M tasks", lambda w: f"{w['total_per_million_tasks_usd']:,.2f}"),
    ("seconds (median)", lambda w: f"{statistics.median(w['seconds_to_terminal']):.1f}"),
]


def _outcome(w: dict[str, Any]) -> str:
    completed = w["final_states"].get(ac.COMPLETED, 0)
    return f"{w['tasks']}: {completed}, {w['answers_exact']}"


def render(result: dict[str, Any]) -> str:
    lines = [f"{result['tokens']} tokens of 4 characters; load average {result['load']} -> {result['load_after']}"]
    windows = result.get("writes", {}).get("windows", {})
    if windows:
        headers = ["streamer", "pace s", "WRU of hand-written", *(h for h, _ in _COLUMNS)]
        lines += ["", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        for pace in result["paces"]:
            base = windows.get(window_name(HANDWRITTEN, pace))
            for streamer in result["streamers"]:
                w = windows[window_name(streamer, pace)]
                ratio = f"{w['wru'] / base['wru']:.2f}" if base and base["wru"] else "-"
                cells = [streamer, f"{pace:g}", ratio, *(cell(w) for _, cell in _COLUMNS)]
                lines.append("| " + " | ".join(cells) + " |")
    cpu = result.get("cpu", {})
    if cpu:
        lines += ["", "| streamer | CPU ms per answer (median) | overhead per token, µs CPU |", "|---|---|---|"]
        for name, c in cpu.items():
            lines.append(f"| {name} | {c['cpu_ms_median']:,.1f} | {c.get('overhead_us_per_token', '-')} |")
    errors = result.get("writes", {}).get("measure_errors")
    if errors:
        lines.append(f"measure errors: {errors}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--paces", default="0,0.01", help="seconds between two tokens, comma-separated (0: burst)")
    parser.add_argument("--streamer", action="append", choices=STREAMERS, help="default: all six")
    parser.add_argument("--samples", type=int, default=3, help="tasks per streamer at pace 0 (default 3)")
    parser.add_argument("--paced-samples", type=int, default=1, help="tasks per streamer at the other paces (1)")
    parser.add_argument("--cpu-runs", type=int, default=5)
    parser.add_argument("--no-stack", action="store_true", help="CPU per token only")
    parser.add_argument("--no-cpu", action="store_true", help="writes only")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--probe", choices=STREAMERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(_probe(args.probe, args.tokens, args.cpu_runs)))
        return 0
    streamers: list[str] = args.streamer or list(STREAMERS)
    if HANDWRITTEN not in streamers:
        streamers.insert(0, HANDWRITTEN)  # the reference every figure is read against
    paces = [float(p) for p in args.paces.split(",")]
    result: dict[str, Any] = {
        "tokens": args.tokens,
        "paces": paces,
        "streamers": streamers,
        "date": time.strftime("%Y-%m-%d"),
        "python": sys.version.split()[0],
        "load": _load(),
        "prices_checked": ac.PRICES_CHECKED,
    }
    if not args.no_cpu:
        result["cpu"] = cpu_per_token(streamers, args.tokens, args.cpu_runs)
    if not args.no_stack:
        samples = {pace: args.samples if pace == 0 else args.paced_samples for pace in paces}
        raw = run_stack(streamers, args.tokens, paces, samples)
        result["writes"] = figures(raw, paces, streamers)
    result["load_after"] = _load()
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 1 if result.get("writes", {}).get("measure_errors") else 0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
