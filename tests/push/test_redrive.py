"""Redriving push dead letters (``push.redrive``) on moto's SQS (with the local stack's fixes of
moto, as the local stack runs it), the queues made from the template: what a look, a dry run and a
redrive leave on the queues, and, with the real delivery function polling the delivery queue and a
real webhook on 127.0.0.1 that keeps failing, that a redrive ends and costs each dead letter its
attempts once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from a2a_serverless.adapters.sqs import SqsDeliveryQueue
from a2a_serverless.functions import push_delivery
from a2a_serverless.lambda_.push import reset_push_services
from a2a_serverless.models import TaskPushNotificationConfig
from a2a_serverless.ports import Scope, TaskStore
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.push.redrive import Outcome, deliveries_pending, follow, read_dead_letters, redrive
from a2a_serverless.wiring import get_runtime, reset_runtime
from a2a_serverless_dev._template import sqs_event_sources
from a2a_serverless_dev.moto_fixes import install_all
from a2a_serverless_dev.pollers import SqsPoller, running
from a2a_serverless_dev.resources import create_resources, load_template
from testkit.aws import moto_clients
from testkit.tasks import a_task_with_events

if TYPE_CHECKING:
    from conftest import WebhookReceiver  # tests/conftest.py (the fixture's type)

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
WAIT = 60.0
"""Hang guard (seconds); never a measured expectation."""


@dataclass
class Queues:
    sqs: Any
    queue_url: str
    dead_letter_url: str
    queue_arn: str

    @property
    def parking(self) -> SqsDeliveryQueue:
        """The delivery function's own way to park a dead letter."""
        return SqsDeliveryQueue(self.queue_url, self.dead_letter_url, client=self.sqs)

    def counts(self, url: str) -> tuple[int, int]:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        found = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
        return int(found[names[0]]), int(found[names[1]])

    def queued_items(self) -> list[DeliveryItem]:
        messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10)["Messages"]
        return [DeliveryItem.from_json(m["Body"]) for m in messages]


@pytest.fixture
def queues() -> Iterator[Queues]:
    install_all()  # moto as the local stack runs it
    with moto_clients() as (dynamodb, sqs):
        made = create_resources(dynamodb, sqs, template=load_template())
        yield Queues(
            sqs,
            made.queue_urls["PushDeliveryQueue"],
            made.queue_urls["PushDeadLetterQueue"],
            made.queue_arns["PushDeliveryQueue"],
        )


def letter(scope: Scope, config_id: str, seq: int, error: str = "refused: HTTP 404") -> DeliveryItem:
    return DeliveryItem(scope.tenant, scope.owner, "t1", config_id, up_to_seq=seq, from_seq=seq, last_error=error)


def test_a_look_sees_every_dead_letter_and_leaves_each_visible(queues: Queues) -> None:
    # Given six dead letters of one webhook (one FIFO group) and two of another
    for seq in range(1, 7):
        queues.parking.dead_letter(letter(ALICE, "p1", seq))
    for seq in (1, 2):
        queues.parking.dead_letter(letter(ALICE, "p2", seq))

    # When the queue is looked at twice
    first = read_dead_letters(queues.sqs, queues.dead_letter_url, long_poll_seconds=0)
    second = read_dead_letters(queues.sqs, queues.dead_letter_url, long_poll_seconds=0)

    # Then both looks see all eight, know they saw everything, and hid nothing
    for look in (first, second):
        assert sorted((d.item.config_id, d.item.from_seq) for d in look.letters if d.item) == [
            *(("p1", seq) for seq in range(1, 7)),
            ("p2", 1),
            ("p2", 2),
        ]
        assert look.complete is True
    assert queues.counts(queues.dead_letter_url) == (8, 0)


def test_a_dry_run_counts_every_dead_letter_by_reason_and_hides_none(queues: Queues) -> None:
    # Given four dead letters of one webhook, already looked at once
    for seq in (1, 2, 3):
        queues.parking.dead_letter(letter(ALICE, "p1", seq))
    queues.parking.dead_letter(letter(ALICE, "p1", 4, "gave up after 3 attempts: HTTP 503"))
    read_dead_letters(queues.sqs, queues.dead_letter_url, long_poll_seconds=0)

    # When a dry run counts them
    report = redrive(queues.sqs, queues.dead_letter_url, queues.queue_url, dry_run=True, long_poll_seconds=0)

    # Then it counts all four, by reason, and every one is still visible where it was
    assert (len(report.moved), report.present, report.complete) == (4, 4, True)
    assert report.reasons == {"refused": 3, "gave up after 3 attempts": 1}
    assert queues.counts(queues.dead_letter_url) == (4, 0)
    assert queues.counts(queues.queue_url) == (0, 0)


