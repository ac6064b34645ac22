"""The poller does what Lambda's SQS event source mapping does with the worker's answer."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from a2a_serverless.ports.queue import WorkItem
from a2a_serverless_dev._functions import aws_client, poller_for
from a2a_serverless_dev._moto import running_moto
from a2a_serverless_dev._template import SqsEventSource
from a2a_serverless_dev.pollers import Handler, SqsPoller, Turns, running
from a2a_serverless_dev.resources import LocalResources, create_resources

ITEM = WorkItem(tenant="", owner="anonymous", task_id="task-1", message_id="msg-1")


def _source(*, report_failures: bool = True, timeout: int = 900) -> SqsEventSource:
    return SqsEventSource(
        function_id="WorkerFunction",
        handler="a2a_serverless.functions.worker:handler",
        queue_id="WorkQueue",
        batch_size=1,
        report_batch_item_failures=report_failures,
        timeout_seconds=timeout,
        memory_mb=512,
    )


class Recorder:
    """A stand-in worker: records what it was given and answers as told."""

    def __init__(self, answer: Any = None, *, raises: bool = False) -> None:
        self.answer = answer
        self.raises = raises
        self.calls: list[tuple[dict[str, Any], Any]] = []

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        self.calls.append((event, context))
        if self.raises:
            raise RuntimeError("worker crashed")
        return self.answer(event) if callable(self.answer) else self.answer


def _poller(sqs: Any, resources: LocalResources, handler: Handler, **source: Any) -> SqsPoller:
    return SqsPoller(
        sqs=sqs,
        source=_source(**source),
        queue_url=resources.queue_urls["WorkQueue"],
        queue_arn=resources.queue_arns["WorkQueue"],
        handler=handler,
        function_name="a2a-local-WorkerFunction",
        wait_seconds=0,
    )


@pytest.fixture
def queue(sqs: Any, resources: LocalResources) -> str:
    """The work queue with one work item on it, redelivered at once after a failure."""
    url = resources.queue_urls["WorkQueue"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "0"})
    sqs.send_message(
        QueueUrl=url,
        MessageBody=ITEM.to_json(),
        MessageGroupId=ITEM.task_id,
        MessageDeduplicationId=ITEM.deduplication_id,
    )
    return url


def _waiting(sqs: Any, url: str) -> list[dict[str, Any]]:
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"])
    messages: list[dict[str, Any]] = received.get("Messages", [])
    return messages


def _failing_its_only_record(event: dict[str, Any]) -> dict[str, Any]:
    return {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}


def test_a_processed_message_is_deleted(sqs: Any, resources: LocalResources, queue: str) -> None:
    # Given
    worker = Recorder({"batchItemFailures": []})

    # When
    received = _poller(sqs, resources, worker).poll_once()

    # Then: the worker saw the work item with a Lambda context, and the message is gone
    assert received == 1
    ((event, context),) = worker.calls
    assert WorkItem.from_json(event["Records"][0]["body"]) == ITEM
    assert event["Records"][0]["eventSourceARN"] == resources.queue_arns["WorkQueue"]
    assert context.function_name == "a2a-local-WorkerFunction"
    assert 0 < context.get_remaining_time_in_millis() <= 900_000
    assert _waiting(sqs, queue) == []


@pytest.mark.parametrize(
    "worker",
    [
        pytest.param(Recorder(_failing_its_only_record), id="reported-failure"),
        pytest.param(Recorder(raises=True), id="handler-raised"),
        pytest.param(Recorder({"batchItemFailures": [{"itemIdentifier": "nope"}]}), id="invalid-response"),
        pytest.param(Recorder(lambda _: {"unserialisable": object()}), id="non-json-response"),
    ],
)
def test_a_failed_message_is_redelivered(
    sqs: Any, resources: LocalResources, queue: str, worker: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    # When
    with caplog.at_level(logging.INFO, logger="a2a_serverless.dev.pollers"):
        _poller(sqs, resources, worker).poll_once()

    # Then: the message comes back, one receive later, and the failure was logged
    (again,) = _waiting(sqs, queue)
    assert again["MessageId"] == worker.calls[0][0]["Records"][0]["messageId"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    assert "redelivered" in caplog.text


def test_a_handler_exception_is_logged_with_its_traceback(
    sqs: Any, resources: LocalResources, queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    _poller(sqs, resources, Recorder(raises=True)).poll_once()

    (record,) = [r for r in caplog.records if r.name == "a2a_serverless.dev.pollers"]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert "worker crashed" in str(record.exc_info[1])


def test_reported_failures_are_ignored_without_report_batch_item_failures(
    sqs: Any, resources: LocalResources, queue: str
) -> None:
    # Given: a mapping without FunctionResponseTypes: [ReportBatchItemFailures]
    worker = Recorder(_failing_its_only_record)

    # When
    _poller(sqs, resources, worker, report_failures=False).poll_once()

    # Then: as on Lambda, a returning invocation is a success for the whole batch
    assert _waiting(sqs, queue) == []


def test_an_invocation_past_the_timeout_is_a_failure(sqs: Any, resources: LocalResources, queue: str) -> None:
    # Given: a worker that returns after its deadline (Lambda would have stopped it)
    def slow(event: dict[str, Any], context: Any) -> None:
        threading.Event().wait(0.05)

    # When
    _poller(sqs, resources, slow, timeout=0).poll_once()

    # Then
    assert len(_waiting(sqs, queue)) == 1


def test_an_empty_queue_invokes_nothing(sqs: Any, resources: LocalResources) -> None:
    worker = Recorder()

    assert _poller(sqs, resources, worker).poll_once() == 0
    assert worker.calls == []


def test_run_survives_errors_and_stops_when_told(
    sqs: Any, resources: LocalResources, queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given: a worker that crashes on the first delivery and succeeds on the second
    stop = threading.Event()
    calls: list[str] = []

    def flaky(event: dict[str, Any], context: Any) -> None:
        calls.append(event["Records"][0]["attributes"]["ApproximateReceiveCount"])
        if len(calls) == 1:
            raise RuntimeError("first attempt fails")
        stop.set()

    # When: the poll loop runs on its own thread, as in the stack
    thread = threading.Thread(target=_poller(sqs, resources, flaky).run, args=(stop,))
    thread.start()
    thread.join(timeout=10)

    # Then: the loop outlived the crash, got the redelivery, and ended on the stop signal
    assert not thread.is_alive()
    assert calls == ["1", "2"]
    assert _waiting(sqs, queue) == []


def test_run_keeps_polling_when_sqs_is_unreachable(caplog: pytest.LogCaptureFixture) -> None:
    # Given: a queue client that always fails, and a stop requested during the second attempt
    stop = threading.Event()
    attempts: list[int] = []

    class Unreachable:
        def receive_message(self, **_: Any) -> Any:
            attempts.append(1)
            if len(attempts) == 2:
                stop.set()
            raise ConnectionError("refused")

    poller = SqsPoller(
        sqs=Unreachable(),
        source=_source(),
        queue_url="http://127.0.0.1:1/q",
        queue_arn="arn",
        handler=Recorder(),
        function_name="f",
        retry_seconds=0,
    )

    # When
    poller.run(stop)

    # Then: the first error was logged and retried; the one during shutdown is not noise
    assert len(attempts) == 2
    (record,) = caplog.records
    assert record.getMessage() == "polling WorkQueue failed; retrying"


class OneMessage:
    """An SQS client stand-in holding one message; deletes are recorded."""

    def __init__(self) -> None:
        self.messages = [{"MessageId": "m-1", "ReceiptHandle": "r-1", "Body": "{}", "MD5OfBody": "x"}]
        self.deleted: list[str] = []

    def receive_message(self, **_: Any) -> Any:
        messages, self.messages = self.messages, []
        if not messages:
            threading.Event().wait(0.01)
        return {"Messages": messages}

    def delete_message_batch(self, **kwargs: Any) -> Any:
        self.deleted += [e["ReceiptHandle"] for e in kwargs["Entries"]]
        return {"Successful": kwargs["Entries"]}


def _make(sqs: Any, handler: Handler) -> Any:
    return lambda: SqsPoller(
        sqs=sqs, source=_source(), queue_url="q", queue_arn="arn", handler=handler, function_name="fn"
    )


def test_running_pollers_finish_their_invocation_and_stop() -> None:
    # Given: an invocation in flight when the stack stops
    sqs, started = OneMessage(), threading.Event()

    def worker(event: dict[str, Any], context: Any) -> None:
        started.set()
        threading.Event().wait(0.2)

    with running([_make(sqs, worker)], 2):
        assert started.wait(5)

    # Then: it completed (and its message was deleted) before the pollers' threads ended
    assert sqs.deleted == ["r-1"]
    assert not [t for t in threading.enumerate() if t.name.startswith("poller-fn-")]


@pytest.mark.parametrize(
    ("grace", "abandon"),
    [pytest.param(0.2, lambda: False, id="grace-expired"), pytest.param(60.0, lambda: True, id="second-signal")],
)
def test_a_stuck_invocation_is_abandoned(grace: float, abandon: Any, caplog: pytest.LogCaptureFixture) -> None:
    sqs, started, release = OneMessage(), threading.Event(), threading.Event()

    def stuck(event: dict[str, Any], context: Any) -> None:
        started.set()
        release.wait(30)

    try:
        with running([_make(sqs, stuck)], 1, abandon=abandon, grace_seconds=grace):
            assert started.wait(5)
        # Then: the message stays for redelivery, and the abandoned invocation is reported
        assert sqs.deleted == []
        assert "leaving 1 invocation(s) unfinished: ['poller-fn-1']" in caplog.text
    finally:
        release.set()


class CountingSqs:
    """The stack's SQS client, noting how many receives are waiting on moto at once."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.lock = threading.Lock()
        self.receiving = 0
        self.peak = 0
        self.receives = 0

    def receive_message(self, **kwargs: Any) -> Any:
        with self.lock:
            self.receiving += 1
            self.peak = max(self.peak, self.receiving)
        try:
            return self.client.receive_message(**kwargs)
        finally:
            with self.lock:
                self.receiving -= 1
                self.receives += 1

    def delete_message_batch(self, **kwargs: Any) -> Any:
        return self.client.delete_message_batch(**kwargs)


