"""Delegated tasks, queue mode against durable mode: Lambda GB-seconds and $ per million tasks for a
two-hop chain whose remote works for a minute (issue 33).

The chain: a client sends a task to our agent A, whose executor delegates it to our agent B, whose
executor delegates it to the a2a-sdk 1.x reference agent (``bench/_reference_server.py``, with push
notifications), which ticks ``--ticks`` times over ``--remote-seconds`` (default 6 ticks over 60 s).
A and B are ``tests/delegation/relay_agents.py``'s delegating agents; each agent is served on
127.0.0.1 over HTTP (uvicorn), on the memory store, in this process.

* Queue mode (``DelegatingAgent``): each agent's worker runs the executor on a thread, as the SQS
  worker would run one work item; the worker holds the run while the remote works (A streams B's
  events, B streams the reference's). Measured: each work item's wall time (one WorkerFunction
  invocation each).
* Durable mode (``DurableDelegatingAgent``, ``durable_steps``): each agent is the durable worker on
  the official local runner of durable executions (``LocalDurableWorker``, real-time waits), as in
  ``tests/delegation/test_durable_delegation.py``. Measured: each DurableWorkerFunction invocation
  (count and wall time, through the worker's ``around_invocation`` hook) and each execution's
  durable operations, by type, from the local runner's record of the execution (every operation it
  checkpointed, nested ones included: child contexts, steps, waits, callbacks; the execution's own
  start is not in that record, and is not counted). B is pushed to by the reference agent (its
  pushes reach B's push receiver); B itself sends no pushes here (the memory store has no push
  dispatcher, so B's card says it sends none), so A polls B with durable waits (2 s, 4 s, 8 s ...).
* Both modes: every HTTP request to A's and B's API (the client's SendMessage, A's calls to B,
  the reference's pushes to B), its wall time (a stream's: until its last byte) and the template's
  function that serves its route on AWS (JSON-RPC, streams, GetTask and the push receiver:
  GatewayFunction; the card: AgentCardFunction; REST SendMessage: SendMessageFunction). The client
  waits for A's task by reading A's store in-process (no GetTask polls counted).

Priced at ``aws_calls``' prices (Lambda requests, arm64 GB-seconds at each function's MemorySize in
template.yaml, API Gateway REST requests, durable operations at $8.00 per million). Not counted:
DynamoDB, SQS and the authorizer (measured per operation by ``bench/aws_calls.py``), durable data
written and retained (price not found), and the reference agent's own compute: it works for the
same time in both modes (stated apart, at WorkerFunction's memory, as if it were a Lambda agent).

    .venv/bin/python bench/delegation_cost.py [--remote-seconds 60] [--ticks 6] [--tasks 3] [--json PATH]

Prints a markdown table; ``--json`` (default ``bench/results-delegation-cost.json``) writes the raw
result. Importing this module starts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
DEFAULT_JSON = BENCH / "results-delegation-cost.json"
HEADERS = {"A2A-Version": "1.0"}
WAIT_SECONDS = 600.0
"""Hang guard for a chain to finish, beyond the remote's own time."""
PRICED = ("WorkerFunction", "DurableWorkerFunction", "GatewayFunction", "AgentCardFunction", "SendMessageFunction")
"""The template's functions that run here (their MemorySize is in the result)."""


# --------------------------------------------------------------------------------------- metering
@dataclass
class Meter:
    """What ran for one agent: worker invocations (function, seconds), API requests (function,
    method, path, seconds) and the durable operations of its executions (by type)."""

    invocations: list[tuple[str, float]] = field(default_factory=list)
    requests: list[tuple[str, str, str, float]] = field(default_factory=list)
    operations: Counter[str] = field(default_factory=Counter)
    executions: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @contextlib.contextmanager
    def invocation(self, function: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            with self.lock:
                self.invocations.append((function, time.monotonic() - started))


def api_function(method: str, path: str) -> str:
    """The template's function that serves ``method path`` on AWS (template.yaml's Api events)."""
    if path.endswith("/.well-known/agent-card.json"):
        return "AgentCardFunction"
    if method == "POST" and path.endswith("message:send"):
        return "SendMessageFunction"
    return "GatewayFunction"  # JSON-RPC at POST /, streams, GetTask, CancelTask, the push receiver


class ApiMeter:
    """ASGI middleware: each HTTP request's wall time, until the response's last byte."""

    def __init__(self, app: Any, meter: Meter) -> None:
        self.app = app
        self.meter = meter

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            method, path = scope["method"], scope["path"]
            with self.meter.lock:
                self.meter.requests.append((api_function(method, path), method, path, time.monotonic() - started))


class _Later:
    """An ASGI app made once its URL is known (a durable agent's public URL is its own)."""

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


class MeteredQueue:
    """Queue mode's worker: each work item runs at once on a thread, as one WorkerFunction
    invocation would (``process_work_item``, the SQS handler's core), timed."""

    def __init__(self, runtime: Callable[[], Any], meter: Meter) -> None:
        self._runtime = runtime
        self._meter = meter
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="bench-worker")
        self.pending = 0
        self._lock = threading.Lock()

    def enqueue(self, item: Any) -> None:
        with self._lock:
            self.pending += 1
        self._pool.submit(self._process, item)

    def _process(self, item: Any) -> None:
        from a2a_serverless.execution.worker import process_work_item

        try:
            with self._meter.invocation("WorkerFunction"):
                process_work_item(self._runtime(), item)
        finally:
            with self._lock:
                self.pending -= 1

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)