def test_a_redrive_moves_each_dead_letter_once_stamped_with_its_id(queues: Queues) -> None:
    for seq in (1, 2, 3):
        queues.parking.dead_letter(letter(ALICE, "p1", seq))

    report = redrive(queues.sqs, queues.dead_letter_url, queues.queue_url, long_poll_seconds=0)

    assert [(i.from_seq, i.up_to_seq, i.last_error, i.redrive) for i in report.moved] == [
        (seq, seq, "", report.redrive_id) for seq in (1, 2, 3)
    ]
    assert queues.counts(queues.dead_letter_url) == (0, 0)
    assert queues.queued_items() == report.moved


def test_a_limited_redrive_moves_that_many_and_leaves_the_rest_visible(queues: Queues) -> None:
    for seq in range(1, 6):
        queues.parking.dead_letter(letter(ALICE, "p1", seq))

    report = redrive(queues.sqs, queues.dead_letter_url, queues.queue_url, limit=2, long_poll_seconds=0)

    assert [i.from_seq for i in report.moved] == [1, 2]
    assert queues.counts(queues.dead_letter_url) == (3, 0)


def test_a_scoped_redrive_moves_that_caller_s_dead_letters_only(queues: Queues) -> None:
    queues.parking.dead_letter(letter(ALICE, "p1", 1))
    queues.parking.dead_letter(letter(BOB, "p1", 1))
    queues.parking.dead_letter(letter(ALICE, "p2", 1))

    report = redrive(queues.sqs, queues.dead_letter_url, queues.queue_url, scope=ALICE, long_poll_seconds=0)

    assert sorted((i.owner, i.config_id) for i in report.moved) == [("alice", "p1"), ("alice", "p2")]
    (left,) = read_dead_letters(queues.sqs, queues.dead_letter_url, long_poll_seconds=0).letters
    assert left.item is not None
    assert left.item.owner == "bob"
    assert queues.counts(queues.dead_letter_url) == (1, 0)


# ---------------------------------------------------------------------------------------------------
# With the real delivery function: the delivery queue polled as Lambda's event source mapping does
# (the local stack's poller), its handler the template's, the store the in-memory one.

MAX_ATTEMPTS = 3


@pytest.fixture
def delivery(queues: Queues, monkeypatch: pytest.MonkeyPatch) -> Iterator[TaskStore]:
    """The delivery function polling the delivery queue; yields the store it delivers from."""
    for key, value in {
        "A2A_STORE": "memory",
        "A2A_PUSH_QUEUE_URL": queues.queue_url,
        "A2A_PUSH_DEAD_LETTER_QUEUE_URL": queues.dead_letter_url,
        "A2A_ALLOW_PRIVATE_WEBHOOKS": "true",
        "A2A_PUSH_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
        "A2A_PUSH_BACKOFF_BASE_SECONDS": "1",
        "A2A_PUSH_BACKOFF_MAX_SECONDS": "1",
        "A2A_PUSH_TIMEOUT_SECONDS": "2",
        "POWERTOOLS_METRICS_NAMESPACE": "A2ATest",
    }.items():
        monkeypatch.setenv(key, value)
    reset_runtime()
    reset_push_services()
    (source,) = [s for s in sqs_event_sources(load_template()) if s.function_id == "PushDeliveryFunction"]

    def poller() -> SqsPoller:
        return SqsPoller(
            sqs=boto3.client("sqs", region_name="us-east-1"),
            source=source,
            queue_url=queues.queue_url,
            queue_arn=queues.queue_arn,
            handler=push_delivery.handler,
            function_name="a2a-test-push-delivery",
            wait_seconds=1,
        )

    runtime = get_runtime()
    try:
        with running([poller], 2):
            yield runtime.store
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]
        reset_push_services()
        reset_runtime()


def a_task_with_a_webhook(store: TaskStore, receiver: WebhookReceiver, events: int) -> None:
    a_task_with_events(
        store, ALICE, events, push_config=TaskPushNotificationConfig(id="p1", url=f"{receiver.url}/hook")
    )


