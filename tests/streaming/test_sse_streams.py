"""SendStreamingMessage and SubscribeToTask over real SSE sockets, on both bindings.

The app runs under uvicorn on 127.0.0.1 (a thread with its own event loop; httpx's ASGITransport
buffers whole bodies, so it cannot show a stream incrementally) against a memory runtime whose work
queue runs the real worker and demo agent on threads. httpx + httpx-sse are the raw SSE client;
the ``: ping`` comments are checked on raw lines.

Covered: framing (content type, numeric ``id`` strictly increasing, JSON-RPC envelope echoing the
request id, bare StreamResponse over REST), the Task snapshot first, the end conditions (terminal;
INPUT_REQUIRED for SendStreamingMessage only), errors before the first byte as plain JSON,
Last-Event-ID resume (no gap, no duplicate, no snapshot), fan-out to concurrent subscribers,
client disconnects, the stream deadline and message-only replies.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from httpx_sse import EventSource, ServerSentEvent, aconnect_sse

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import ANONYMOUS
from a2a_serverless.config import Settings
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import Part, TaskState
from a2a_serverless.operations.streaming import FIRST_EVENT_HOLD_SECONDS
from a2a_serverless.ports import Scope, StoredEvent
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

V1 = {"A2A-Version": "1.0"}
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
KINDS = {"task", "message", "statusUpdate", "artifactUpdate"}
CLOSE_WITHIN = 5.0
"""How long a stream may take to close after its last event."""


class ReplyExecutor(AgentExecutor):
    """Answers with a Message only (no task work), like a simple chat agent."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await event_queue.enqueue_event(updater.new_agent_message([Part(text=f"hi, {context.get_user_input()}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class SlowReplyExecutor(AgentExecutor):
    """Answers with a Message only, but only after the stream stopped holding its snapshot back."""

    DELAY_SECONDS = 2.0
    """Longer than the stream's hold (FIRST_EVENT_HOLD_SECONDS, 1 s), with room for a slow start."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await asyncio.sleep(self.DELAY_SECONDS)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await event_queue.enqueue_event(updater.new_agent_message([Part(text=f"late hi, {context.get_user_input()}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class SteppedExecutor(AgentExecutor):
    """Works in :attr:`STEPS` steps, each one only once the test lets it (:meth:`release`): WORKING,
    a progress update per step ("step 1 of 3"), then an artifact and COMPLETED. Its task cannot end
    before the test says so, so what a stream delivers before that was delivered while it worked."""

    STEPS = 3

    def __init__(self) -> None:
        self._steps = threading.Semaphore(0)

    def release(self) -> None:
        """Let the next step happen (from the test's thread)."""
        self._steps.release()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for step in range(1, self.STEPS + 1):
            await self._next_step()
            progress = updater.new_agent_message([Part(text=f"step {step} of {self.STEPS}")])
            await updater.update_status(TaskState.TASK_STATE_WORKING, progress)
        await updater.add_artifact([Part(text=f"took {self.STEPS} steps")], name="steps")
        await updater.complete()

    async def _next_step(self) -> None:
        # Polled, not awaited on a thread: the worker's event loop stays free to be stopped. A
        # test that never releases the step fails the run after about a minute (a hang guard).
        for _ in range(6000):
            if self._steps.acquire(blocking=False):
                return
            await asyncio.sleep(0.01)
        raise RuntimeError("the test never released the next step")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


# The runtime imports the executor by path: name this module however pytest imported it.
REPLY_EXECUTOR = f"{ReplyExecutor.__module__}:{ReplyExecutor.__qualname__}"
SLOW_REPLY_EXECUTOR = f"{SlowReplyExecutor.__module__}:{SlowReplyExecutor.__qualname__}"
STEPPED_EXECUTOR = f"{SteppedExecutor.__module__}:{SteppedExecutor.__qualname__}"


# --------------------------------------------------------------------------- the server


class CountingStore:
    """The memory store, counting ``read_events`` calls per task (the streams' polling)."""

    def __init__(self, inner: MemoryTaskStore) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.reads: Counter[str] = Counter()

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        with self._lock:
            self.reads[task_id] += 1
        return self._inner.read_events(scope, task_id, after_seq, limit)

    def read_count(self, task_id: str) -> int:
        with self._lock:
            return self.reads[task_id]

    def log(self, task_id: str, after_seq: int = 0, tenant: str = "") -> list[tuple[int, dict[str, Any]]]:
        """The task's event log after ``after_seq``, in wire form (read without counting)."""
        scope = Scope(tenant=tenant, owner=ANONYMOUS)
        out: list[tuple[int, dict[str, Any]]] = []
        while True:
            batch = self._inner.read_events(scope, task_id, after_seq, 100)
            if not batch:
                return out
            out.extend((e.seq, e.event.to_wire()) for e in batch)
            after_seq = batch[-1].seq

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@dataclass
class Server:
    http: httpx.AsyncClient
    runtime: Runtime
    store: CountingStore

    def stepped(self) -> SteppedExecutor:
        """The runtime's agent, served with ``executor=STEPPED_EXECUTOR``. (Ask before the first
        message: the runtime makes its executor on first use, and the worker must find this one.)"""
        agent = self.runtime.executor
        assert isinstance(agent, SteppedExecutor)
        return agent


@contextmanager
def _uvicorn(app: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        http="h11",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-sse-tests", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive(), "uvicorn exited before it started"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        assert not thread.is_alive(), "uvicorn did not stop"


@asynccontextmanager
async def serve(**overrides: Any) -> AsyncIterator[Server]:
    settings = Settings(**{"store": "memory", "poll_interval_seconds": 0.01, **overrides})
    store = CountingStore(MemoryTaskStore())
    runtime = build_runtime(settings, store=store)  # type: ignore[arg-type]
    try:
        with _uvicorn(create_app(runtime)) as base_url:
            async with httpx.AsyncClient(base_url=base_url, timeout=httpx.Timeout(20.0)) as http:
                yield Server(http=http, runtime=runtime, store=store)
    finally:
        await asyncio.to_thread(runtime.queue.shutdown)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- requests


def message(text: str, message_id: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def rpc(method: str, params: dict[str, Any], rpc_id: str | int = "req-1") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


async def send(http: httpx.AsyncClient, msg: dict[str, Any], tenant: str = "", **configuration: Any) -> dict[str, Any]:
    """Plain (non-streaming) SendMessage over JSON-RPC; returns the task."""
    params: dict[str, Any] = {"message": msg}
    if tenant:
        params["tenant"] = tenant
    if configuration:
        params["configuration"] = configuration
    response = await http.post("/", json=rpc("SendMessage", params), headers=V1)
    body = response.json()
    assert "result" in body, body
    task: dict[str, Any] = body["result"]["task"]
    return task


async def get_task(http: httpx.AsyncClient, task_id: str, tenant: str = "") -> dict[str, Any]:
    params = {"id": task_id, **({"tenant": tenant} if tenant else {})}
    response = await http.post("/", json=rpc("GetTask", params), headers=V1)
    task: dict[str, Any] = response.json()["result"]
    return task


async def wait_for(http: httpx.AsyncClient, task_id: str, states: set[str], within: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        task = await get_task(http, task_id)
        if task["status"]["state"] in states:
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {task['status']['state']}"
        await asyncio.sleep(0.02)


# --------------------------------------------------------------------------- the SSE client


@dataclass(frozen=True)
class Event:
    id: int
    body: dict[str, Any]
    """The StreamResponse (wire form), unwrapped from the JSON-RPC envelope."""

    @property
    def kind(self) -> str:
        [kind] = self.body
        return kind

    @property
    def state(self) -> str | None:
        if self.kind == "task":
            return str(self.body["task"]["status"]["state"])
        if self.kind == "statusUpdate":
            return str(self.body["statusUpdate"]["status"]["state"])
        return None


@dataclass
class Stream:
    source: EventSource
    binding: str
    rpc_id: str | int | None
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._iter = self.source.aiter_sse()

    @property
    def response(self) -> httpx.Response:
        return self.source.response

    def _parse(self, sse: ServerSentEvent) -> Event:
        assert sse.event == "message", f"unexpected SSE event {sse.event!r}: {sse.data}"
        assert sse.id.isdigit(), f"SSE id {sse.id!r} is not a sequence number"
        assert "\n" not in sse.data  # one compact data line
        data = json.loads(sse.data)
        if self.binding == "jsonrpc":
            assert set(data) == {"jsonrpc", "id", "result"}, data
            assert data["jsonrpc"] == "2.0"
            assert data["id"] == self.rpc_id
            assert type(data["id"]) is type(self.rpc_id)
            body = data["result"]
        else:
            body = data
        assert isinstance(body, dict)
        assert len(body) == 1, body
        assert set(body) <= KINDS, body
        event = Event(id=int(sse.id), body=body)
        if self.events:
            assert event.id > self.events[-1].id, f"ids not strictly increasing: {self.events[-1].id} -> {event.id}"
        self.events.append(event)
        return event

    async def next(self, within: float = 10.0) -> Event:
        sse = await asyncio.wait_for(anext(self._iter), within)
        return self._parse(sse)

    async def take(self, count: int) -> list[Event]:
        return [await self.next() for _ in range(count)]

    async def until(self, predicate: Any, within: float = 10.0) -> Event:
        deadline = time.monotonic() + within
        while True:
            event = await self.next(max(0.1, deadline - time.monotonic()))
            if predicate(event):
                return event

    async def rest(self, within: float = 15.0) -> list[Event]:
        """Every event until the server closes the stream."""
        start = len(self.events)

        async def drain() -> None:
            async for sse in self._iter:
                self._parse(sse)

        await asyncio.wait_for(drain(), within)
        return self.events[start:]

    async def assert_closed(self) -> None:
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(anext(self._iter), CLOSE_WITHIN)

    async def aclose(self) -> None:
        await self._iter.aclose()


def _headers(last_event_id: str | bytes | int | None) -> dict[str, str | bytes]:
    """The request headers; a ``bytes`` Last-Event-ID goes on the wire as is (httpx only encodes
    ``str`` values as ASCII)."""
    headers: dict[str, str | bytes] = dict(V1)
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id if isinstance(last_event_id, bytes) else str(last_event_id)
    return headers


def _stream_request(
    binding: str,
    operation: str,
    payload: dict[str, Any],
    *,
    tenant: str = "",
    rpc_id: str | int = "req-1",
) -> tuple[str, str, dict[str, Any]]:
    """(verb, url, request kwargs) for a streaming operation on a binding.

    ``binding``: ``jsonrpc``, ``rest`` (POST) or ``rest-get`` (GET, SubscribeToTask only).
    ``operation``: ``SendStreamingMessage`` (payload: SendMessageRequest) or ``SubscribeToTask``
    (payload: ``{"id": ...}``).
    """
    if binding == "jsonrpc":
        params = {**payload, **({"tenant": tenant} if tenant else {})}
        return "POST", "/", {"json": rpc(operation, params, rpc_id)}
    prefix = f"/{tenant}" if tenant else ""
    if operation == "SendStreamingMessage":
        assert binding == "rest"
        return "POST", f"{prefix}/message:stream", {"json": payload}
    path = f"{prefix}/tasks/{payload['id']}:subscribe"
    if binding == "rest-get":
        return "GET", path, {}
    return "POST", path, {"json": {}}


@asynccontextmanager
async def open_stream(
    http: httpx.AsyncClient,
    binding: str,
    operation: str,
    payload: dict[str, Any],
    *,
    tenant: str = "",
    rpc_id: str | int = "req-1",
    last_event_id: str | bytes | int | None = None,
) -> AsyncIterator[Stream]:
    verb, url, kwargs = _stream_request(binding, operation, payload, tenant=tenant, rpc_id=rpc_id)
    async with aconnect_sse(http, verb, url, headers=_headers(last_event_id), **kwargs) as source:
        response = source.response
        assert response.status_code == 200, (await response.aread()).decode()
        assert response.headers["content-type"].startswith("text/event-stream"), response.headers
        assert response.headers["cache-control"] == "no-cache"
        stream = Stream(source, "jsonrpc" if binding == "jsonrpc" else "rest", rpc_id if binding == "jsonrpc" else None)
        try:
            yield stream
        finally:
            await stream.aclose()


async def plain_error(
    http: httpx.AsyncClient,
    binding: str,
    operation: str,
    payload: dict[str, Any],
    *,
    tenant: str = "",
    last_event_id: str | bytes | int | None = None,
) -> tuple[str, int]:
    """Call a streaming operation expecting an error answered as ordinary JSON, not SSE.
    Returns (ErrorInfo reason, JSON-RPC code or HTTP status)."""
    verb, url, kwargs = _stream_request(binding, operation, payload, tenant=tenant, rpc_id=7)
    response = await http.request(verb, url, headers=_headers(last_event_id), **kwargs)
    content_type = response.headers["content-type"]
    assert not content_type.startswith("text/event-stream"), response.text
    body = response.json()
    if binding == "jsonrpc":
        assert response.status_code == 200
        assert content_type.startswith("application/json")
        assert body["id"] == 7
        assert "result" not in body
        return body["error"]["data"][0]["reason"], body["error"]["code"]
    assert content_type.startswith("application/a2a+json")
    assert body["error"]["code"] == response.status_code
    return body["error"]["details"][0]["reason"], response.status_code


async def violated_fields(
    http: httpx.AsyncClient, binding: str, operation: str, payload: dict[str, Any], *, last_event_id: str | bytes | int
) -> list[str]:
    """The fields a streaming operation's plain-JSON InvalidParams error names (its BadRequest)."""
    verb, url, kwargs = _stream_request(binding, operation, payload, rpc_id=7)
    response = await http.request(verb, url, headers=_headers(last_event_id), **kwargs)
    error = response.json()["error"]
    details = error["data"] if binding == "jsonrpc" else error["details"]
    return [v["field"] for detail in details for v in detail.get("fieldViolations", [])]


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for p in parts]


def progress(events: list[Event]) -> list[list[str]]:
    """The texts of the WORKING updates that carry a message (an agent's progress reports)."""
    return [
        texts(e.body["statusUpdate"]["status"]["message"]["parts"])
        for e in events
        if e.state == "TASK_STATE_WORKING" and "message" in e.body["statusUpdate"]["status"]
    ]


def assert_task_stream(events: list[Event], final_state: str) -> str:
    """A task-lifecycle stream: the Task snapshot first, consecutive ids, one task, ending at
    ``final_state`` and nowhere before. Returns the task id."""
    assert events, "no events"
    assert events[0].kind == "task", events[0]
    task_id = events[0].body["task"]["id"]
    assert [e.id for e in events] == list(range(events[0].id, events[0].id + len(events))), [e.id for e in events]
    for event in events[1:]:
        assert event.kind in {"statusUpdate", "artifactUpdate"}, event
        assert event.body[event.kind]["taskId"] == task_id
    states = [e.state for e in events if e.state is not None]
    assert states[-1] == final_state, states
    assert events[-1].state == final_state
    assert not (set(states[:-1]) & (TERMINAL | {final_state})), states
    return str(task_id)


JSONRPC_AND_REST = [pytest.param("jsonrpc", id="jsonrpc"), pytest.param("rest", id="rest")]
SUBSCRIBE_BINDINGS = [
    pytest.param("jsonrpc", id="jsonrpc"),
    pytest.param("rest", id="rest-post"),
    pytest.param("rest-get", id="rest-get"),
]


# --------------------------------------------------------------------------- SendStreamingMessage


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("binding", "tenant", "rpc_id"),
    [
        pytest.param("jsonrpc", "", "req-str", id="jsonrpc-string-id"),
        pytest.param("jsonrpc", "", 42, id="jsonrpc-int-id"),
        pytest.param("jsonrpc", "acme", 0, id="jsonrpc-tenant-zero-id"),
        pytest.param("rest", "", None, id="rest"),
        pytest.param("rest", "acme", None, id="rest-tenant"),
    ],
)
async def test_hello_streams_snapshot_then_updates_then_closes(binding: str, tenant: str, rpc_id: Any) -> None:
    async with serve() as server:
        msg = message("hello stream")
        ids = {} if rpc_id is None else {"rpc_id": rpc_id}
        async with open_stream(
            server.http, binding, "SendStreamingMessage", {"message": msg}, tenant=tenant, **ids
        ) as stream:
            events = await stream.rest()

        task_id = assert_task_stream(events, "TASK_STATE_COMPLETED")
        snapshot = events[0].body["task"]
        assert snapshot["history"][0]["messageId"] == msg["messageId"]
        assert snapshot["status"]["state"] in {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}
        assert all(e.body[e.kind]["contextId"] == snapshot["contextId"] for e in events)
        artifacts = [e.body["artifactUpdate"]["artifact"] for e in events if e.kind == "artifactUpdate"]
        assert [texts(a["parts"]) for a in artifacts] == [["Echo: hello stream"]]
        # After the snapshot the stream is the task's log: each event with its sequence number.
        assert [(e.id, e.body) for e in events[1:]] == server.store.log(task_id, events[0].id, tenant)
        assert (await get_task(server.http, task_id, tenant))["status"]["state"] == "TASK_STATE_COMPLETED"
        if tenant:  # the task lives under its tenant only
            assert await plain_error(server.http, binding, "SubscribeToTask", {"id": task_id}) == (
                "TASK_NOT_FOUND",
                -32001 if binding == "jsonrpc" else 404,
            )


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_sleep_streams_progress_and_closes_after_completed(binding: str) -> None:
    async with serve() as server:
        async with open_stream(server.http, binding, "SendStreamingMessage", {"message": message("sleep 2")}) as stream:
            events = await stream.rest()

        task_id = assert_task_stream(events, "TASK_STATE_COMPLETED")
        assert progress(events) == [["worked 1s of 2s"], ["worked 2s of 2s"]]
        kinds = [e.kind for e in events]
        assert kinds.count("artifactUpdate") == 1
        assert kinds.index("artifactUpdate") == len(kinds) - 2  # the artifact, then COMPLETED
        assert texts(events[-2].body["artifactUpdate"]["artifact"]["parts"]) == ["slept 2s"]
        assert [(e.id, e.body) for e in events[1:]] == server.store.log(task_id, events[0].id)


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_each_event_is_streamed_while_the_task_still_works(binding: str) -> None:
    async with serve(executor=STEPPED_EXECUTOR) as server:
        agent = server.stepped()
        # Given a task that takes each of its steps only when the test lets it
        async with open_stream(server.http, binding, "SendStreamingMessage", {"message": message("go")}) as stream:
            # When the stream is open, the Task arrives while the task is still working: immediate
            # feedback, not the log played back at the end (a stream that held its events back
            # would give none before the test lets the task go on, and fail next()'s hang guard)
            first = await stream.next()
            assert first.kind == "task"
            task_id = first.body["task"]["id"]
            assert (await get_task(server.http, task_id))["status"]["state"] not in TERMINAL
            # And each step's update arrives before the next step is let through
            steps = [[f"step {n} of {SteppedExecutor.STEPS}"] for n in range(1, SteppedExecutor.STEPS + 1)]
            for expected in steps[:-1]:
                agent.release()
                await stream.until(lambda e, expected=expected: progress([e]) == [expected])
                assert (await get_task(server.http, task_id))["status"]["state"] == "TASK_STATE_WORKING"
            # Then, the last step let through, the stream runs to COMPLETED and closes
            agent.release()
            await stream.rest()

        events = stream.events
        assert_task_stream(events, "TASK_STATE_COMPLETED")
        assert progress(events) == steps
        assert [(e.id, e.body) for e in events[1:]] == server.store.log(task_id, events[0].id)


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_send_streaming_closes_at_input_required_and_the_answer_opens_a_new_stream(binding: str) -> None:
    async with serve() as server:
        async with open_stream(server.http, binding, "SendStreamingMessage", {"message": message("ask me")}) as stream:
            asked = await stream.rest()
        task_id = assert_task_stream(asked, "TASK_STATE_INPUT_REQUIRED")
        question = asked[-1].body["statusUpdate"]["status"]["message"]
        assert texts(question["parts"]) == ["What is your name?"]
        assert (await get_task(server.http, task_id))["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

        answer = {"message": message("Ann", taskId=task_id)}
        async with open_stream(server.http, binding, "SendStreamingMessage", answer) as stream:
            answered = await stream.rest()
        assert assert_task_stream(answered, "TASK_STATE_COMPLETED") == task_id
        assert answered[0].id == asked[-1].id  # the snapshot includes exactly what the first stream saw
        assert answered[0].state == "TASK_STATE_INPUT_REQUIRED"
        assert answered[1].id == asked[-1].id + 1
        greeting = [e.body["artifactUpdate"]["artifact"] for e in answered if e.kind == "artifactUpdate"]
        assert [texts(a["parts"]) for a in greeting] == [["Nice to meet you, Ann!"]]
        assert [(e.id, e.body) for e in answered[1:]] == server.store.log(task_id, asked[-1].id)


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
@pytest.mark.parametrize(
    ("history_length", "expected"),
    [
        pytest.param(None, ["m1", "question", "m2"], id="unset-all"),
        pytest.param(0, None, id="zero-omitted"),
        pytest.param(1, ["m2"], id="one-newest"),
    ],
)
async def test_history_length_shapes_the_streamed_snapshot(
    binding: str, history_length: int | None, expected: list[str] | None
) -> None:
    async with serve() as server:
        # Given a task that asked a question: its history will be [m1, the question, m2]
        asked = await send(server.http, message("ask me", "m1"))
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        question_id = asked["status"]["message"]["messageId"]
        # When the answer is streamed with that historyLength
        payload: dict[str, Any] = {"message": message("Ann", "m2", taskId=asked["id"])}
        if history_length is not None:
            payload["configuration"] = {"historyLength": history_length}
        async with open_stream(server.http, binding, "SendStreamingMessage", payload) as stream:
            events = await stream.rest()
        # Then the Task snapshot carries that much history (none at all: no "history" field)
        assert_task_stream(events, "TASK_STATE_COMPLETED")
        snapshot = events[0].body["task"]
        if expected is None:
            assert "history" not in snapshot, snapshot
        else:
            ids = [m["messageId"] for m in snapshot["history"]]
            assert ids == [question_id if i == "question" else i for i in expected]
        # And on a new task too: historyLength 0 leaves the history out of its snapshot
        fresh = {"message": message("hello"), "configuration": {"historyLength": 0}}
        async with open_stream(server.http, binding, "SendStreamingMessage", fresh) as stream:
            created = await stream.rest()
        assert_task_stream(created, "TASK_STATE_COMPLETED")
        assert "history" not in created[0].body["task"], created[0].body


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
@pytest.mark.parametrize("how", [pytest.param("create", id="new-task"), pytest.param("continue", id="continuation")])
async def test_last_event_id_on_a_new_message_is_ignored(binding: str, how: str) -> None:
    async with serve() as server:
        # Given a message no stream has carried yet (a new task, or the answer to a question)
        payload: dict[str, Any] = {"message": message("hello")}
        if how == "continue":
            asked = await send(server.http, message("ask me"))
            assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            payload = {"message": message("Ann", taskId=asked["id"])}
        # When it is streamed with a Last-Event-ID (from some other stream: it cannot be this one's)
        async with open_stream(server.http, binding, "SendStreamingMessage", payload, last_event_id=3) as stream:
            events = await stream.rest()
        # Then the stream is the whole of it, Task snapshot first
        task_id = assert_task_stream(events, "TASK_STATE_COMPLETED")
        assert any(m["messageId"] == payload["message"]["messageId"] for m in events[0].body["task"]["history"])
        assert [(e.id, e.body) for e in events[1:]] == server.store.log(task_id, events[0].id)


# --------------------------------------------------------------------------- SubscribeToTask


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", SUBSCRIBE_BINDINGS)
async def test_subscribe_stays_open_through_input_required_until_completed(binding: str) -> None:
    async with serve() as server:
        task = await send(server.http, message("ask me"), returnImmediately=True)
        async with open_stream(server.http, binding, "SubscribeToTask", {"id": task["id"]}) as stream:
            snapshot = await stream.next()
            assert snapshot.kind == "task"
            assert snapshot.body["task"]["id"] == task["id"]
            if snapshot.state != "TASK_STATE_INPUT_REQUIRED":
                await stream.until(lambda e: e.state == "TASK_STATE_INPUT_REQUIRED")
            else:  # the snapshot's id is the newest event it includes
                assert server.store.log(task["id"])[-1][0] == snapshot.id
            answered = await send(server.http, message("Ann", taskId=task["id"]))
            assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
            await stream.rest()

        events = stream.events
        assert_task_stream(events, "TASK_STATE_COMPLETED")
        states = [e.state for e in events if e.state]
        assert "TASK_STATE_INPUT_REQUIRED" in states
        assert states.index("TASK_STATE_INPUT_REQUIRED") < len(states) - 2
        assert [(e.id, e.body) for e in events[1:]] == server.store.log(task["id"], events[0].id)


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", SUBSCRIBE_BINDINGS)
async def test_subscribe_errors_are_plain_json(binding: str) -> None:
    async with serve() as server:
        rest = binding != "jsonrpc"
        assert await plain_error(server.http, binding, "SubscribeToTask", {"id": "no-such-task"}) == (
            "TASK_NOT_FOUND",
            404 if rest else -32001,
        )
        assert await plain_error(server.http, binding, "SubscribeToTask", {"id": "x"}, tenant="acme") == (
            "TASK_NOT_FOUND",
            404 if rest else -32001,
        )
        done = await send(server.http, message("hello"))
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        unsupported = ("UNSUPPORTED_OPERATION", 400 if rest else -32004)
        assert await plain_error(server.http, binding, "SubscribeToTask", {"id": done["id"]}) == unsupported
        # (Resuming it at its last event is an empty stream: see the test after the next.)
        for bad in ("abc", "-1", "1.5"):
            assert await plain_error(
                server.http, binding, "SubscribeToTask", {"id": done["id"]}, last_event_id=bad
            ) == ("INVALID_PARAMS", 400 if rest else -32602), bad


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", SUBSCRIBE_BINDINGS)
async def test_resume_a_completed_task_with_events_left(binding: str) -> None:
    async with serve() as server:
        done = await send(server.http, message("hello"))
        log = server.store.log(done["id"])
        assert len(log) >= 3
        async with open_stream(
            server.http, binding, "SubscribeToTask", {"id": done["id"]}, last_event_id=log[0][0]
        ) as stream:
            events = await stream.rest()
        assert [(e.id, e.body) for e in events] == log[1:]  # no snapshot, no gap, then closed
        assert events[-1].state == "TASK_STATE_COMPLETED"


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", SUBSCRIBE_BINDINGS)
async def test_resuming_a_finished_task_at_its_last_event_is_an_empty_stream(binding: str) -> None:
    """A client that saw the last event of a finished task and reconnects (its connection dropped
    before it saw the stream close) gets a stream with no events that ends at once: every A2A
    client's iteration then ends without an error (a 204 or an error would make them fail)."""
    async with serve() as server:
        done = await send(server.http, message("hello"))
        last = server.store.log(done["id"])[-1][0]
        async with open_stream(
            server.http, binding, "SubscribeToTask", {"id": done["id"]}, last_event_id=last
        ) as stream:
            assert await stream.rest() == []
        # Without Last-Event-ID a finished task is still UnsupportedOperation (spec 3.1.6)
        rest = binding != "jsonrpc"
        assert await plain_error(server.http, binding, "SubscribeToTask", {"id": done["id"]}) == (
            "UNSUPPORTED_OPERATION",
            400 if rest else -32004,
        )


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["jsonrpc", "rest-get"])
async def test_a_v03_resubscribe_at_the_last_event_of_a_finished_task_is_an_empty_stream(how: str) -> None:
    async with serve() as server:
        done = await send(server.http, message("hello"))
        last = server.store.log(done["id"])[-1][0]
        headers = {"Last-Event-ID": str(last), "Accept": "text/event-stream"}  # no A2A-Version: 0.3
        if how == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": done["id"]}}
            request = server.http.build_request("POST", "/", json=body, headers=headers)
        else:
            request = server.http.build_request("GET", f"/v1/tasks/{done['id']}:subscribe", headers=headers)
        response = await server.http.send(request, stream=True)
        try:
            raw = (await response.aread()).decode()
        finally:
            await response.aclose()
        assert response.status_code == 200, raw
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "data:" not in raw


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_send_streaming_with_invalid_last_event_id_is_invalid_params(binding: str) -> None:
    async with serve() as server:
        for bad in ("abc", "1e3", "9" * 40):
            reason = await plain_error(
                server.http, binding, "SendStreamingMessage", {"message": message("hello")}, last_event_id=bad
            )
            assert reason == ("INVALID_PARAMS", 400 if binding == "rest" else -32602), bad
        listed = (await server.http.post("/", json=rpc("ListTasks", {}), headers=V1)).json()["result"]
        assert listed["totalSize"] == 0  # refused before anything was created


@pytest.mark.asyncio
async def test_streaming_disabled_is_unsupported_operation() -> None:
    async with serve(streaming=False) as server:
        card = (await server.http.get("/.well-known/agent-card.json")).json()
        assert not card["capabilities"].get("streaming", False)
        for binding in ("jsonrpc", "rest"):
            assert await plain_error(server.http, binding, "SendStreamingMessage", {"message": message("hi")}) == (
                "UNSUPPORTED_OPERATION",
                400 if binding == "rest" else -32004,
            )
        task = await send(server.http, message("ask me"))
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        for binding in ("jsonrpc", "rest", "rest-get"):
            assert await plain_error(server.http, binding, "SubscribeToTask", {"id": task["id"]}) == (
                "UNSUPPORTED_OPERATION",
                -32004 if binding == "jsonrpc" else 400,
            )


# --------------------------------------------------------------------------- keep-alive and framing


def _blocks(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line == "":
            if current:
                blocks.append(current)
            current = []
        else:
            current.append(line)
    assert not current, f"unterminated SSE block {current}"
    return blocks


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_ping_comments_and_raw_framing(binding: str) -> None:
    async with serve(stream_ping_seconds=0.2) as server:
        verb, url, kwargs = _stream_request(binding, "SendStreamingMessage", {"message": message("sleep 1")}, rpc_id=5)
        lines: list[str] = []
        async with server.http.stream(verb, url, headers=V1, **kwargs) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                lines.append(line)

        blocks = _blocks(lines)
        pings = [b for b in blocks if b == [": ping"]]
        events = [b for b in blocks if b != [": ping"]]
        assert len(pings) >= 2, blocks
        ids: list[int] = []
        for block in events:
            assert len(block) == 2, block  # exactly "id: n" and one data line; no "event:"
            assert block[0].startswith("id: ")
            assert block[0][4:].isdigit()
            assert block[1].startswith("data: ")
            ids.append(int(block[0][4:]))
            data = json.loads(block[1][6:])
            if binding == "jsonrpc":
                assert data["id"] == 5
                data = data["result"]
            assert len(data) == 1
            assert set(data) <= KINDS
        assert ids == sorted(set(ids))
        assert ids == list(range(ids[0], ids[0] + len(ids)))
        last = json.loads(events[-1][1][6:])
        last = last["result"] if binding == "jsonrpc" else last
        assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


# --------------------------------------------------------------------------- Last-Event-ID resume


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("binding", "how"),
    [
        pytest.param("jsonrpc", "subscribe", id="jsonrpc-subscribe"),
        pytest.param("jsonrpc", "resend", id="jsonrpc-resend"),
        pytest.param("rest", "subscribe", id="rest-get-subscribe"),
        pytest.param("rest", "resend", id="rest-resend"),
    ],
)
async def test_last_event_id_resume_gets_exactly_the_rest(binding: str, how: str) -> None:
    async with serve() as server:
        payload = {"message": message("sleep 3")}
        async with open_stream(server.http, binding, "SendStreamingMessage", payload) as stream:
            head = await stream.take(3)
        task_id = head[0].body["task"]["id"]
        last = head[-1].id
        await asyncio.sleep(1.2)  # disconnected while the task moves on

        if how == "subscribe":
            sub_binding = "rest-get" if binding == "rest" else binding
            resumed = open_stream(server.http, sub_binding, "SubscribeToTask", {"id": task_id}, last_event_id=last)
        else:  # the same SendStreamingMessage again (same messageId): the same task, resumed
            resumed = open_stream(server.http, binding, "SendStreamingMessage", payload, last_event_id=last)
        async with resumed as stream:
            tail = await stream.rest()

        assert tail
        assert all(e.kind != "task" for e in tail)
        assert [e.id for e in tail] == list(range(last + 1, last + 1 + len(tail)))
        assert [(e.id, e.body) for e in tail] == server.store.log(task_id, last)
        assert_task_stream(head + tail, "TASK_STATE_COMPLETED")
        assert [e.kind for e in head + tail].count("artifactUpdate") == 1  # the agent ran once


@pytest.mark.asyncio
async def test_stream_deadline_ends_cleanly_and_resume_continues() -> None:
    # (the deadline is past the stream's hold of its first event, so the snapshot always goes out)
    async with serve(executor=STEPPED_EXECUTOR, stream_max_seconds=2 * FIRST_EVENT_HOLD_SECONDS) as server:
        agent = server.stepped()
        # Given a task held at its first step: only the stream's deadline can end its stream
        async with open_stream(server.http, "jsonrpc", "SendStreamingMessage", {"message": message("go")}) as s:
            first = await s.rest(within=15.0)
        # Then the stream ended cleanly (rest() returned: the server closed it), without the task
        assert first
        assert first[0].kind == "task"
        task_id = first[0].body["task"]["id"]
        assert first[-1].state not in TERMINAL
        await wait_for(server.http, task_id, {"TASK_STATE_WORKING"})

        # When the client resumes on SubscribeToTask after each step the task takes, on each binding
        collected = list(first)
        cycle = ["rest", "rest-get", "jsonrpc"]
        rounds = 0
        while collected[-1].state != "TASK_STATE_COMPLETED":
            rounds += 1
            assert rounds < 15, [e.state for e in collected]
            if rounds <= SteppedExecutor.STEPS:
                agent.release()
            async with open_stream(
                server.http, cycle[rounds % 3], "SubscribeToTask", {"id": task_id}, last_event_id=collected[-1].id
            ) as s:
                more = await s.rest(within=15.0)
            assert all(e.kind != "task" for e in more)
            collected.extend(more)
        # Then the streams, each ended by its deadline until the last step, add up to the whole log
        assert rounds >= SteppedExecutor.STEPS
        assert_task_stream(collected, "TASK_STATE_COMPLETED")
        assert [(e.id, e.body) for e in collected[1:]] == server.store.log(task_id, collected[0].id)


RESUME_CALLS = [
    pytest.param("jsonrpc", "SubscribeToTask", id="jsonrpc-subscribe"),
    pytest.param("rest", "SubscribeToTask", id="rest-post-subscribe"),
    pytest.param("rest-get", "SubscribeToTask", id="rest-get-subscribe"),
    pytest.param("jsonrpc", "SendStreamingMessage", id="jsonrpc-resend"),
    pytest.param("rest", "SendStreamingMessage", id="rest-resend"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("binding", "operation"), RESUME_CALLS)
async def test_a_last_event_id_beyond_the_log_is_invalid_params(binding: str, operation: str) -> None:
    async with serve(stream_max_seconds=20.0) as server:
        # Given a running task (for a re-send: the same message again, same messageId)
        msg = message("sleep 2")
        task = await send(server.http, msg, returnImmediately=True)
        payload = {"id": task["id"]} if operation == "SubscribeToTask" else {"message": msg}
        invalid = ("INVALID_PARAMS", -32602 if binding == "jsonrpc" else 400)
        # When the client claims to have seen an event the task never had
        # Then the call is refused before the first byte, naming the header
        assert await plain_error(server.http, binding, operation, payload, last_event_id=999) == invalid
        assert await violated_fields(server.http, binding, operation, payload, last_event_id=999) == ["Last-Event-ID"]
        # And the same once the task is over, one past its last event
        await wait_for(server.http, task["id"], TERMINAL)
        last = server.store.log(task["id"])[-1][0]
        assert await plain_error(server.http, binding, operation, payload, last_event_id=last + 1) == invalid
        # While its last event itself is still a valid resume point for a subscriber with news
        async with open_stream(
            server.http, "jsonrpc", "SubscribeToTask", {"id": task["id"]}, last_event_id=last - 1
        ) as stream:
            tail = await stream.rest()
        assert [e.id for e in tail] == [last]


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
@pytest.mark.parametrize(
    ("executor", "text", "ended_by"),
    [
        pytest.param(None, "hello", "TASK_STATE_COMPLETED", id="completed"),
        pytest.param(None, "ask me", "TASK_STATE_INPUT_REQUIRED", id="input-required"),
        pytest.param(REPLY_EXECUTOR, "Ann", "message", id="message-only"),
    ],
)
async def test_resending_a_finished_stream_from_its_last_event_id_is_an_empty_stream(
    binding: str, executor: str | None, text: str, ended_by: str
) -> None:
    overrides = {"executor": executor} if executor else {}
    # (a stream deadline far beyond rest()'s bound: a stream left open fails there, never by a clock)
    async with serve(stream_max_seconds=600.0, **overrides) as server:
        # Given a SendStreamingMessage stream that ran to its end
        payload = {"message": message(text)}
        async with open_stream(server.http, binding, "SendStreamingMessage", payload) as stream:
            first = await stream.rest()
        assert (first[-1].kind if ended_by == "message" else first[-1].state) == ended_by
        # When the client re-sends it, resuming after the last event it got
        async with open_stream(
            server.http, binding, "SendStreamingMessage", payload, last_event_id=first[-1].id
        ) as stream:
            again = await stream.rest()
        # Then the stream closes at once with nothing in it (not at the stream deadline)
        assert again == []
        if ended_by != "message":  # (a message-only task has no task id to look up)
            assert first[-1].id == server.store.log(first[0].body["task"]["id"])[-1][0]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("²".encode("latin-1"), id="superscript-two"),
        pytest.param("³".encode("latin-1"), id="superscript-three"),
        pytest.param("-1", id="negative"),
        pytest.param("1.5", id="decimal"),
        pytest.param("abc", id="letters"),
        pytest.param("1" * 40, id="40-digits"),
    ],
)
async def test_a_malformed_last_event_id_is_invalid_params_never_a_server_error(bad: str | bytes) -> None:
    async with serve() as server:
        # Given a task that waits for input (non-terminal: only the header can be wrong)
        task = await send(server.http, message("ask me"))
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        calls = [
            ("jsonrpc", "SubscribeToTask", {"id": task["id"]}),
            ("rest", "SubscribeToTask", {"id": task["id"]}),
            ("rest-get", "SubscribeToTask", {"id": task["id"]}),
            ("jsonrpc", "SendStreamingMessage", {"message": message("hello")}),
            ("rest", "SendStreamingMessage", {"message": message("hello")}),
        ]
        for binding, operation, payload in calls:
            # When a streaming call carries that Last-Event-ID
            error = await plain_error(server.http, binding, operation, payload, last_event_id=bad)
            # Then it is a spec-shaped InvalidParams naming the header, as plain JSON
            assert error == ("INVALID_PARAMS", -32602 if binding == "jsonrpc" else 400), (binding, operation)
            fields = await violated_fields(server.http, binding, operation, payload, last_event_id=bad)
            assert fields == ["Last-Event-ID"], (binding, operation)
        # And no message was accepted
        listed = (await server.http.post("/", json=rpc("ListTasks", {}), headers=V1)).json()["result"]
        assert listed["totalSize"] == 1


# --------------------------------------------------------------------------- fan-out and disconnects


@pytest.mark.asyncio
async def test_concurrent_subscribers_receive_identical_sequences() -> None:
    async with serve() as server:
        # A task waiting for input: both subscriptions start from the same snapshot.
        task = await send(server.http, message("ask me"))
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        async with (
            open_stream(server.http, "jsonrpc", "SubscribeToTask", {"id": task["id"]}) as a,
            open_stream(server.http, "rest-get", "SubscribeToTask", {"id": task["id"]}) as b,
        ):
            await asyncio.gather(a.next(), b.next())
            await send(server.http, message("Ann", taskId=task["id"]))
            await asyncio.gather(a.rest(), b.rest())
        assert [(e.id, e.body) for e in a.events] == [(e.id, e.body) for e in b.events]
        assert_task_stream(a.events, "TASK_STATE_COMPLETED")

        # A running task: whatever each snapshot included, the events after both are the same.
        running = await send(server.http, message("sleep 2"), returnImmediately=True)
        async with (
            open_stream(server.http, "rest", "SubscribeToTask", {"id": running["id"]}) as c,
            open_stream(server.http, "jsonrpc", "SubscribeToTask", {"id": running["id"]}, rpc_id=3) as d,
        ):
            await asyncio.gather(c.rest(), d.rest())
        for stream in (c, d):
            assert_task_stream(stream.events, "TASK_STATE_COMPLETED")
        since = max(c.events[0].id, d.events[0].id)
        tail_c = [(e.id, e.body) for e in c.events[1:] if e.id > since]
        tail_d = [(e.id, e.body) for e in d.events[1:] if e.id > since]
        assert tail_c == tail_d
        assert tail_c == server.store.log(running["id"], since)
        assert len(tail_c) >= 3


@pytest.mark.asyncio
async def test_a_disconnecting_subscriber_affects_neither_the_task_nor_other_subscribers() -> None:
    async with serve() as server:
        task = await send(server.http, message("sleep 3"), returnImmediately=True)
        async with open_stream(server.http, "jsonrpc", "SubscribeToTask", {"id": task["id"]}) as staying:
            async with open_stream(server.http, "rest", "SubscribeToTask", {"id": task["id"]}) as leaving:
                await leaving.take(2)
            # ``leaving`` hung up mid-stream; ``staying`` follows the task to its end.
            await staying.rest()
        assert_task_stream(staying.events, "TASK_STATE_COMPLETED")
        assert [(e.id, e.body) for e in staying.events[1:]] == server.store.log(task["id"], staying.events[0].id)
        done = await get_task(server.http, task["id"])
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert texts(done["artifacts"][0]["parts"]) == ["slept 3s"]


@pytest.mark.asyncio
@pytest.mark.parametrize("text", ["sleep 3", "ask me"])
async def test_polling_stops_promptly_after_a_disconnect(text: str) -> None:
    async with serve() as server:
        task = await send(server.http, message(text), returnImmediately=True)
        task_id = task["id"]
        async with open_stream(server.http, "rest", "SubscribeToTask", {"id": task_id}) as stream:
            await stream.next()
            before = server.store.read_count(task_id)
            await asyncio.sleep(0.5)
            assert server.store.read_count(task_id) > before + 2  # the stream polls the event log
        await asyncio.sleep(1.0)
        settled = server.store.read_count(task_id)
        await asyncio.sleep(1.0)
        assert server.store.read_count(task_id) == settled, "the stream kept polling after the client left"

        if text == "ask me":
            assert (await get_task(server.http, task_id))["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            await send(server.http, message("Ann", taskId=task_id))
        else:  # still running when the polling had stopped, and it finishes all the same
            assert (await get_task(server.http, task_id))["status"]["state"] == "TASK_STATE_WORKING"
        done = await wait_for(server.http, task_id, TERMINAL)
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert server.store.read_count(task_id) == settled


# --------------------------------------------------------------------------- message-only replies


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_a_message_only_reply_is_a_stream_of_exactly_that_message(binding: str) -> None:
    async with serve(executor=REPLY_EXECUTOR) as server:
        payload = {"message": message("Ann")}
        async with open_stream(server.http, binding, "SendStreamingMessage", payload) as stream:
            events = await stream.rest()
        [event] = events
        assert event.kind == "message"
        reply = event.body["message"]
        assert reply["role"] == "ROLE_AGENT"
        assert texts(reply["parts"]) == ["hi, Ann"]

        # Sending the same message again answers with the same single Message, without a new run.
        async with open_stream(server.http, binding, "SendStreamingMessage", payload) as stream:
            again = await stream.rest()
        assert [(e.kind, e.body) for e in again] == [("message", event.body)]
        listed = (await server.http.post("/", json=rpc("ListTasks", {}), headers=V1)).json()["result"]
        assert listed["totalSize"] == 0


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", JSONRPC_AND_REST)
async def test_a_late_message_only_reply_ends_the_task_stream_with_completed(binding: str) -> None:
    # (a stream deadline far beyond rest()'s bound: a stream left open fails there, never by a clock)
    async with serve(executor=SLOW_REPLY_EXECUTOR, stream_max_seconds=600.0) as server:
        # Given an agent that answers with a Message only, but after the snapshot was sent
        async with open_stream(server.http, binding, "SendStreamingMessage", {"message": message("Ann")}) as stream:
            snapshot = await stream.next()
            assert snapshot.kind == "task"
            task_id = snapshot.body["task"]["id"]
            # And a subscriber following the same task
            async with open_stream(server.http, "rest-get", "SubscribeToTask", {"id": task_id}) as subscriber:
                # When the reply arrives
                events = [snapshot, *await stream.rest()]
                watched = await subscriber.rest()

        # Then the stream is the snapshot, the claim, the Message and COMPLETED, and it closed
        # with the task (not at the stream deadline)
        kinds = [e.kind for e in events]
        assert kinds[0] == "task"
        assert kinds[-2:] == ["message", "statusUpdate"]
        assert [e.state for e in events[1:-2]] == ["TASK_STATE_WORKING"] * (len(events) - 3)
        reply = events[-2].body["message"]
        assert texts(reply["parts"]) == ["late hi, Ann"]
        final = events[-1].body["statusUpdate"]
        assert final["taskId"] == task_id
        assert final["status"]["state"] == "TASK_STATE_COMPLETED"
        assert final["status"]["message"] == reply
        assert final["status"]["timestamp"]
        assert [(e.id, e.body) for e in events[1:]] == server.store.log(task_id, events[0].id)
        # And the subscriber saw the same ending, and its stream closed too
        assert watched[-1].body == events[-1].body
        task = await get_task(server.http, task_id)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["status"]["message"] == reply
