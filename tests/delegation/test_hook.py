"""The push receiver of durable delegation (``a2a_serverless.delegation.hook``), over HTTP: which
pushes wake a delegation's wait, which are refused, and that one push wakes it at most once per
state however often it comes. The durable executions are a recording ``DurableRuns`` (the port the
runtime calls; the real ones are exercised in ``test_durable_delegation.py``)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from starlette.testclient import TestClient

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.delegation.hook import MAX_PEEK_BYTES, hook_url, new_ref, token_digest
from a2a_serverless.ports import DelegationRef, Scope
from a2a_serverless.transitions import hold_for_sleep
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
    ref = new_ref()
    store.put_delegation_ref(ref, DelegationRef(SCOPE, "t1", token_digest(TOKEN)))
    path = hook_url("", ref)
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


def test_a_body_too_large_to_peek_at_wakes_the_wait_once(served: tuple[TestClient, RecordedRuns, str]) -> None:
    client, runs, path = served
    body = {"task": {"status": {"state": "TASK_STATE_WORKING"}}, "pad": "x" * MAX_PEEK_BYTES}
    for _ in range(3):
        assert push(client, path, body, **{"X-A2A-Notification-Token": TOKEN}).status_code == 200
    assert len(runs.resumed) == 1


@pytest.mark.parametrize("headers", [{}, {"X-A2A-Notification-Token": "wrong"}, {"Authorization": "Basic x"}])
def test_a_push_without_the_token_is_answered_as_an_unknown_reference(
    served: tuple[TestClient, RecordedRuns, str], headers: Any
) -> None:
    # A caller without the token cannot tell a delegation that waits from one that does not exist
    client, runs, path = served
    answer = push(client, path, ENDED, **headers)
    unknown = push(client, hook_url("", new_ref()), ENDED, **headers)
    unknown_with_a_token = push(client, hook_url("", new_ref()), ENDED, **{"X-A2A-Notification-Token": TOKEN})
    for said in (answer, unknown, unknown_with_a_token):
        assert (said.status_code, said.json()) == (404, {"status": "no such delegation"})
    assert runs.resumed == []


def test_a_reference_for_a_task_that_waits_for_nothing_or_one_of_the_old_shape_wakes_nothing(
    served: tuple[TestClient, RecordedRuns, str],
) -> None:
    client, runs, _ = served
    store = client.app.state.store  # type: ignore[attr-defined]
    elsewhere = new_ref()
    store.put_delegation_ref(elsewhere, DelegationRef(SCOPE, "t2", token_digest(TOKEN)))  # no task t2
    answer = push(client, hook_url("", elsewhere), ENDED, **{"X-A2A-Notification-Token": TOKEN})
    assert (answer.status_code, answer.json()) == (200, {"status": "noted"})
    old_shape = "/_a2a/delegations/" + base64.urlsafe_b64encode(b'["acme","alice","t1"]').decode().rstrip("=")
    for path in (old_shape, "/_a2a/delegations/%%"):
        assert push(client, path, ENDED, **{"X-A2A-Notification-Token": TOKEN}).status_code == 404, path
    assert runs.resumed == []


def test_replays_of_a_push_wake_the_delegation_once_per_state_it_announces(
    served: tuple[TestClient, RecordedRuns, str],
) -> None:
    client, runs, path = served
    store = client.app.state.store  # type: ignore[attr-defined]
    token = {"X-A2A-Notification-Token": TOKEN}
    # When one push saying the remote task completed comes 50 times
    answers = [push(client, path, ENDED, **token).json()["status"] for _ in range(50)]
    # Then the first wakes the wait, the rest are noted
    assert answers == ["woken"] + ["noted"] * 49
    assert [callback for callback, _ in runs.resumed] == ["cb-7"]
    # ... and still not once the run opens its next wait (the read did not confirm it, say)
    record = store.get_task(SCOPE, "t1")
    assert record is not None
    held = hold_for_sleep(
        replace(record, running_message_id="m1"),
        message_id="m1",
        now=0,
        lease_seconds=60,
        callback_id="cb-8",
        token=token_digest(TOKEN),
    )
    assert held.record is not None
    store.commit(held.record)
    assert {push(client, path, ENDED, **token).json()["status"] for _ in range(50)} == {"noted"}
    # A push announcing another state wakes it once more; so does one we cannot read, once
    failed = {"statusUpdate": {"taskId": "r1", "contextId": "c", "status": {"state": "TASK_STATE_FAILED"}}}
    assert [push(client, path, failed, **token).json()["status"] for _ in range(3)] == ["woken", "noted", "noted"]
    assert [push(client, path, "?", **token).json()["status"] for _ in range(3)] == ["woken", "noted", "noted"]
    assert [callback for callback, _ in runs.resumed] == ["cb-7", "cb-8", "cb-8"]


def test_a_new_delegation_of_the_task_is_woken_anew(served: tuple[TestClient, RecordedRuns, str]) -> None:
    client, runs, path = served
    store = client.app.state.store  # type: ignore[attr-defined]
    assert push(client, path, ENDED, **{"X-A2A-Notification-Token": TOKEN}).json() == {"status": "woken"}
    # Given the task's next delegation, with its own token and reference
    record = store.get_task(SCOPE, "t1")
    assert record is not None
    held = hold_for_sleep(
        replace(record, running_message_id="m1"),
        message_id="m1",
        now=0,
        lease_seconds=60,
        callback_id="cb-9",
        token=token_digest("another"),
    )
    assert held.record is not None
    assert held.record.push_woken == ""
    store.commit(held.record)
    ref = new_ref()
    store.put_delegation_ref(ref, DelegationRef(SCOPE, "t1", token_digest("another")))
    # Then the old reference's pushes wake nothing, and the new one's wake it
    assert push(client, path, ENDED, **{"X-A2A-Notification-Token": TOKEN}).json() == {"status": "noted"}
    answer = push(client, hook_url("", ref), ENDED, **{"X-A2A-Notification-Token": "another"})
    assert answer.json() == {"status": "woken"}
    assert [callback for callback, _ in runs.resumed] == ["cb-7", "cb-9"]


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