# ----------------------------------------------------------------------------------------- agents
@dataclass
class Served:
    url: str
    store: Any
    meter: Meter
    idle: Callable[[], bool]
    """No worker invocation runs."""
    worker: Any = None
    """The durable worker (durable mode)."""


@contextlib.contextmanager
def our_agent(mode: str, *, pushes: bool) -> Iterator[Served]:
    """A delegating agent of ours in ``mode``, served on 127.0.0.1, metered."""
    from a2a_serverless.adapters.memory_store import MemoryTaskStore
    from a2a_serverless.config import Settings
    from a2a_serverless.transport.app import create_app
    from a2a_serverless.wiring import build_runtime
    from testkit.served import served

    meter, later = Meter(), _Later()
    with served(ApiMeter(later, meter)) as url:
        store = MemoryTaskStore()
        common: dict[str, Any] = {"store": "memory", "public_url": url, "push_notifications": pushes}
        if mode == "queue":
            settings = Settings(executor="relay_agents:DelegatingAgent", poll_interval_seconds=0.01, **common)
            holder: list[Any] = []
            queue = MeteredQueue(lambda: holder[0], meter)
            holder.append(build_runtime(settings, store=store, queue=queue))
            later.app = create_app(holder[0])
            try:
                yield Served(url, store, meter, lambda: queue.pending == 0)
            finally:
                queue.shutdown()
            return
        from a2a_serverless.devstack.durable import DURABLE_WORKER, DurableLimits, LocalDurableWorker

        settings = Settings(
            executor="relay_agents:DurableDelegatingAgent",
            execution_mode="durable",
            poll_interval_seconds=0.01,
            **common,
        )
        worker = LocalDurableWorker(
            settings,
            limits=DurableLimits(invocation_timeout=900, execution_timeout=86400),
            store=store,
            around_invocation=lambda: meter.invocation(DURABLE_WORKER),
        )
        try:
            later.app = create_app(build_runtime(settings, store=store, durable=worker.runs))
            yield Served(url, store, meter, lambda: worker.running == 0, worker)
        finally:
            worker.close()


def count_operations(agent: Served) -> None:
    """Every execution of ``agent``'s durable worker (one per task), its operations by type, from
    the local runner."""
    from a2a_serverless.ports import Scope, TaskQuery

    tasks = agent.store.list_tasks(Scope("", "anonymous"), TaskQuery(page_size=100)).tasks
    for task in tasks:
        arn = agent.worker.runs.execution_arn(task.id)
        if arn is None:
            continue
        result = agent.worker.runs.runner.wait_for_result(arn, timeout=60)
        agent.meter.executions += 1
        agent.meter.operations.update(op.operation_type.value for op in _walk(result.operations))


def _walk(operations: list[Any]) -> Iterator[Any]:
    """The operations and those nested in them (a child context's steps, waits and callbacks)."""
    for op in operations:
        yield op
        yield from _walk(getattr(op, "child_operations", None) or [])


# ---------------------------------------------------------------------------------------- driving
def send(url: str, text: str) -> str:
    import httpx

    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message, "configuration": {"returnImmediately": True}},
    }
    answer = httpx.post(url + "/", json=body, headers=HEADERS, timeout=60).json()
    return str(answer["result"]["task"]["id"])