def until_settled(queues: Queues, dead_letters: int) -> None:
    """Until the delivery queue is empty and the dead-letter queue holds ``dead_letters``."""
    guard = threading.Event()
    for _ in range(int(WAIT / 0.1)):
        drained = not deliveries_pending(queues.sqs, queues.queue_url)
        if drained and queues.counts(queues.dead_letter_url) == (dead_letters, 0):
            return
        guard.wait(0.1)
    raise AssertionError(f"the deliveries did not settle with {dead_letters} dead letter(s)")


@pytest.mark.parametrize(
    ("status", "items", "dead_letters", "attempts"),
    [
        # Refused: final at once; each of the 4 events is dead-lettered alone, after 1 attempt.
        pytest.param(404, [4], 4, 1, id="refused-404"),
        # Retryable: each item's first event is tried MAX_ATTEMPTS times, then its range parked.
        pytest.param(503, [2, 4], 2, MAX_ATTEMPTS, id="down-503"),
    ],
)
def test_a_redrive_to_a_webhook_that_still_fails_ends_and_tries_each_dead_letter_once(
    queues: Queues,
    delivery: TaskStore,
    webhook_receiver: WebhookReceiver,
    status: int,
    items: list[int],
    dead_letters: int,
    attempts: int,
) -> None:
    # Given a webhook that always fails, and a task whose deliveries to it are all dead-lettered
    webhook_receiver.set_down(status)
    a_task_with_a_webhook(delivery, webhook_receiver, events=4)
    queues.parking.send([DeliveryItem(ALICE.tenant, ALICE.owner, "t1", "p1", up_to_seq=n) for n in items])
    until_settled(queues, dead_letters)
    before = len(webhook_receiver.requests)

    # When they are redriven while the delivery function runs (in a thread: a redrive that never
    # ends fails the test instead of hanging it)
    reports: list[Any] = []
    run = threading.Thread(
        target=lambda: reports.append(redrive(queues.sqs, queues.dead_letter_url, queues.queue_url)), daemon=True
    )
    run.start()
    run.join(WAIT)
    assert not run.is_alive(), "the redrive did not end"
    (report,) = reports
    outcomes = follow(queues.sqs, queues.dead_letter_url, queues.queue_url, report, seconds=WAIT, poll_seconds=0.1)

    # Then each dead letter was moved once and failed again, and nothing is left to deliver
    assert len(report.moved) == dead_letters
    assert [o.outcome for o in outcomes] == [Outcome.FAILED_AGAIN] * dead_letters
    assert deliveries_pending(queues.sqs, queues.queue_url) == 0
    # And the webhook got each dead letter's attempts once: not one POST more
    assert len(webhook_receiver.requests) - before == dead_letters * attempts
    # And each is back on the dead-letter queue once, stamped with the redrive that moved it
    back = [d.item for d in read_dead_letters(queues.sqs, queues.dead_letter_url).letters if d.item]
    assert len(back) == dead_letters
    assert {item.redrive for item in back} == {report.redrive_id}


def test_a_redriven_delivery_the_webhook_takes_is_delivered(
    queues: Queues, delivery: TaskStore, webhook_receiver: WebhookReceiver
) -> None:
    # Given two refused events, and a webhook that takes everything from now on
    webhook_receiver.fail_next(2, status=404)
    a_task_with_a_webhook(delivery, webhook_receiver, events=3)
    queues.parking.send([DeliveryItem(ALICE.tenant, ALICE.owner, "t1", "p1", up_to_seq=3)])
    until_settled(queues, 2)

    # When they are redriven
    report = redrive(queues.sqs, queues.dead_letter_url, queues.queue_url)
    outcomes = follow(queues.sqs, queues.dead_letter_url, queues.queue_url, report, seconds=WAIT, poll_seconds=0.1)

    # Then both were delivered, and the dead-letter queue is empty
    assert [(o.item.from_seq, o.outcome) for o in outcomes] == [(1, Outcome.DELIVERED), (2, Outcome.DELIVERED)]
    assert queues.counts(queues.dead_letter_url) == (0, 0)
    assert [r.headers["x-a2a-event-sequence"] for r in webhook_receiver.accepted()] == ["3", "1", "2"]
