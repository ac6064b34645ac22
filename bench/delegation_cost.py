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
  start is not in that record, and is not counted). The reference agent pushes to B's push
  receiver. Two variants: ``durable``, where B sends no pushes (its card says so), so A polls B
  with durable waits (2 s, 4 s, 8 s ...); ``durable_b_pushes``, where B pushes to A as the
  template's push functions would (:class:`PushPipeline`: the memory store has no change stream,
  so a thread stands in for it; its dispatcher and delivery calls are metered as those functions'
  invocations), and A's waits end on B's pushes.
* Every mode: every HTTP request to A's and B's API (the client's SendMessage, A's calls to B,
  the pushes to B and to A), its wall time (a stream's: until its last byte) and the template's
  function that serves its route on AWS (JSON-RPC, streams, GetTask and the push receiver:
  GatewayFunction; the card: AgentCardFunction; REST SendMessage: SendMessageFunction). The client
  waits for A's task by reading A's store in-process (no GetTask polls counted).

Priced at ``aws_calls``' prices (Lambda requests, arm64 GB-seconds at each function's MemorySize in
template.yaml, each invocation's duration rounded up to the millisecond as Lambda bills it, API
Gateway REST requests, durable operations at $8.00 per million). Not counted:
DynamoDB, SQS and the authorizer (measured per operation by ``bench/aws_calls.py``), durable data
written and retained (price not found), and the reference agent's own compute: it works for the
same time in every mode (stated apart, at WorkerFunction's memory, as if it were a Lambda agent).

    .venv/bin/python bench/delegation_cost.py [--remote-seconds 60] [--ticks 6] [--tasks 3] [--json PATH]

Prints a markdown table; ``--json`` (default ``bench/results-delegation-cost.json``) writes the raw
result. Importing this module starts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
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
PRICED = (
    "WorkerFunction",
    "DurableWorkerFunction",
    "PushDispatcherFunction",
    "PushDeliveryFunction",
    "GatewayFunction",
    "AgentCardFunction",
    "SendMessageFunction",
)
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


class PushPipeline:
    """B's pushes, as the template's push functions send them from the table's change stream: every
    ``every`` seconds (the stream's batching) the tasks whose event log grew are one
    PushDispatcherFunction invocation (``items_for_event``), and each delivery item it makes one
    PushDeliveryFunction invocation (``deliver``, the SQS batch size being 1), both timed. The
    notifications carry the token A gave (A's receiver checks it); they are not signed here."""

    def __init__(self, store: Any, meter: Meter, every: float = 0.1) -> None:
        from a2a_serverless.push.sender import WebhookSender

        self._store, self._meter, self._every = store, meter, every
        self._sender = WebhookSender(timeout=10.0, allow_private=True)  # every agent is on 127.0.0.1
        self._seen: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-push", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from a2a_serverless.ports import Scope, TaskQuery
        from a2a_serverless.push.delivery import deliver
        from a2a_serverless.push.dispatch import items_for_event

        scope = Scope("", "anonymous")
        while not self._stop.wait(self._every):
            grown = []
            for task in self._store.list_tasks(scope, TaskQuery(page_size=100)).tasks:
                head = self._store.get_head(scope, task.id)
                if head is not None and head.last_seq > self._seen.get(task.id, 0):
                    grown.append((task.id, head.last_seq))
            if not grown:
                continue
            with self._meter.invocation("PushDispatcherFunction"):
                items = [item for task_id, seq in grown for item in items_for_event(self._store, scope, task_id, seq)]
            self._seen.update(grown)
            for item in items:
                with self._meter.invocation("PushDeliveryFunction"):
                    deliver(
                        item,
                        store=self._store,
                        sender=self._sender,
                        signer=None,
                        attempt=1,
                        max_attempts=5,
                        timeout_seconds=10.0,
                    )

    def idle(self) -> bool:
        """Nothing is left to send (every task's log seen)."""
        from a2a_serverless.ports import Scope, TaskQuery

        scope = Scope("", "anonymous")
        tasks = self._store.list_tasks(scope, TaskQuery(page_size=100)).tasks
        heads = [self._store.get_head(scope, task.id) for task in tasks]
        return all(head is None or head.last_seq <= self._seen.get(head.task_id, 0) for head in heads)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


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
def our_agent(mode: str, *, pushes: bool = False) -> Iterator[Served]:
    """A delegating agent of ours in ``mode`` (queue or durable), served on 127.0.0.1, metered;
    ``pushes``: it sends push notifications (:class:`PushPipeline`), and its card says so."""
    from a2a_serverless.adapters.memory_store import MemoryTaskStore
    from a2a_serverless.config import Settings
    from a2a_serverless.transport.app import create_app
    from a2a_serverless.wiring import build_runtime
    from testkit.served import Later, served

    meter, later = Meter(), Later()
    with served(ApiMeter(later, meter)) as url:
        store = MemoryTaskStore()
        common: dict[str, Any] = {
            "store": "memory",
            "public_url": url,
            "push_notifications": pushes,
            "allow_private_webhooks": True,  # every agent here is on 127.0.0.1
        }
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
        from a2a_serverless_dev.durable import DURABLE_WORKER, DurableLimits, LocalDurableWorker

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
        pipeline = PushPipeline(store, meter) if pushes else None
        try:
            later.app = create_app(build_runtime(settings, store=store, durable=worker.runs))
            idle = (lambda: worker.running == 0 and pipeline.idle()) if pipeline else (lambda: worker.running == 0)
            yield Served(url, store, meter, idle, worker)
        finally:
            if pipeline:
                pipeline.close()
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


MODES = {"queue": ("queue", False), "durable": ("durable", False), "durable_b_pushes": ("durable", True)}
"""Each measured mode: the agents' execution mode, and whether B pushes to A (else A polls B)."""


def run_mode(mode: str, remote_seconds: float, ticks: int, tasks: int) -> dict[str, Any]:
    """``tasks`` chains at once, client -> A -> B -> reference, in ``mode`` (:data:`MODES`); what
    ran, per agent."""
    from a2a_serverless.ports import Scope
    from testkit.reference_agent import reference_agent

    chore = f"tick {ticks} {remote_seconds / ticks:g}"
    limit = remote_seconds * 3 + 120  # each hop's delegation limit: never the one that ends it
    with (
        reference_agent(push=True) as reference,
        our_agent(MODES[mode][0], pushes=MODES[mode][1]) as b,
        our_agent(MODES[mode][0]) as a,
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
        if a.worker is not None:
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
    invocations_by_function: dict[str, float] = field(default_factory=dict)
    """``agent function`` -> invocations per task."""


def per_task(raw: dict[str, Any], memory: dict[str, int]) -> PerTask:
    out, n = PerTask(), raw["tasks"]
    kinds: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    ops: Counter[str] = Counter()
    for agent, metered in raw["agents"].items():
        for function, seconds in metered["invocations"]:
            functions[f"{agent} {function}"] += 1
            out.worker_invocations += 1 / n
            out.worker_seconds += seconds / n
            out.worker_gb_seconds += memory[function] / 1024 * billed(seconds) / n
        for function, method, path, seconds in metered["requests"]:
            out.api_requests += 1 / n
            out.api_seconds += seconds / n
            out.api_gb_seconds += memory[function] / 1024 * billed(seconds) / n
            kinds[f"{agent} {function} {method} {_route(path)}"] += 1
        ops.update(metered["durable_operations"])
    out.durable_operations = sum(ops.values()) / n
    out.durable_operations_by_type = {k: round(v / n, 2) for k, v in sorted(ops.items())}
    out.requests_by_kind = {k: round(v / n, 2) for k, v in sorted(kinds.items())}
    out.invocations_by_function = {k: round(v / n, 2) for k, v in sorted(functions.items())}
    return out


def billed(seconds: float) -> float:
    """An invocation's billed duration: Lambda rounds up to the millisecond."""
    return math.ceil(seconds * 1000) / 1000


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
    for mode in MODES:
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
    meta, modes = data["meta"], data["modes"]
    names = list(modes)
    head = "| per task | " + " | ".join(names) + " |"
    rule = "|---|" + "---:|" * len(names)

    def row(label: str, values: list[str]) -> str:
        return f"| {label} | " + " | ".join(values) + " |"

    lines = [
        f"### A two-hop delegated task, remote {meta['remote_seconds']:g} s ({meta['date']})",
        "",
        f"Per task: A and B together, {meta['tasks_per_mode']} chains at once per mode.",
        "",
        head,
        rule,
        row("outcomes", [", ".join(sorted(set(m["raw"]["states"]))) for m in modes.values()]),
        row("chain wall time, s", [f"{m['raw']['chain_seconds']:g}" for m in modes.values()]),
    ]
    rows = [
        ("function invocations (workers, push)", "worker_invocations"),
        ("their seconds", "worker_seconds"),
        ("their GB-s", "worker_gb_seconds"),
        ("API requests (to A and B)", "api_requests"),
        ("their seconds", "api_seconds"),
        ("their GB-s", "api_gb_seconds"),
        ("durable operations", "durable_operations"),
    ]
    for label, key in rows:
        lines.append(row(label, [f"{m['per_task'][key]:.4g}" for m in modes.values()]))
    gb = [m["per_task"]["worker_gb_seconds"] + m["per_task"]["api_gb_seconds"] for m in modes.values()]
    lines.append(row("**Lambda GB-s, all**", [f"**{g:.2f}**" for g in gb]))
    lines += ["", head.replace("per task", "$ per million tasks"), rule]
    for key in modes[names[0]]["per_million_tasks_usd"]:
        lines.append(row(key.replace("_", " "), [f"{m['per_million_tasks_usd'][key]:,.2f}" for m in modes.values()]))
    lines.append(row("**total**", [f"**{m['total_per_million_tasks_usd']:,.2f}**" for m in modes.values()]))
    remote = data["remote_same_in_both_modes"]
    lines.append("")
    for name, m in modes.items():
        if m["per_task"]["durable_operations"]:
            lines.append(
                f"{name}: durable operations by type, per task: {m['per_task']['durable_operations_by_type']}."
            )
    lines.append(
        f"The remote's own compute, the same in every mode and not above: {remote['seconds']:g} s, "
        f"{remote['gb_seconds_at_worker_memory']} GB-s per task if it were a Lambda worker at "
        f"{meta['memory_mb']['WorkerFunction']} MB "
        f"(${remote['per_million_tasks_usd_if_a_lambda_worker']:,.2f} per million)."
    )
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
