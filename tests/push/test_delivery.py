"""Delivering a task's events to one config (``push.delivery``): order, cursor, retries, dead
letters. Real HTTP: the production sender POSTs to a receiver on 127.0.0.1 (private addresses are
allowed here, as in local development); the store is the in-memory one."""

from __future__ import annotations

import json
import logging
import socket
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from a2a_serverless.adapters import MemoryTaskStore
from a2a_serverless.models import (
    AuthenticationInfo,
    StreamResponse,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_serverless.ports import PushProgress, Scope
from a2a_serverless.push.delivery import DeliveryItem, DeliveryOutcome, backoff_seconds, deliver
from a2a_serverless.push.sender import WebhookSender
from a2a_serverless.push.signing import MemoryKeySource, NotificationSigner
from a2a_serverless.push.verify import verify_notification
from testkit.tasks import a_task_with_events

if TYPE_CHECKING:
    from conftest import WebhookReceiver  # tests/conftest.py (the fixture's type)

SCOPE = Scope("acme", "alice")
ISSUER = "https://agent.example/v1"


@pytest.fixture
def store() -> MemoryTaskStore:
    return MemoryTaskStore()


@pytest.fixture
def signer() -> NotificationSigner:
    return NotificationSigner(MemoryKeySource(), issuer=ISSUER)


def a_config(store: MemoryTaskStore, receiver: WebhookReceiver, config_id: str = "p1", **fields: object) -> None:
    config = TaskPushNotificationConfig(id=config_id, task_id="t1", url=f"{receiver.url}/{config_id}", **fields)
    store.put_push_config(SCOPE, config)


def item(up_to: int, config_id: str = "p1", **fields: int) -> DeliveryItem:
    return DeliveryItem(SCOPE.tenant, SCOPE.owner, "t1", config_id, up_to_seq=up_to, **fields)  # type: ignore[arg-type]


def run(
    store: MemoryTaskStore,
    sender: WebhookSender,
    work: DeliveryItem,
    *,
    attempt: int = 1,
    max_attempts: int = 3,
    signer: NotificationSigner | None = None,
    remaining: float = float("inf"),
) -> DeliveryOutcome:
    result = deliver(
        work,
        store=store,
        sender=sender,
        signer=signer,
        attempt=attempt,
        max_attempts=max_attempts,
        timeout_seconds=2.0,
        remaining_seconds=lambda: remaining,
    )
    return result.outcome


def seqs(receiver: WebhookReceiver, path: str = "/p1") -> list[int]:
    return [int(r.headers["x-a2a-event-sequence"]) for r in receiver.accepted(path)]


def cursor(store: MemoryTaskStore, config_id: str = "p1") -> int:
    target = store.get_push_target(SCOPE, "t1", config_id)
    assert target is not None
    return target.delivered_seq


def test_every_event_after_the_cursor_is_posted_in_order_with_the_spec_headers(
    store: MemoryTaskStore, sender: WebhookSender, signer: NotificationSigner, webhook_receiver: WebhookReceiver
) -> None:
    # Given a task with 3 events and a config with a token and Bearer authentication
    a_task_with_events(store, SCOPE, 3)
    a_config(
        store,
        webhook_receiver,
        token="tok-1",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="s3cr3t"),
    )

    # When its delivery runs, signed
    outcome = run(store, sender, item(3), signer=signer)

    # Then every event arrived once, in order, as StreamResponse JSON with the headers
    assert outcome is DeliveryOutcome.DONE
    assert seqs(webhook_receiver) == [1, 2, 3]
    first, second, _ = webhook_receiver.accepted("/p1")
    assert first.headers["content-type"] == "application/a2a+json"
    assert first.headers["authorization"] == "Bearer s3cr3t"
    assert first.headers["x-a2a-notification-token"] == "tok-1"
    assert first.headers["x-a2a-event-id"] == "t1:1"
    assert first.json()["task"]["id"] == "t1"
    assert second.json()["statusUpdate"]["metadata"] == {"n": 2}
    # and each carries a JWT a receiver can verify against the published keys
    verified = verify_notification(
        second.headers, second.body, keys=signer.jwks(), issuer=ISSUER, audience=f"{webhook_receiver.url}/p1"
    )
    assert (verified.task_id, verified.event_id) == ("t1", "t1:2")
    assert cursor(store) == 3