@pytest.fixture
def stack_queue(template: dict[str, Any]) -> Iterator[tuple[Any, str, Any]]:
    """The template's work queue on the stack's moto server (its fixes: long polls that wait on
    the queue); yields the resources, the endpoint and the server."""
    with running_moto() as moto:
        resources = create_resources(
            aws_client("dynamodb", moto.endpoint),
            aws_client("sqs", moto.endpoint),
            prefix=f"turns-{uuid.uuid4().hex[:8]}",  # moto's backends outlive one test in this process
            template=template,
        )
        yield resources, moto.endpoint, moto


def _slots(
    stack_queue: tuple[Any, str, Any], handler: Handler, slots: int
) -> tuple[Callable[[], SqsPoller], CountingSqs, Turns]:
    """``slots`` pollers of the work queue as the stack makes them (one client, shared turns),
    polling with a 1 s wait so an idle queue's receives come back often."""
    resources, endpoint, _ = stack_queue
    make = poller_for(_source(), resources, endpoint, handler, "a2a-local", slots)
    first = make()
    counting = CountingSqs(first.sqs)

    def poller() -> SqsPoller:
        return replace(make(), sqs=counting, wait_seconds=1)

    return poller, counting, first.turns


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60  # a hang guard
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_an_idle_queue_has_one_receive_waiting_not_one_per_slot(stack_queue: tuple[Any, str, Any]) -> None:
    # Given ten slots of the worker's queue, and nothing on it
    poller, counting, _ = _slots(stack_queue, Recorder(), 10)
    # When they poll through several empty long polls
    with running([poller], 10, on_stop=stack_queue[2].drain):
        _until(lambda: counting.receives >= 3, "three empty receives")
    # Then never more than one receive waited at a time
    assert counting.peak == 1


