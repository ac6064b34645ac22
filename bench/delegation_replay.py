"""One push replayed to a waiting durable delegation: how many durable invocations and remote
GetTasks the replays cost (issue 40).

Our agent is ``tests/delegation/relay_agents.py``'s ``DurableDelegatingAgent`` in durable mode, on
the official local runner of durable executions (``LocalDurableWorker``, real-time waits: the same
setup as ``tests/delegation/test_durable_delegation.py``), served over HTTP on 127.0.0.1 on the
memory store. It delegates ``tick 100 1`` (100 s of work) to the a2a-sdk 1.x reference agent
(``bench/_reference_server.py``) with push notifications, whose requests are counted (GetTask over
JSON-RPC or REST). Once the delegation waits and the reference has pushed to our receiver, the
token of its pushes is taken from a real push, and one push carrying it, saying the remote task
completed (it still works), is POSTed ``--replays`` times, ``--interval`` seconds apart (0: back to
back): what a remote agent, or anyone holding the token, can do. Back to back, an invocation that a
replay woke may still be running when the next replay comes, and go on in the same invocation;
spaced out, each wake is an invocation of its own. Then, once the durable worker is idle again, the script prints the
durable worker's invocations, the remote's GetTasks, and the receiver's answers, during the
replays and since, and cancels the task.

    .venv/bin/python bench/delegation_replay.py [--replays 300] [--interval 0] [--json PATH]

Importing this module starts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
HEADERS = {"A2A-Version": "1.0"}
WAIT_SECONDS = 120.0
"""Hang guard for each wait (the delegation to wait, the worker to settle)."""
QUIET_SECONDS = 2.0
"""The worker counts as settled once no invocation ran and none started for this long."""


class Counting:
    """ASGI middleware: counts the GetTask calls the wrapped agent gets (JSON-RPC and REST)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.get_tasks = 0
        self._lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "GET" and "/tasks/" in scope["path"]:
            self._count()
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] == "POST" and b'"GetTask"' in body:
            self._count()
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _count(self) -> None:
        with self._lock:
            self.get_tasks += 1


class Recorder:
    """ASGI middleware: each request's (path, headers) to our agent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, dict[str, str]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests.append((scope["path"], {k.decode().lower(): v.decode() for k, v in scope["headers"]}))
        await self.app(scope, receive, send)


@contextlib.contextmanager
def reference_agent() -> Iterator[tuple[str, Counting]]:
    """The reference agent with push notifications, its GetTasks counted."""
    from testkit.served import Later, served

    spec = importlib.util.spec_from_file_location("_reference_server", BENCH / "_reference_server.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    later = Later()
    counting = Counting(later)
    with served(counting) as url:
        later.app = module.create_reference_app(url, push=True)
        yield url, counting


@contextlib.contextmanager
def our_agent() -> Iterator[tuple[str, Any, Any, Recorder]]:
    """Our durable delegating agent: (url, store, durable worker, request recorder)."""
    from a2a_serverless.adapters.memory_store import MemoryTaskStore
    from a2a_serverless.config import Settings
    from a2a_serverless.transport.app import create_app
    from a2a_serverless.wiring import build_runtime
    from a2a_serverless_dev.durable import DurableLimits, LocalDurableWorker
    from testkit.served import Later, served

    later = Later()
    recorder = Recorder(later)
    with served(recorder) as url:
        store = MemoryTaskStore()
        settings = Settings(
            store="memory",
            execution_mode="durable",
            executor="relay_agents:DurableDelegatingAgent",
            public_url=url,
            poll_interval_seconds=0.01,
            allow_private_webhooks=True,
        )
        worker = LocalDurableWorker(
            settings, limits=DurableLimits(invocation_timeout=900, execution_timeout=3600), store=store
        )
        try:
            later.app = create_app(build_runtime(settings, store=store, durable=worker.runs))
            yield url, store, worker, recorder
        finally:
            worker.close()


def call(url: str, method: str, params: dict[str, Any]) -> Any:
    import httpx

    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url + "/", json=body, headers=HEADERS, timeout=60).json()["result"]


def wait_for(what: str, check: Any) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"no {what} within {WAIT_SECONDS:g} s")


def settled(worker: Any, store: Any, task_id: str) -> int:
    """The worker's invocations once it has been idle for :data:`QUIET_SECONDS`, the task waiting."""
    from a2a_serverless.ports import Scope

    quiet_since, seen = time.monotonic(), -1
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        count = int(worker.status()["invocations"])
        head = store.get_head(Scope("", "anonymous"), task_id)
        if count != seen or worker.running or head is None or not head.waiting_callback:
            quiet_since, seen = time.monotonic(), count
        elif time.monotonic() - quiet_since >= QUIET_SECONDS:
            return count
        time.sleep(0.05)
    raise TimeoutError("the durable worker did not settle")