def test_without_authentication_the_signed_jwt_is_the_bearer_token(
    store: MemoryTaskStore, sender: WebhookSender, signer: NotificationSigner, webhook_receiver: WebhookReceiver
) -> None:
    a_task_with_events(store, SCOPE, 1)
    a_config(store, webhook_receiver)

    run(store, sender, item(1), signer=signer)

    (request,) = webhook_receiver.accepted()
    assert request.headers["authorization"] == "Bearer " + request.headers["x-a2a-notification-signature"]
    assert "x-a2a-notification-token" not in request.headers


def test_a_duplicate_or_late_trigger_sends_nothing_twice(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    # Given the trigger for event 3 was handled before the one for event 2 (and then again)
    a_task_with_events(store, SCOPE, 3)
    a_config(store, webhook_receiver)
    run(store, sender, item(3))

    # When the late and the duplicate triggers run
    run(store, sender, item(2))
    run(store, sender, item(3))

    # Then each event went out exactly once, in order
    assert seqs(webhook_receiver) == [1, 2, 3]


def test_a_config_created_mid_task_gets_only_what_follows(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    a_task_with_events(store, SCOPE, 4)
    config = TaskPushNotificationConfig(id="p1", task_id="t1", url=f"{webhook_receiver.url}/p1")
    store.put_push_config(SCOPE, config, start_after_seq=2)

    run(store, sender, item(4))

    assert seqs(webhook_receiver) == [3, 4]


def test_credentials_and_tokens_never_reach_the_logs(
    store: MemoryTaskStore,
    sender: WebhookSender,
    signer: NotificationSigner,
    webhook_receiver: WebhookReceiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given a config with secrets, and a receiver that fails so that every log path runs
    a_task_with_events(store, SCOPE, 2)
    a_config(
        store,
        webhook_receiver,
        token="sekrit-token",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="sekrit-credentials"),
    )
    webhook_receiver.fail_next(1, status=503)
    caplog.set_level(logging.DEBUG)

    # When it is retried, refused, given up on, and delivered
    run(store, sender, item(2), signer=signer)
    webhook_receiver.fail_next(1, status=401)
    run(store, sender, item(2), attempt=2, signer=signer)
    webhook_receiver.set_down(500)
    run(store, sender, item(2), attempt=3, max_attempts=3, signer=signer)

    # Then no log record, at any level from any library, carries a secret or a signed token
    assert webhook_receiver.requests
    assert "webhook delivery failed; will retry" in caplog.text
    assert "webhook refused the notification" in caplog.text
    jwts = {r.headers["x-a2a-notification-signature"] for r in webhook_receiver.requests}
    for secret in ["sekrit-token", "sekrit-credentials", *jwts]:
        assert secret not in caplog.text


def test_a_deleted_config_receives_nothing_more(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    a_task_with_events(store, SCOPE, 2)
    a_config(store, webhook_receiver)
    store.delete_push_config(SCOPE, "t1", "p1")

    assert run(store, sender, item(2)) is DeliveryOutcome.DONE
    assert webhook_receiver.requests == []


def test_a_retryable_failure_stops_at_that_event_and_the_retry_resumes_there(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    # Given event 2's first POST fails with 503
    a_task_with_events(store, SCOPE, 3)
    a_config(store, webhook_receiver)
    assert run(store, sender, item(1)) is DeliveryOutcome.DONE
    webhook_receiver.fail_next(1, status=503)

    # When the item for event 3 runs, then runs again (attempt 2)
    first = deliver(item(3), store=store, sender=sender, signer=None, attempt=1, max_attempts=3, timeout_seconds=2.0)
    second = run(store, sender, item(3), attempt=2)

    # Then the first attempt stopped at event 2 (nothing after it was sent), the second finished
    assert (first.outcome, first.next_seq, first.reason) == (DeliveryOutcome.RETRY, 2, "HTTP 503")
    assert second is DeliveryOutcome.DONE
    assert seqs(webhook_receiver) == [1, 2, 3]
    assert [r.status for r in webhook_receiver.requests] == [204, 503, 204, 204]


def test_a_failed_attempt_marks_its_event_tried_and_the_events_behind_it_held_back(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    # Given a receiver that took event 1 and now answers 503
    a_task_with_events(store, SCOPE, 4)
    a_config(store, webhook_receiver)
    assert run(store, sender, item(1)) is DeliveryOutcome.DONE
    webhook_receiver.set_down(503)

    # When the next item's first attempt fails on event 2
    assert run(store, sender, item(3)) is DeliveryOutcome.RETRY

    # Then event 2 is marked tried, and every event after the cursor counts as tried (held back
    # behind it): event 4 too, which no item has asked for yet. That is what a blocking
    # SendMessage waits for
    target = store.get_push_target(SCOPE, "t1", "p1")
    assert target is not None
    assert (target.delivered_seq, target.tried_seq) == (1, 2)
    progress = store.push_progress(SCOPE, "t1")["p1"]
    assert progress == PushProgress(1, 2)
    assert progress.held_back
    assert all(progress.tried(seq) for seq in (1, 2, 3, 4))

    # And once the receiver is back, the retry delivers what was held back, and nothing is held
    webhook_receiver.set_up()
    assert run(store, sender, item(3), attempt=2) is DeliveryOutcome.DONE
    assert seqs(webhook_receiver) == [1, 2, 3]
    progress = store.push_progress(SCOPE, "t1")["p1"]
    assert not progress.held_back
    assert progress.tried(3)
    assert not progress.tried(4)


def test_a_webhook_that_refuses_connections_is_marked_tried(store: MemoryTaskStore, sender: WebhookSender) -> None:
    # Given a config whose webhook nothing listens on
    a_task_with_events(store, SCOPE, 2)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    url = f"http://127.0.0.1:{closed}/hook"
    store.put_push_config(SCOPE, TaskPushNotificationConfig(id="p1", task_id="t1", url=url))

    # When its delivery runs, it fails to connect: event 1 is tried, and event 2 held back behind it
    assert run(store, sender, item(2)) is DeliveryOutcome.RETRY
    progress = store.push_progress(SCOPE, "t1")["p1"]
    assert progress == PushProgress(0, 1)
    assert progress.tried(2)


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_retryable_statuses_are_retried(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver, status: int
) -> None:
    a_task_with_events(store, SCOPE, 1)
    a_config(store, webhook_receiver)
    webhook_receiver.fail_next(1, status=status)

    assert run(store, sender, item(1)) is DeliveryOutcome.RETRY
    assert cursor(store) == 0


def test_when_the_attempts_are_spent_the_rest_is_dead_lettered_and_later_events_flow(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    # Given a receiver that is down
    a_task_with_events(store, SCOPE, 3)
    a_config(store, webhook_receiver)
    webhook_receiver.set_down(503)

    # When the last allowed attempt fails
    result = deliver(item(3), store=store, sender=sender, signer=None, attempt=3, max_attempts=3, timeout_seconds=2.0)

    # Then everything the item owed is parked as one range, with the reason, and the cursor moves on
    assert result.outcome is DeliveryOutcome.DONE
    (dead,) = result.dead_letters
    assert (dead.from_seq, dead.up_to_seq) == (1, 3)
    assert dead.last_error == "gave up after 3 attempts: HTTP 503"
    assert cursor(store) == 3

    # And once the receiver is back, the redriven range is delivered despite the cursor
    webhook_receiver.set_up()
    assert run(store, sender, replace(dead, last_error="", nonce="n1")) is DeliveryOutcome.DONE
    assert seqs(webhook_receiver) == [1, 2, 3]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_a_refused_event_is_dead_lettered_alone_and_the_next_ones_go_on(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver, status: int
) -> None:
    a_task_with_events(store, SCOPE, 3)
    a_config(store, webhook_receiver)
    run(store, sender, item(1))
    webhook_receiver.fail_next(1, status=status)

    result = deliver(item(3), store=store, sender=sender, signer=None, attempt=1, max_attempts=3, timeout_seconds=2.0)

    assert result.outcome is DeliveryOutcome.DONE
    (dead,) = result.dead_letters
    assert (dead.from_seq, dead.up_to_seq, dead.last_error) == (2, 2, f"refused: HTTP {status}")
    assert seqs(webhook_receiver) == [1, 3]
    assert cursor(store) == 3


def test_a_refused_address_is_final(store: MemoryTaskStore) -> None:
    # A config stored while private targets were allowed (or a name that now resolves inside)
    a_task_with_events(store, SCOPE, 1)
    store.put_push_config(SCOPE, TaskPushNotificationConfig(id="p1", task_id="t1", url="https://127.0.0.1:9/hook"))

    with WebhookSender(timeout=1.0) as guarded:
        result = deliver(
            item(1), store=store, sender=guarded, signer=None, attempt=1, max_attempts=3, timeout_seconds=1
        )

    (dead,) = result.dead_letters
    assert dead.last_error.startswith("refused:")
    assert cursor(store) == 1


def test_out_of_time_it_stops_cleanly_for_a_continuation(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    a_task_with_events(store, SCOPE, 3)
    a_config(store, webhook_receiver)

    result = deliver(
        item(3),
        store=store,
        sender=sender,
        signer=None,
        attempt=1,
        max_attempts=3,
        timeout_seconds=2.0,
        remaining_seconds=lambda: 3.0,
    )

    assert (result.outcome, result.next_seq, result.delivered) == (DeliveryOutcome.CONTINUE, 1, 0)
    assert webhook_receiver.requests == []


def test_a_delivery_item_round_trips_and_names_its_group() -> None:
    one = DeliveryItem("acme", "alice", "t1", "p1", up_to_seq=7, from_seq=3, last_error="x", nonce="n")

    assert DeliveryItem.from_json(one.to_json()) == one
    assert one.group_id == replace(one, up_to_seq=9).group_id
    assert one.group_id != replace(one, config_id="p2").group_id
    assert one.group_id != replace(one, tenant="other").group_id
    assert one.deduplication_id != replace(one, up_to_seq=8).deduplication_id
    assert one.deduplication_id != replace(one, nonce="m").deduplication_id
    assert len(one.group_id) == 64


@pytest.mark.parametrize(
    ("attempt", "rand", "retry_after", "expected"),
    [
        pytest.param(1, 0.0, None, 1, id="first-retry-lower-bound"),
        pytest.param(1, 1.0, None, 2, id="first-retry-upper-bound"),
        pytest.param(4, 0.0, None, 8, id="doubles"),
        pytest.param(4, 1.0, None, 16, id="doubles-upper"),
        pytest.param(20, 1.0, None, 900, id="capped"),
        pytest.param(1, 0.0, 60.0, 60, id="retry-after-wins-when-longer"),
        pytest.param(1, 0.0, 5000.0, 900, id="retry-after-capped"),
    ],
)
def test_backoff_is_exponential_with_equal_jitter(
    attempt: int, rand: float, retry_after: float | None, expected: int
) -> None:
    assert backoff_seconds(attempt, base=2, cap=900, retry_after=retry_after, rand=lambda: rand) == expected


# --------------------------------------------------------------------------- v0.3 configs


def test_a_v03_config_gets_the_whole_v03_task_as_it_stood_after_each_event(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    """A v0.3 receiver expects a Task (``"kind":"task"``, kebab-case states),
    not a StreamResponse. Each notification is the task folded up to its event, also when the
    delivery starts in the middle of the log."""
    from a2a.compat.v0_3 import types as t03

    from a2a_serverless.models import Artifact, Part, TaskArtifactUpdateEvent

    a_task_with_events(store, SCOPE, 2)  # snapshot (submitted), working
    record = store.get_task(SCOPE, "t1")
    assert record is not None
    artifact = Artifact(artifact_id="a1", parts=[Part(text="partial")])
    done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
    store.commit(
        record,
        [
            StreamResponse(artifact_update=TaskArtifactUpdateEvent(task_id="t1", context_id="c1", artifact=artifact)),
            StreamResponse(status_update=TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=done)),
        ],
    )
    config = TaskPushNotificationConfig(id="p1", task_id="t1", url=f"{webhook_receiver.url}/p1", token="tok")
    store.put_push_config(SCOPE, config, start_after_seq=2, protocol_version="0.3")

    assert run(store, sender, item(4)) is DeliveryOutcome.DONE
    received = webhook_receiver.accepted("/p1")
    assert [r.headers["x-a2a-event-sequence"] for r in received] == ["3", "4"]
    tasks = [t03.Task.model_validate(json.loads(r.body)) for r in received]
    assert all(json.loads(r.body)["kind"] == "task" for r in received)
    assert [t.status.state for t in tasks] == [t03.TaskState.working, t03.TaskState.completed]
    assert [len(t.artifacts or []) for t in tasks] == [1, 1]  # folded: the artifact stays
    for r in received:
        assert r.headers["content-type"] == "application/json"
        assert r.headers["x-a2a-notification-token"] == "tok"


def test_a_v1_config_on_the_same_task_still_gets_stream_responses(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    a_task_with_events(store, SCOPE, 2)
    a_config(store, webhook_receiver)
    assert run(store, sender, item(2)) is DeliveryOutcome.DONE
    bodies = [json.loads(r.body) for r in webhook_receiver.accepted("/p1")]
    assert [list(b) for b in bodies] == [["task"], ["statusUpdate"]]
    assert webhook_receiver.accepted("/p1")[0].headers["content-type"] == "application/a2a+json"


class CursorWrites(MemoryTaskStore):
    """The memory store, counting the delivery cursor's writes."""

    def __init__(self) -> None:
        super().__init__()
        self.cursor_writes: list[int] = []

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        self.cursor_writes.append(seq)
        return super().advance_push_cursor(scope, task_id, config_id, seq)


def test_an_item_stores_its_cursor_once_not_once_per_notification(
    sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    # Given a task with 4 events (a hello's notifications) and a config
    store = CursorWrites()
    a_task_with_events(store, SCOPE, 4)
    a_config(store, webhook_receiver)

    # When its delivery runs
    assert run(store, sender, item(4)) is DeliveryOutcome.DONE

    # Then all four went out, and the cursor was written once, past the last
    assert seqs(webhook_receiver) == [1, 2, 3, 4]
    assert store.cursor_writes == [4]
    assert cursor(store) == 4


def test_a_long_item_stores_its_cursor_every_cursor_every_events(
    sender: WebhookSender, webhook_receiver: WebhookReceiver
) -> None:
    from a2a_serverless.push.delivery import CURSOR_EVERY

    # Given a task with more events than CURSOR_EVERY
    store = CursorWrites()
    total = CURSOR_EVERY + 3
    a_task_with_events(store, SCOPE, total)
    a_config(store, webhook_receiver)

    # When its delivery runs
    assert run(store, sender, item(total)) is DeliveryOutcome.DONE

    # Then the cursor was written every CURSOR_EVERY events and at the end: a delivery function that
    # died part-way would send again at most CURSOR_EVERY of them
    assert seqs(webhook_receiver) == list(range(1, total + 1))
    assert store.cursor_writes == [CURSOR_EVERY, total]


def test_what_was_delivered_before_a_failure_is_not_sent_again(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a task with 3 events, and a sender that raises on the third (a bug, not an HTTP failure)
    a_task_with_events(store, SCOPE, 3)
    a_config(store, webhook_receiver)
    real = sender.send
    calls = 0

    def failing_third(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise RuntimeError("boom")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sender, "send", failing_third)

    # When its delivery runs and the third raises
    with pytest.raises(RuntimeError):
        run(store, sender, item(3))

    # Then the cursor says the first two went out, so a retry of the item starts at the third
    assert seqs(webhook_receiver) == [1, 2]
    assert cursor(store) == 2