def test_a_burst_reaches_every_slot_and_the_receives_come_back_to_one(stack_queue: tuple[Any, str, Any]) -> None:
    # Given ten slots of the worker's queue and twenty work items for twenty tasks
    resources, endpoint, moto = stack_queue
    url = resources.queue_urls["WorkQueue"]
    sqs = aws_client("sqs", endpoint)
    all_slots = threading.Barrier(10, timeout=60)
    handled: list[str] = []

    def worker(event: dict[str, Any], context: Any) -> None:
        if len(handled) < 10:
            all_slots.wait()  # the first ten wait until ten run at once (it breaks, and raises, if not)
        handled.append(event["Records"][0]["messageId"])

    poller, counting, turns = _slots(stack_queue, worker, 10)
    with running([poller], 10, on_stop=moto.drain):
        _until(lambda: counting.receives >= 1, "the first receive")
        for n in range(20):
            item = WorkItem(tenant="", owner="anonymous", task_id=f"task-{n}", message_id=f"m-{n}")
            sqs.send_message(
                QueueUrl=url,
                MessageBody=item.to_json(),
                MessageGroupId=item.task_id,
                MessageDeduplicationId=item.deduplication_id,
            )
        # Then ten invocations ran at once (the barrier held), every item was handled
        _until(lambda: len(set(handled)) == 20, "twenty items handled")
        assert not all_slots.broken
        # And once the queue is empty again, one receive at a time
        _until(lambda: turns.allowed == 1, "the turns back to one")