def run(replays: int, interval: float) -> dict[str, Any]:
    import httpx

    from a2a_serverless.ports import Scope

    with reference_agent() as (reference, counting), our_agent() as (url, store, worker, recorder):
        orders = {"to": reference + "/.well-known/agent-card.json", "send": "tick 100 1", "limit": 600}
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": json.dumps(orders)}]}
        task_id = call(url, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}})["task"][
            "id"
        ]

        def pushed() -> tuple[str, str] | None:
            head = store.get_head(Scope("", "anonymous"), task_id)
            for path, headers in list(recorder.requests):
                if path.startswith("/_a2a/delegations/") and head is not None and head.waiting_callback:
                    return path, headers.get("x-a2a-notification-token", "")
            return None

        hook, token = wait_for("push from the remote while the delegation waits", pushed)
        (remote,) = call(reference, "ListTasks", {})["tasks"]
        invocations_before = settled(worker, store, task_id)
        get_tasks_before = counting.get_tasks
        body = {
            "task": {"id": remote["id"], "contextId": remote["contextId"], "status": {"state": "TASK_STATE_COMPLETED"}}
        }
        answers: Counter[str] = Counter()
        started = time.monotonic()
        with httpx.Client(timeout=30) as client:
            for _ in range(replays):
                answer = client.post(url + hook, json=body, headers={"X-A2A-Notification-Token": token})
                answers[f"{answer.status_code} {answer.json().get('status')}"] += 1
                time.sleep(interval)
        replay_seconds = time.monotonic() - started
        invocations_after = settled(worker, store, task_id)
        get_tasks_after = counting.get_tasks
        state = call(url, "GetTask", {"id": task_id})["status"]["state"]
        call(url, "CancelTask", {"id": task_id})
    return {
        "replays": replays,
        "interval_seconds": interval,
        "answers": dict(answers),
        "replay_seconds": round(replay_seconds, 2),
        "durable_invocations": invocations_after - invocations_before,
        "remote_get_tasks": get_tasks_after - get_tasks_before,
        "our_task_after": state,
        "date": time.strftime("%Y-%m-%d"),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--replays", type=int, default=300, help="how many times the push is POSTed")
    parser.add_argument("--interval", type=float, default=0.0, help="seconds between two replays")
    parser.add_argument("--json", type=Path, help="where to write the result (none by default)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(BENCH), str(ROOT / "tests"), str(ROOT / "tests" / "delegation")]
    os.environ["A2A_ALLOW_PRIVATE_WEBHOOKS"] = "true"  # every agent here is on 127.0.0.1
    data = run(args.replays, args.interval)
    print(
        f"{data['replays']} replays of one push (token valid, 'completed' announced), "
        f"{data['interval_seconds']:g} s apart, to a waiting delegation: "
        f"{data['durable_invocations']} durable invocations, {data['remote_get_tasks']} remote GetTasks; "
        f"answers {data['answers']}; our task then {data['our_task_after']}"
    )
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
