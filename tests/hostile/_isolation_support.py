"""The world ``test_isolation.py`` attacks: alice's tasks in two tenants, on a store that counts
writes, behind the app; the attackers; and what every binding's TaskNotFound looks like.

* :class:`GatedExecutor` is the agent: ``hold ...`` works (one artifact) and then waits at a gate,
  so a WORKING task stays live and unchanging while it is attacked; ``ask ...`` asks for input;
  anything else is echoed. It records what every run was given (caller, tenant, related tasks).
* :class:`CountingStore` wraps either store (memory, or DynamoDB on moto) and records the scope of
  every write it passes on.
* :func:`build_world` creates, as alice, a COMPLETED, an INPUT_REQUIRED and a WORKING task in the
  tenant ``acme`` and the same three at the root (v0.3 has no tenant, so its bindings can only reach
  the root), each with an inline push config and a created one.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from starlette.applications import Starlette

from a2a_serverless.adapters.dynamodb.table import Keys
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import (
    Part,
    SendMessageRequest,
    StreamResponse,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_serverless.operations import CallContext, create_push_config, send_message
from a2a_serverless.ports import Scope, TaskQuery, TaskRecord, TaskStore
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

API_KEYS = {"key-alice": "alice", "key-bob": "bob"}
KEY_OF = {principal: key for key, principal in API_KEYS.items()}
VICTIM = "alice"
TENANT = "acme"

VICTIM_HOOK = "https://93.184.215.14/alice"
"""A public literal address (no DNS at validation): the victim's webhooks live under it."""
ATTACKER_HOOK = "https://8.8.4.4/mallory"


def secrets(tenant: str) -> tuple[str, ...]:
    """Strings only alice's tasks and configs in ``tenant`` hold: no answer to a caller outside
    that scope may contain any of them."""
    where = tenant or "root"
    return (f"secret-alice-{where}", f"alice-token-{where}", f"alice-credential-{where}", f"{VICTIM_HOOK}/{where}/")


ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
DOMAIN = "a2a-protocol.org"
BINDINGS_V1 = ("jsonrpc-1.0", "rest-1.0")
BINDINGS_V03 = ("jsonrpc-0.3", "rest-0.3")


# --------------------------------------------------------------------------- the agent


@dataclass(frozen=True)
class Run:
    """What one executor run was given."""

    task_id: str
    tenant: str
    caller: str
    current_task_id: str
    related_task_ids: tuple[str, ...]


class GatedExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.gate = threading.Event()
        self.runs: list[Run] = []
        self._holding: set[str] = set()
        self._lock = threading.Lock()

    def holding(self, task_id: str) -> bool:
        with self._lock:
            return task_id in self._holding

    def runs_of(self, task_id: str) -> list[Run]:
        with self._lock:
            return [r for r in self.runs if r.task_id == task_id]

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        run = Run(
            context.task_id,
            context.tenant,
            context.caller,
            current.id if current is not None else "",
            tuple(t.id for t in context.related_tasks),
        )
        with self._lock:
            self.runs.append(run)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        text = context.get_user_input().strip()
        await updater.start_work()
        if current is not None and current.status.state is TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([Part(text=f"Nice to meet you, {text}")], name="greeting")
            await updater.complete()
            return
        if text.startswith("ask"):
            await updater.requires_input(updater.new_agent_message([Part(text=f"{text}: what is your name?")]))
            return
        if text.startswith("hold"):
            await updater.add_artifact([Part(text=f"{text}: partial")], name="partial")
            with self._lock:
                self._holding.add(context.task_id)
            # The gate is opened from the test's thread, not this worker's event loop.
            while not self.gate.is_set():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            await updater.add_artifact([Part(text=f"{text}: final")], name="final")
            await updater.complete()
            return
        await updater.add_artifact([Part(text=f"Echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


# --------------------------------------------------------------------------- the store


class CountingStore:
    """A ``TaskStore`` passing everything to ``inner``, recording the scope of every write."""

    def __init__(self, inner: TaskStore) -> None:
        self.inner = inner
        self._writes: list[Scope] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def writes(self, scope: Scope | None = None) -> int:
        with self._lock:
            return len(self._writes) if scope is None else sum(1 for s in self._writes if s == scope)

    def _wrote(self, scope: Scope) -> None:
        with self._lock:
            self._writes.append(scope)

    def create_task(self, record: TaskRecord, events: Sequence[StreamResponse], **kwargs: Any) -> TaskRecord:
        self._wrote(record.scope)
        return self.inner.create_task(record, events, **kwargs)

    def commit(self, record: TaskRecord, events: Sequence[StreamResponse] = (), **options: Any) -> TaskRecord:
        self._wrote(record.scope)
        return self.inner.commit(record, events, **options)

    def mark_cancel(self, scope: Scope, task_id: str, message_id: str) -> bool:
        self._wrote(scope)
        return self.inner.mark_cancel(scope, task_id, message_id)

    def put_push_config(self, scope: Scope, config: TaskPushNotificationConfig, **kwargs: Any) -> Any:
        self._wrote(scope)
        return self.inner.put_push_config(scope, config, **kwargs)

    def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._wrote(scope)
        self.inner.delete_push_config(scope, task_id, config_id)

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        self._wrote(scope)
        return self.inner.advance_push_cursor(scope, task_id, config_id, seq)

    def mark_push_tried(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        self._wrote(scope)
        return self.inner.mark_push_tried(scope, task_id, config_id, seq)


# --------------------------------------------------------------------------- the world


@dataclass(frozen=True)
class Victim:
    """One of alice's tasks: ``done`` (COMPLETED), ``waiting`` (INPUT_REQUIRED), ``working``."""

    name: str
    tenant: str
    id: str
    context_id: str
    message_id: str

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant, VICTIM)

    @property
    def label(self) -> str:
        return f"{self.tenant or 'root'}/{self.name}"


VICTIM_TEXTS = {"done": "secret-alice", "waiting": "ask secret-alice", "working": "hold secret-alice"}
"""Each followed by the tenant ("-acme", "-root"), so each tenant's data is recognisable."""
HOOK_ID = "alice-hook"
INLINE_ID = "alice-inline"


@dataclass
class World:
    kind: str
    runtime: Runtime
    store: CountingStore
    app: Starlette
    executor: GatedExecutor
    victims: list[Victim]
    dump_table: Callable[[], Any] | None = None
    """Every item of the DynamoDB table, raw (None for the memory store)."""
    created: dict[Scope, list[str]] = field(default_factory=dict)
    """Tasks attackers created (in their own scopes), so listings can be checked exactly."""

    def targets(self, tenant: str) -> list[Victim]:
        return [v for v in self.victims if v.tenant == tenant]

    def victim_ids(self) -> set[str]:
        return {v.id for v in self.victims}

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://testserver")

    def known_tasks(self, scope: Scope) -> list[str]:
        """Every task id that belongs in ``scope``: alice's victims there, and attackers' creations."""
        own = [v.id for v in self.victims if v.scope == scope]
        return own + self.created.get(scope, [])

    def everything(self) -> dict[str, Any]:
        """The whole store, for requests that must write nothing at all: the write count, and every
        item of the DynamoDB table as stored (keys, index attributes, cursors, TTLs), or for the
        memory store alice's data in both tenants (:meth:`snapshot`)."""
        if self.dump_table is not None:
            return {"writes": self.store.writes(), "items": self.dump_table()}
        return {"writes": self.store.writes(), TENANT: self.snapshot(TENANT), "root": self.snapshot("")}

    def snapshot(self, tenant: str) -> dict[str, Any]:
        """Everything of alice's in ``tenant`` an attack must leave alone, and the store's write
        count. DynamoDB: every item of her scope there as stored (heads with their index keys, event
        logs, push configs with their cursors, idempotency keys). Memory: read through the store,
        each task's head (with history, artifacts, version, flags), its whole event log, its push
        configs and their delivery cursors, and her listing."""
        store = self.store
        scope = Scope(tenant, VICTIM)
        state: dict[str, Any] = {"writes": store.writes()}
        if self.dump_table is not None:
            keys = Keys(scope)
            mine = (keys.task_pk(""), keys.message_pk(""))
            state["items"] = [i for i in self.dump_table() if i["pk"]["S"].startswith(mine)]
            assert len({i["pk"]["S"] for i in state["items"]}) >= len(self.targets(tenant)) * 2
            return state
        for v in self.targets(tenant):
            configs, _ = store.list_push_configs(scope, v.id, 100)
            state[v.name] = {
                "head": store.get_task(scope, v.id),
                "events": store.read_events(scope, v.id, 0, 1000),
                "configs": configs,
                "cursors": [store.get_push_target(scope, v.id, c.id) for c in configs],
            }
        page = store.list_tasks(scope, TaskQuery(page_size=100))
        state["listing"] = ([t.id for t in page.tasks], page.total_size)
        return state

    def wait_quiet(self, scope: Scope, task_id: str, timeout: float = 20.0) -> TaskRecord:
        """Wait until a task's run is over and settled (its last write is done)."""
        deadline = time.monotonic() + timeout
        while True:
            record = self.store.get_task(scope, task_id)
            assert record is not None, f"{task_id} vanished"
            quiet = not record.pending_message_id and not record.running_message_id
            if (quiet and (record.state.is_terminal or record.state.is_interrupted)) or time.monotonic() > deadline:
                return record
            time.sleep(0.01)


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "executor": f"{__name__}:GatedExecutor",
        "auth_mode": "api-key",
        "api_keys": API_KEYS,
        "poll_interval_seconds": 0.005,
        "stream_poll_seconds": 0.01,
        # The victims' held run must not renew its lease (a write in alice's scope) mid-suite.
        "run_lease_seconds": 3600,
        **overrides,
    }
    return Settings(**values)


def build_world(kind: str, inner: TaskStore, dump_table: Callable[[], Any] | None = None, **overrides: Any) -> World:
    store = CountingStore(inner)
    runtime = build_runtime(settings(**overrides), store=store)  # type: ignore[arg-type]
    executor = runtime.executor
    assert isinstance(executor, GatedExecutor)
    try:
        victims = [_create_victim(runtime, executor, tenant, name) for tenant in (TENANT, "") for name in VICTIM_TEXTS]
    except BaseException:
        # No world: let the held run finish, so no worker outlives the suite's AWS stand-in.
        executor.gate.set()
        runtime.queue.shutdown()  # type: ignore[attr-defined]
        raise
    return World(kind, runtime, store, create_app(runtime), executor, victims, dump_table)


def _create_victim(runtime: Runtime, executor: GatedExecutor, tenant: str, name: str) -> Victim:
    ctx = CallContext(principal=Principal(VICTIM, authenticated=True), tenant=tenant)
    where = tenant or "root"
    hook = f"{VICTIM_HOOK}/{where}/{name}"
    message_id = f"alice-{where}-{name}"
    request = SendMessageRequest.model_validate(
        {
            "message": {
                "messageId": message_id,
                "role": "ROLE_USER",
                "parts": [{"text": f"{VICTIM_TEXTS[name]}-{where}"}],
            },
            "configuration": {
                "returnImmediately": name == "working",
                "taskPushNotificationConfig": {
                    "id": INLINE_ID,
                    "url": f"{hook}/inline",
                    "token": f"alice-token-{where}",
                },
            },
        }
    )
    task = send_message(request, ctx, runtime).task
    assert task is not None
    if name == "working":
        deadline = time.monotonic() + 20
        while not executor.holding(task.id):
            assert time.monotonic() < deadline, "the working task never reached the gate"
            time.sleep(0.01)
        # The run's events are committed in groups, after enqueue_event returned: wait for its
        # WORKING and partial artifact to be stored before the world is looked at.
        while True:
            held = runtime.store.get_task(Scope(tenant, VICTIM), task.id)
            if held is not None and held.task.artifacts:
                break
            assert time.monotonic() < deadline, "the working task's events were never stored"
            time.sleep(0.01)
    config = TaskPushNotificationConfig.model_validate(
        {
            "taskId": task.id,
            "id": HOOK_ID,
            "url": f"{hook}/created",
            "authentication": {"scheme": "Bearer", "credentials": f"alice-credential-{where}"},
        }
    )
    create_push_config(config, ctx, runtime)
    victim = Victim(name, tenant, task.id, task.context_id, message_id)
    record = runtime.store.get_task(victim.scope, task.id)
    assert record is not None
    expected = {"done": "TASK_STATE_COMPLETED", "waiting": "TASK_STATE_INPUT_REQUIRED", "working": "TASK_STATE_WORKING"}
    assert record.state.value == expected[name], (name, record.state)
    return victim


# --------------------------------------------------------------------------- attackers and calls


@dataclass(frozen=True)
class Attacker:
    principal: str
    tenant: str
    target: str
    """The tenant of the victims it goes after."""

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant, self.principal)

    def headers(self, binding: str) -> dict[str, str]:
        version = {"A2A-Version": "1.0"} if binding.endswith("1.0") else {}
        return {**version, "Authorization": f"Bearer {KEY_OF[self.principal]}"}

    def prefix(self) -> str:
        return f"/{quote(self.tenant, safe='')}" if self.tenant else ""

    def params(self, **params: Any) -> dict[str, Any]:
        """JSON-RPC 1.0 params, with the attacker's tenant."""
        return {**params, "tenant": self.tenant} if self.tenant else params


@dataclass(frozen=True)
class Call:
    verb: str
    path: str
    json: Any = None
    params: dict[str, str] | None = None


def rpc(method: str, params: Any) -> Call:
    return Call("POST", "/", {"jsonrpc": "2.0", "id": "iso", "method": method, "params": params})


async def send(http: httpx.AsyncClient, call: Call, headers: dict[str, str], limit: float = 15.0) -> httpx.Response:
    """One request. A stream that opens for an attacker on a live task would never end: the
    timeout turns that hang into a failure naming it."""
    request = http.request(call.verb, call.path, json=call.json, params=call.params, headers=headers)
    try:
        return await asyncio.wait_for(request, limit)
    except TimeoutError:
        raise AssertionError(f"{call.verb} {call.path}: no answer in {limit}s (a stream opened?)") from None


def new_id() -> str:
    return f"mallory-{uuid.uuid4()}"


def message_v1(text: str = "mallory", **extra: Any) -> dict[str, Any]:
    return {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def message_v03_rpc(text: str = "mallory", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": new_id(),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


def message_v03_rest(text: str = "mallory", **extra: Any) -> dict[str, Any]:
    return {"messageId": new_id(), "role": "ROLE_USER", "content": [{"text": text}], **extra}


# --------------------------------------------------------------------------- expected answers


def assert_no_secrets(response: httpx.Response, what: str, tenant: str) -> None:
    for secret in secrets(tenant):
        assert secret not in response.text, f"{what}: the answer reveals {secret!r}: {response.text[:500]}"


def assert_task_not_found(response: httpx.Response, binding: str, what: str) -> None:
    """The exact TaskNotFound of ``binding`` (A2A specification, sections 5.4, 9.5 and 11.6; v0.3 JSON-RPC: free-form
    ``data``). Streaming operations answer it as a plain response, before any stream."""
    text = response.text[:500]
    assert response.status_code < 500, f"{what}: {response.status_code} {text}"
    if binding == "jsonrpc-0.3" and response.headers.get("content-type", "").startswith("text/event-stream"):
        # v0.3 streaming methods answer an error as the stream's only event (0.3 clients read it so)
        frames = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        assert len(frames) == 1, f"{what}: {text}"
        body = json.loads(frames[0])
    else:
        assert not response.headers.get("content-type", "").startswith("text/event-stream"), f"{what}: a stream opened"
        body = response.json()
    if binding.startswith("jsonrpc"):
        assert response.status_code == 200, f"{what}: {response.status_code} {text}"
        assert set(body) == {"jsonrpc", "id", "error"}, f"{what}: {text}"
        assert body["id"] == "iso"
        error = body["error"]
        assert error["code"] == -32001, f"{what}: {text}"
        if binding == "jsonrpc-1.0":
            info = error["data"][0]
            assert info["@type"] == ERROR_INFO, f"{what}: {text}"
        else:
            info = error["data"]
            assert isinstance(info, dict), f"{what}: {text}"
        assert info["reason"] == "TASK_NOT_FOUND", f"{what}: {text}"
        assert info["domain"] == DOMAIN
        return
    assert response.status_code == 404, f"{what}: {response.status_code} {text}"
    if binding == "rest-0.3":  # v0.3 REST: {code, message, data} (tests/transport/test_v03_rest_errors.py)
        assert response.headers["content-type"].startswith("application/json"), f"{what}: {response.headers}"
        assert set(body) == {"code", "message", "data"}, f"{what}: {text}"
        assert body["code"] == -32001, f"{what}: {text}"
        assert body["data"]["reason"] == "TASK_NOT_FOUND", f"{what}: {text}"
        assert body["data"]["domain"] == DOMAIN
        return
    assert response.headers["content-type"].startswith("application/a2a+json"), f"{what}: {response.headers}"
    assert set(body) == {"error"}, f"{what}: {text}"
    error = body["error"]
    assert (error["code"], error["status"]) == (404, "NOT_FOUND"), f"{what}: {text}"
    assert error["details"][0]["@type"] == ERROR_INFO
    assert error["details"][0]["reason"] == "TASK_NOT_FOUND", f"{what}: {text}"


def normalized(response: httpx.Response, task_id: str) -> tuple[int, str, Any]:
    """The answer with the task id it names replaced and timestamps dropped: what must be the same
    for a foreign task and a missing one."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "timestamp"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    text = response.text.replace(task_id, "<task>")
    if response.headers.get("content-type", "").startswith("text/event-stream"):  # an error as an event
        body = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    else:
        body = json.loads(text)
    return response.status_code, response.headers.get("content-type", ""), strip(body)


def sse_data(response: httpx.Response) -> list[Any]:
    return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]


Build = Callable[[Attacker, Victim, str], Call]
"""(attacker, victim, task id) -> the request; the task id is the victim's, or a missing one."""