def run_mode(mode: str, remote_seconds: float, ticks: int, tasks: int) -> dict[str, Any]:
    """``tasks`` chains at once, client -> A -> B -> reference, in ``mode``; what ran, per agent."""
    from a2a_serverless.ports import Scope
    from testkit.reference_agent import reference_agent

    chore = f"tick {ticks} {remote_seconds / ticks:g}"
    limit = remote_seconds * 3 + 120  # each hop's delegation limit: never the one that ends it
    with (
        reference_agent(push=True) as reference,
        our_agent(mode, pushes=False) as b,
        our_agent(mode, pushes=False) as a,
    ):
        to_b = {"to": reference + "/.well-known/agent-card.json", "send": chore, "limit": limit}
        orders = {"to": b.url + "/.well-known/agent-card.json", "send": json.dumps(to_b), "limit": limit}
        started = time.monotonic()
        ids = [send(a.url, json.dumps(orders)) for _ in range(tasks)]
        states: dict[str, str] = {}
        deadline = started + remote_seconds + WAIT_SECONDS
        while len(states) < len(ids) and time.monotonic() < deadline:
            for task_id in ids:
                record = a.store.get_task(Scope("", "anonymous"), task_id)
                if record is not None and record.state.is_terminal:
                    states[task_id] = record.state.name
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        while not (a.idle() and b.idle()) and time.monotonic() < deadline:
            time.sleep(0.05)
        artifacts = [
            len(record.task.artifacts[0].parts) if record and record.task.artifacts else 0
            for record in (a.store.get_task(Scope("", "anonymous"), task_id) for task_id in ids)
        ]
        if mode == "durable":
            count_operations(a)
            count_operations(b)
    return {
        "mode": mode,
        "tasks": tasks,
        "states": sorted(states.values()) + ["UNFINISHED"] * (len(ids) - len(states)),
        "artifact_parts": artifacts,
        "chain_seconds": round(elapsed, 2),
        "agents": {"A": _meter_json(a.meter), "B": _meter_json(b.meter)},
    }


def _meter_json(meter: Meter) -> dict[str, Any]:
    return {
        "invocations": [[f, round(s, 4)] for f, s in meter.invocations],
        "requests": [[f, m, p, round(s, 4)] for f, m, p, s in meter.requests],
        "durable_operations": dict(meter.operations),
        "executions": meter.executions,
    }


# ---------------------------------------------------------------------------------------- pricing
@dataclass
class PerTask:
    """One delegated task's units, A and B together."""

    worker_invocations: float = 0.0
    worker_seconds: float = 0.0
    worker_gb_seconds: float = 0.0
    api_requests: float = 0.0
    api_seconds: float = 0.0
    api_gb_seconds: float = 0.0
    durable_operations: float = 0.0
    durable_operations_by_type: dict[str, float] = field(default_factory=dict)
    requests_by_kind: dict[str, float] = field(default_factory=dict)


def per_task(raw: dict[str, Any], memory: dict[str, int]) -> PerTask:
    out, n = PerTask(), raw["tasks"]
    kinds: Counter[str] = Counter()
    ops: Counter[str] = Counter()
    for agent, metered in raw["agents"].items():
        for function, seconds in metered["invocations"]:
            out.worker_invocations += 1 / n
            out.worker_seconds += seconds / n
            out.worker_gb_seconds += memory[function] / 1024 * seconds / n
        for function, method, path, seconds in metered["requests"]:
            out.api_requests += 1 / n
            out.api_seconds += seconds / n
            out.api_gb_seconds += memory[function] / 1024 * seconds / n
            kinds[f"{agent} {function} {method} {_route(path)}"] += 1
        ops.update(metered["durable_operations"])
    out.durable_operations = sum(ops.values()) / n
    out.durable_operations_by_type = {k: round(v / n, 2) for k, v in sorted(ops.items())}
    out.requests_by_kind = {k: round(v / n, 2) for k, v in sorted(kinds.items())}
    return out


def _route(path: str) -> str:
    if path.startswith("/_a2a/delegations/"):
        return "/_a2a/delegations/{ref} (push)"
    return path


def costs(units: PerTask) -> dict[str, float]:
    """$ per million tasks."""
    import aws_calls as p

    million = 1e6
    return {
        "worker_requests": units.worker_invocations * p.LAMBDA_REQUEST * million,
        "worker_gb_seconds": units.worker_gb_seconds * p.LAMBDA_GB_SECOND_ARM64 * million,
        "api_lambda_requests": units.api_requests * p.LAMBDA_REQUEST * million,
        "api_gb_seconds": units.api_gb_seconds * p.LAMBDA_GB_SECOND_ARM64 * million,
        "api_gateway_requests": units.api_requests * p.API_GATEWAY_REST_REQUEST * million,
        "durable_operations": units.durable_operations * p.LAMBDA_DURABLE_OPERATION * million,
    }


