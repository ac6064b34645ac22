"""A blocking SendMessage whose task has webhooks answers once the push of the state it answers with
was delivered or tried (``a2a_serverless.operations._push_wait``): on the memory runtime, with the
production delivery code POSTing to a real receiver on 127.0.0.1.

The memory runtime has no table stream: :class:`Pipeline` plays the dispatcher, watching the
caller's tasks and running ``items_for_event`` and ``deliver`` (the production sender) for every
event they log, as the deployed functions do. The end-to-end path on the local stack (stream,
dispatcher, FIFO queue, delivery function) is ``tests/e2e/test_push.py``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.models import (
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_serverless.operations.push_configs import create_push_config
from a2a_serverless.operations.send_message import send_message
from a2a_serverless.ports import PushProgress, Scope, TaskQuery
from a2a_serverless.push.delivery import deliver
from a2a_serverless.push.dispatch import items_for_event
from a2a_serverless.push.sender import WebhookSender
from a2a_serverless.runtime import Runtime
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE, send_request

if TYPE_CHECKING:
    from conftest import ReceivedRequest, WebhookReceiver  # tests/conftest.py

HANG_GUARD = 120.0
"""Seconds a blocking call may take before the test calls it hung; well under the bounds below,
which only a wait that never sees its push would reach."""
UNREACHED = 900.0


class Pipeline:
    """The dispatcher and delivery function for the memory runtime: every 10 ms, for each of the
    scope's tasks that logged new events, one delivery per config up to its newest event (first
    attempts only: a failed one is left where the delivery function would leave it for a retry)."""

    def __init__(self, runtime: Runtime, scope: Scope) -> None:
        self.runtime, self.scope = runtime, scope
        self._seen: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="push-pipeline", daemon=True)

    def __enter__(self) -> Pipeline:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=HANG_GUARD)

    def _run(self) -> None:
        store = self.runtime.store
        with WebhookSender(timeout=2.0, allow_private=True) as sender:
            while not self._stop.wait(0.01):
                for task in store.list_tasks(self.scope, TaskQuery(page_size=100)).tasks:
                    head = store.get_head(self.scope, task.id)
                    if head is None or head.last_seq <= self._seen.get(task.id, 0):
                        continue
                    self._seen[task.id] = head.last_seq
                    for item in items_for_event(store, self.scope, task.id, head.last_seq):
                        deliver(
                            item, store=store, sender=sender, signer=None, attempt=1, max_attempts=3, timeout_seconds=2
                        )


@contextmanager
def a_runtime(**settings: object) -> Iterator[Runtime]:
    """The memory runtime, with a delivery queue configured (so blocking sends wait for pushes) and
    webhooks on 127.0.0.1 allowed; its worker runs on threads."""
    values: dict[str, object] = {
        "store": "memory",
        "push_queue_url": "memory://deliveries",
        "allow_private_webhooks": True,
        "poll_interval_seconds": 0.01,
        "blocking_wait_seconds": UNREACHED,
        "push_wait_seconds": UNREACHED,
        **settings,
    }
    runtime = build_runtime(Settings(**values), store=MemoryTaskStore())  # type: ignore[arg-type]
    try:
        yield runtime
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


def blocking(request: SendMessageRequest, hook: str = "") -> SendMessageRequest:
    """``request`` made blocking, with an inline webhook when ``hook`` is given."""
    push = TaskPushNotificationConfig(url=hook) if hook else None
    return request.model_copy(update={"configuration": SendMessageConfiguration(task_push_notification_config=push)})


def answer(runtime: Runtime, request: SendMessageRequest) -> SendMessageResponse:
    """Send ``request`` and return the answer, failing (not hanging) past the hang guard."""
    outcome: list[SendMessageResponse | BaseException] = []

    def call() -> None:
        try:
            outcome.append(send_message(request, CTX, runtime))
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call, name="blocking-send", daemon=True)
    caller.start()
    caller.join(HANG_GUARD)
    assert outcome, f"no answer within {HANG_GUARD} s (hang guard)"
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def terminal_push(requests: list[ReceivedRequest], path: str) -> bool:
    return any(
        r.path == path
        and r.status < 300
        and r.json().get("statusUpdate", {}).get("status", {}).get("state") == "TASK_STATE_COMPLETED"
        for r in requests
    )


def a_closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_answer_comes_once_the_terminal_push_was_delivered(webhook_receiver: WebhookReceiver) -> None:
    with a_runtime() as runtime, Pipeline(runtime, SCOPE):
        # When a blocking SendMessage carries an inline webhook config
        response = answer(runtime, blocking(send_request("hello"), f"{webhook_receiver.url}/inline"))

        # Then the receiver holds the COMPLETED push the moment the answer is here
        assert terminal_push(webhook_receiver.requests, "/inline")
        assert response.task is not None
        assert response.task.status.state is TaskState.TASK_STATE_COMPLETED


def test_a_continuation_waits_for_a_config_created_on_the_task(webhook_receiver: WebhookReceiver) -> None:
    with a_runtime() as runtime, Pipeline(runtime, SCOPE):
        # Given a task waiting for input, and a webhook config created on it
        asked = answer(runtime, blocking(send_request("ask me", "m-1")))
        assert asked.task is not None
        assert asked.task.status.state is TaskState.TASK_STATE_INPUT_REQUIRED
        hook = TaskPushNotificationConfig(task_id=asked.task.id, url=f"{webhook_receiver.url}/created")
        create_push_config(hook, CTX, runtime)

        # When the answer is sent, blocking
        response = answer(runtime, blocking(send_request("Ann", "m-2", task_id=asked.task.id)))

        # Then the task's COMPLETED push is at the receiver when the answer comes
        assert terminal_push(webhook_receiver.requests, "/created")
        assert response.task is not None
        assert response.task.status.state is TaskState.TASK_STATE_COMPLETED


def test_a_webhook_that_is_down_costs_one_failed_attempt_not_the_bound() -> None:
    # Given a webhook nothing listens on, and a bound the hang guard is far below
    dead = f"http://127.0.0.1:{a_closed_port()}/hook"
    with a_runtime() as runtime, Pipeline(runtime, SCOPE):
        # When a blocking SendMessage names it
        response = answer(runtime, blocking(send_request("hello"), dead))

    # Then the answer came (within the hang guard: the failed attempt ended the wait, not the
    # bound), with the task terminal, and the config's first event held for a retry
    assert response.task is not None
    assert response.task.status.state is TaskState.TASK_STATE_COMPLETED
    progress = runtime.store.push_progress(SCOPE, response.task.id)
    assert list(progress.values()) == [PushProgress(0, 1)]


def test_without_deliveries_the_answer_comes_at_the_bound(webhook_receiver: WebhookReceiver) -> None:
    # Given no delivery pipeline at all (nothing will ever deliver or try), and a short bound
    with a_runtime(push_wait_seconds=0.2) as runtime:
        # When a blocking SendMessage carries a webhook config
        response = answer(runtime, blocking(send_request("hello"), f"{webhook_receiver.url}/never"))

    # Then the answer still comes, with the task as settled
    assert response.task is not None
    assert response.task.status.state is TaskState.TASK_STATE_COMPLETED
    assert webhook_receiver.requests == []


class ProgressReads(MemoryTaskStore):
    """The memory store, counting the push-progress reads (the wait's only cost)."""

    reads = 0

    def push_progress(self, scope: Scope, task_id: str) -> dict[str, PushProgress]:
        self.reads += 1
        return super().push_progress(scope, task_id)


@pytest.mark.parametrize(
    ("settings", "inline"),
    [
        pytest.param({}, False, id="a-new-task-without-a-config"),
        pytest.param({"push_wait_seconds": 0}, True, id="the-wait-turned-off"),
        pytest.param({"push_queue_url": ""}, True, id="no-delivery-queue"),
        pytest.param({"push_notifications": False}, False, id="push-off"),
    ],
)
def test_nothing_is_read_when_no_webhook_can_be_waited_for(settings: dict[str, object], inline: bool) -> None:
    store = ProgressReads()
    values: dict[str, object] = {
        "store": "memory",
        "push_queue_url": "memory://deliveries",
        "allow_private_webhooks": True,
        "poll_interval_seconds": 0.01,
        **settings,
    }
    runtime = build_runtime(Settings(**values), store=store)  # type: ignore[arg-type]
    try:
        request = blocking(send_request("hello"), "http://127.0.0.1:9/hook" if inline else "")
        response = answer(runtime, request)
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]

    assert response.task is not None
    assert response.task.status.state is TaskState.TASK_STATE_COMPLETED
    assert store.reads == 0
