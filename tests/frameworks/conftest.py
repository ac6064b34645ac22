"""An agent served in process for the framework suites: the app on a memory runtime whose
executor is the adapter under test (an instance, as a user's module would name it), called over
the HTTP+JSON binding by two callers (API keys ``alice`` and ``bob``), with the task's event log
read back from the store, as clients and webhooks get it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from a2a_serverless.blobs import blob_key
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor
from a2a_serverless.json_types import Json
from a2a_serverless.models import StreamResponse, TaskState
from a2a_serverless.ports import Scope
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

KEYS = {"alice-key": "alice", "bob-key": "bob"}


class ServedAgent:
    """``executor`` behind the app; ``send`` is a SendMessage of one caller (``as_``)."""

    def __init__(self, executor: AgentExecutor, **settings: Any) -> None:
        """``settings`` override the memory runtime's (``store="dynamodb"``, its table and bucket)."""
        fields = {"store": "memory", "poll_interval_seconds": 0.01, "auth_mode": "api-key", "api_keys": KEYS}
        self.runtime: Runtime = build_runtime(Settings(**{**fields, **settings}))
        self.runtime.make_executor = lambda: executor
        self._loop = asyncio.Runner()
        transport = httpx.ASGITransport(app=create_app(self.runtime))
        self._http = httpx.AsyncClient(transport=transport, base_url="http://agent", timeout=30)

    def send(
        self,
        text: str,
        *,
        as_: str = "alice",
        task_id: str | None = None,
        context_id: str | None = None,
        wait: bool = True,
        parts: list[Json] | None = None,
    ) -> Json:
        """SendMessage of ``text`` (or ``parts``, the message's parts as JSON), answered with its task."""
        message: Json = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts or [{"text": text}]}
        if task_id:
            message["taskId"] = task_id
        if context_id:
            message["contextId"] = context_id
        body: Json = {"message": message, "configuration": {"returnImmediately": not wait}}
        answer = self._post("/message:send", body, as_)
        task: Json = answer["task"]
        return task

    def reply(self, asked: Json, text: str, **fields: Any) -> Json:
        """The caller's answer to the question ``asked`` (a task waiting for input): the same task."""
        return self.send(text, task_id=asked["id"], context_id=asked["contextId"], **fields)

    def cancel_mid_stream(self, text: str) -> list[StreamResponse]:
        """Send ``text``, cancel the task once three chunks of its answer are stored, and return its
        event log once CANCELED, checking nothing was written after it."""
        task = self.send(text, wait=False)
        self.wait_until(task["id"], lambda events: len(chunks(events)) >= 3)
        self.cancel(task["id"])
        events = self.wait_until(task["id"], lambda events: TaskState.TASK_STATE_CANCELED in states(events))
        last = events[-1].status_update
        assert last is not None, events[-1]  # nothing (no chunk) after CANCELED
        assert last.status.state is TaskState.TASK_STATE_CANCELED
        return events

    def cancel(self, task_id: str, *, as_: str = "alice") -> Json:
        return self._post(f"/tasks/{task_id}:cancel", {}, as_)

    def task(self, task_id: str, *, as_: str = "alice") -> Json:
        response = self._loop.run(self._http.get(f"/tasks/{task_id}", headers=_headers(as_)))
        response.raise_for_status()
        task: Json = response.json()
        return task

    def events(self, task_id: str, *, as_: str = "alice") -> list[StreamResponse]:
        """The task's event log, in order."""
        stored = self.runtime.store.read_events(Scope("", as_), task_id, 0, 10_000)
        return [event.event for event in stored]

    def wait_until(self, task_id: str, done: Any, *, as_: str = "alice", seconds: float = 20) -> list[StreamResponse]:
        """The event log once ``done(events)`` holds (a hang guard, not a timing assertion)."""
        deadline = time.monotonic() + seconds
        while not done(events := self.events(task_id, as_=as_)):
            assert time.monotonic() < deadline, f"the task never got there: {events}"
            time.sleep(0.01)
        return events

    def stored_object(self, task_id: str, content: bytes, *, as_: str = "alice") -> bytes:
        """The object the store keeps for a large part of the task with this content."""
        assert self.runtime.offloader is not None
        return self.runtime.offloader.blobs.get(blob_key(Scope("", as_), task_id, hashlib.sha256(content).hexdigest()))

    def _post(self, path: str, body: Json, as_: str) -> Json:
        response = self._loop.run(self._http.post(path, json=body, headers=_headers(as_)))
        assert response.status_code == 200, response.text
        answer: Json = response.json()
        return answer

    def close(self) -> None:
        try:
            self._loop.run(self._http.aclose())
            self._loop.close()
        finally:
            self.runtime.queue.shutdown()  # type: ignore[attr-defined]


def _headers(owner: str) -> dict[str, str]:
    key = next(key for key, name in KEYS.items() if name == owner)
    return {"A2A-Version": "1.0", "Authorization": f"Bearer {key}"}


def assert_stored_as_object(agent: ServedAgent, task_id: str, content: bytes, media_type: str) -> None:
    """A file the agent produced, above ``blob_threshold_bytes``: the task's event holds a reference
    to an object holding it, and the client gets its bytes."""
    stored = [p for e in agent.events(task_id) if e.artifact_update for p in e.artifact_update.artifact.parts]
    part = next(p for p in stored if p.media_type == media_type)
    assert part.raw is None
    assert (part.url or "").startswith("a2a-blob:raw:")
    assert agent.stored_object(task_id, content) == content
    files = [p for a in agent.task(task_id)["artifacts"] for p in a["parts"] if p.get("mediaType") == media_type]
    assert [base64.b64decode(p["raw"]) for p in files] == [content]


def chunks(events: list[StreamResponse]) -> list[tuple[str, bool, bool]]:
    """Each artifact update of the log: (its text, append, last chunk)."""
    return [
        (
            "".join(p.text or "" for p in e.artifact_update.artifact.parts),
            e.artifact_update.append,
            e.artifact_update.last_chunk,
        )
        for e in events
        if e.artifact_update is not None
    ]


def tool_statuses(events: list[StreamResponse]) -> list[Json]:
    """The metadata of each status update that has some: the tool statuses."""
    return [e.status_update.metadata for e in events if e.status_update and e.status_update.metadata]


def status_data(events: list[StreamResponse]) -> list[Any]:
    """The data parts of the status messages, in order: what ``tool_details`` shows."""
    messages = [e.status_update.status.message for e in events if e.status_update and e.status_update.status.message]
    return [p.data for message in messages if message for p in message.parts if p.data is not None]


def states(events: list[StreamResponse]) -> list[TaskState]:
    return [e.status_update.status.state for e in events if e.status_update is not None]


def answer_text(task: Json) -> str:
    """The text of the task's ``answer`` artifacts, joined."""
    return "".join(
        part.get("text", "")
        for artifact in task.get("artifacts", [])
        if artifact.get("name") == "answer"
        for part in artifact["parts"]
    )


@pytest.fixture
def serve() -> Iterator[Any]:
    served: list[ServedAgent] = []

    def start(executor: AgentExecutor) -> ServedAgent:
        served.append(ServedAgent(executor))
        return served[-1]

    yield start
    for agent in served:
        agent.close()