def result(remote_seconds: float, ticks: int, tasks: int) -> dict[str, Any]:
    import aws_calls as p

    facts = p.template_facts()["functions"]
    memory = {name: int(f["memory_mb"]) for name, f in facts.items()}
    modes: dict[str, Any] = {}
    for mode in ("queue", "durable"):
        print(f"{mode} mode: {tasks} chain(s), remote {remote_seconds:g} s ...", file=sys.stderr)
        raw = run_mode(mode, remote_seconds, ticks, tasks)
        units = per_task(raw, memory)
        usd = costs(units)
        modes[mode] = {
            "raw": raw,
            "per_task": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(units).items()},
            "per_million_tasks_usd": {k: round(v, 2) for k, v in usd.items()},
            "total_per_million_tasks_usd": round(sum(usd.values()), 2),
        }
    remote_gb_s = memory["WorkerFunction"] / 1024 * remote_seconds
    return {
        "meta": {
            "date": time.strftime("%Y-%m-%d"),
            "remote_seconds": remote_seconds,
            "ticks": ticks,
            "tasks_per_mode": tasks,
            "memory_mb": {k: memory[k] for k in PRICED},
            "prices_checked": p.PRICES_CHECKED,
            "prices": {
                "Lambda request": p.LAMBDA_REQUEST,
                "Lambda GB-second (arm64)": p.LAMBDA_GB_SECOND_ARM64,
                "API Gateway REST request": p.API_GATEWAY_REST_REQUEST,
                "Lambda durable operation": p.LAMBDA_DURABLE_OPERATION,
            },
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
        },
        "modes": modes,
        "remote_same_in_both_modes": {
            "seconds": remote_seconds,
            "gb_seconds_at_worker_memory": round(remote_gb_s, 2),
            "per_million_tasks_usd_if_a_lambda_worker": round(
                (remote_gb_s * p.LAMBDA_GB_SECOND_ARM64 + p.LAMBDA_REQUEST) * 1e6, 2
            ),
        },
    }


def render(data: dict[str, Any]) -> str:
    meta, queue, durable = data["meta"], data["modes"]["queue"], data["modes"]["durable"]
    lines = [
        f"### A two-hop delegated task, remote {meta['remote_seconds']:g} s: queue and durable mode ({meta['date']})",
        "",
        f"Per task (A and B together; {meta['tasks_per_mode']} chains at once per mode; outcomes: "
        f"queue {', '.join(queue['raw']['states'])}, durable {', '.join(durable['raw']['states'])}; "
        f"chain wall time queue {queue['raw']['chain_seconds']} s, durable {durable['raw']['chain_seconds']} s)",
        "",
        "| per task | queue | durable |",
        "|---|---:|---:|",
    ]
    rows = [
        ("worker invocations", "worker_invocations"),
        ("worker seconds", "worker_seconds"),
        ("worker GB-s", "worker_gb_seconds"),
        ("API requests (to A and B)", "api_requests"),
        ("API seconds", "api_seconds"),
        ("API GB-s", "api_gb_seconds"),
        ("durable operations", "durable_operations"),
    ]
    for label, key in rows:
        lines.append(f"| {label} | {queue['per_task'][key]:g} | {durable['per_task'][key]:g} |")
    gb = [m["per_task"]["worker_gb_seconds"] + m["per_task"]["api_gb_seconds"] for m in (queue, durable)]
    lines.append(f"| **Lambda GB-s, all** | **{gb[0]:.2f}** | **{gb[1]:.2f}** |")
    lines += ["", "| $ per million tasks | queue | durable |", "|---|---:|---:|"]
    for key in queue["per_million_tasks_usd"]:
        q, d = queue["per_million_tasks_usd"][key], durable["per_million_tasks_usd"][key]
        lines.append(f"| {key.replace('_', ' ')} | {q:,.2f} | {d:,.2f} |")
    totals = [m["total_per_million_tasks_usd"] for m in (queue, durable)]
    lines.append(f"| **total** | **{totals[0]:,.2f}** | **{totals[1]:,.2f}** |")
    remote = data["remote_same_in_both_modes"]
    lines += [
        "",
        f"Durable operations by type, per task: {durable['per_task']['durable_operations_by_type']}.",
        f"The remote's own compute, the same in both modes and not above: {remote['seconds']:g} s, "
        f"{remote['gb_seconds_at_worker_memory']} GB-s per task if it were a Lambda worker at "
        f"{meta['memory_mb']['WorkerFunction']} MB "
        f"(${remote['per_million_tasks_usd_if_a_lambda_worker']:,.2f} per million).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--remote-seconds", type=float, default=60.0, help="how long the remote agent works")
    parser.add_argument("--ticks", type=int, default=6, help="the remote's artifact chunks over that time")
    parser.add_argument("--tasks", type=int, default=3, help="chains run at once per mode")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the raw result")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(BENCH), str(ROOT / "tests"), str(ROOT / "tests" / "delegation")]
    os.environ["A2A_ALLOW_PRIVATE_WEBHOOKS"] = "true"  # every agent here is on 127.0.0.1
    data = result(args.remote_seconds, args.ticks, args.tasks)
    print(render(data))
    args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
