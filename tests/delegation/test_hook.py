"""The push receiver of durable delegation (``a2a_serverless.delegation.hook``), over HTTP: which
pushes wake a delegation's wait, and which are refused. The durable executions are a recording
``DurableRuns`` (the port the runtime calls; the real ones are exercised in
``test_durable_delegation.py``)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from starlette.testclient import TestClient

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.delegation.hook import MAX_PEEK_BYTES, hook_url, token_digest
from a2a_serverless.ports import Scope
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.tasks import a_task_with_events

SCOPE = Scope("acme", "alice")
TOKEN = "s3cret-token"


class RecordedRuns:
    def __init__(self) -> None:
        self.resumed: list[tuple[str, str]] = []

    def start(self, name: str, payload: str) -> None:
        raise AssertionError("the receiver starts nothing")

    def resume(self, callback_id: str, payload: str) -> None:
        self.resumed.append((callback_id, payload))

    def abandon(self, callback_id: str, reason: str) -> None:
        raise AssertionError("the receiver ends nothing")


@pytest.fixture
def served() -> tuple[TestClient, RecordedRuns, str]:
    store = MemoryTaskStore()
    runs = RecordedRuns()
    runtime = build_runtime(Settings(store="memory", execution_mode="durable"), store=store, durable=runs)
    record = a_task_with_events(store, SCOPE, 2)  # WORKING
    store.commit(replace(record, waiting_callback="cb-7", waiting_token=token_digest(TOKEN)))
    path = hook_url("", SCOPE, "t1")
    app = create_app(runtime)
    app.state.store = store
    return TestClient(app), runs, path


def push(client: TestClient, path: str, body: Any, **headers: str) -> Any:
    return client.post(path, content=json.dumps(body).encode(), headers=headers)


ENDED = {"task": {"id": "r1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}


@pytest.mark.parametrize(
    "body",
    [
        ENDED,
        {"statusUpdate": {"taskId": "r1", "contextId": "c", "status": {"state": "TASK_STATE_FAILED"}}},
        {"id": "r1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}},  # a bare Task
        {"kind": "task", "id": "r1", "status": {"state": "completed"}},  # a v0.3 Task
        "not an object",
    ],
)
def test_a_push_with_the_token_that_may_say_the_task_ended_wakes_the_wait(
    served: tuple[TestClient, RecordedRuns, str], body: Any
) -> None:
    client, runs, path = served
    answer = push(client, path, body, **{"X-A2A-Notification-Token": TOKEN})
    assert (answer.status_code, answer.json()) == (200, {"status": "woken"})
    assert [callback for callback, _ in runs.resumed] == ["cb-7"]


@pytest.mark.parametrize(
    "body",
    [
        {"task": {"id": "r1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}},
        {"artifactUpdate": {"taskId": "r1", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}},
        {"kind": "status-update", "status": {"state": "working"}},
    ],
)
def test_a_push_saying_the_task_still_works_is_noted_and_wakes_nothing(
    served: tuple[TestClient, RecordedRuns, str], body: Any
) -> None:
    client, runs, path = served
    answer = push(client, path, body, Authorization=f"Bearer {TOKEN}")
    assert (answer.status_code, answer.json()) == (200, {"status": "noted"})
    assert runs.resumed == []


def test_a_body_too_large_to_peek_at_wakes_the_wait(served: tuple[TestClient, RecordedRuns, str]) -> None:
    client, runs, path = served
    body = {"task": {"status": {"state": "TASK_STATE_WORKING"}}, "pad": "x" * MAX_PEEK_BYTES}
    assert push(client, path, body, **{"X-A2A-Notification-Token": TOKEN}).status_code == 200
    assert len(runs.resumed) == 1


@pytest.mark.parametrize("headers", [{}, {"X-A2A-Notification-Token": "wrong"}, {"Authorization": "Basic x"}])
def test_a_push_without_the_token_is_refused(served: tuple[TestClient, RecordedRuns, str], headers: Any) -> None:
    client, runs, path = served
    answer = push(client, path, ENDED, **headers)
    assert answer.status_code == 401
    assert runs.resumed == []


def test_a_push_for_another_owner_or_a_task_that_waits_for_nothing_is_not_found(
    served: tuple[TestClient, RecordedRuns, str],
) -> None:
    client, runs, _ = served
    for path in (hook_url("", Scope("acme", "mallory"), "t1"), hook_url("", SCOPE, "t2"), "/_a2a/delegations/%%"):
        answer = push(client, path, ENDED, **{"X-A2A-Notification-Token": TOKEN})
        assert answer.status_code == 404, path
    assert runs.resumed == []


def test_a_push_with_the_token_while_no_wait_is_open_is_noted(served: tuple[TestClient, RecordedRuns, str]) -> None:
    # Given the wait's callback gone (before the first wait opens, or after our run ended)
    client, runs, path = served
    store = client.app.state.store  # type: ignore[attr-defined]
    record = store.get_task(SCOPE, "t1")
    assert record is not None
    store.commit(replace(record, waiting_callback=""))
    # Then a push carrying the token is acknowledged (the run reads the task after each wait opens)
    answer = push(client, path, ENDED, **{"X-A2A-Notification-Token": TOKEN})
    assert (answer.status_code, answer.json()) == (200, {"status": "noted"})
    assert runs.resumed == []
