"""Emulates Lambda's SQS event source mapping: receive a batch, invoke the function with the event
Lambda would build, delete what succeeded, leave the rest to come back after the visibility timeout.

One ``SqsPoller`` is one concurrent invocation slot; the stack runs as many as the source's
concurrency (the template's ``MaximumConcurrency``), each on its own thread. They take turns at the
queue (:class:`Turns`), as Lambda's pollers scale with the messages waiting: while the queue is idle
one slot long-polls it and the others wait for their turn without a request; each receive that
brings messages lets one more slot poll (the one that got them is busy invoking), and each that
comes back empty lets one fewer, down to one. A burst therefore reaches every slot within a few
receives, and a quiet stack holds one long poll per queue, not one per slot.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from a2a_serverless.json_types import Json, JsonValue

from ._lambda import InvalidBatchResponse, LambdaContext, failed_message_ids, sqs_event
from ._loggers import kit_logger
from ._template import SqsEventSource

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import DeleteMessageBatchRequestEntryTypeDef

__all__ = ["Handler", "Poller", "SqsPoller", "Turns", "running"]

Handler = Callable[[Json, Any], Any]
"""A Lambda handler: ``handler(event, context)``."""


class Poller(Protocol):
    function_name: str

    def run(self, stop: threading.Event) -> None: ...

    def wake(self) -> None:
        """End a wait that ``stop`` alone does not end (the pollers are stopping)."""
        ...


class Turns:
    """Which of an SQS source's slots may receive now (see the module doc): ``allowed`` at once,
    one while the queue is idle, one more after each receive that brought messages, one fewer after
    each that came back empty; a slot waits for its turn on a condition, not by polling."""

    def __init__(self, slots: int = 1) -> None:
        self.slots = max(1, slots)
        self.allowed = 1
        self.receiving = 0
        self._changed = threading.Condition()
        self._woken = False

    def enter(self, stop: threading.Event) -> bool:
        """Wait for a turn to receive; False once ``stop`` is set (after :meth:`wake`)."""
        with self._changed:
            while self.receiving >= self.allowed and not self._woken:
                self._changed.wait()
            if stop.is_set():
                return False
            self.receiving += 1
            return True

    def leave(self, received: bool) -> None:
        """A receive ended, with messages or without."""
        with self._changed:
            self.receiving -= 1
            self.allowed = min(self.allowed + 1, self.slots) if received else max(self.allowed - 1, 1)
            self._changed.notify_all()

    def wake(self) -> None:
        with self._changed:
            self._woken = True
            self._changed.notify_all()


_log = kit_logger(__name__)

_MAX_RECEIVE = 10  # SQS's per-call limit
_JOIN_GRACE_SECONDS = 10.0


@dataclass
class SqsPoller:
    sqs: SQSClient
    """A boto3 SQS client (thread-safe: a source's pollers share one, with a connection each)."""
    source: SqsEventSource
    queue_url: str
    queue_arn: str
    handler: Handler
    function_name: str
    region: str = "us-east-1"
    wait_seconds: int = 20
    """Long-poll wait (Lambda's event source mapping waits 20 s). A stop does not wait it out:
    the stack ends the waiting receives (``moto_fixes.drain_receives``)."""
    retry_seconds: float = 1.0
    """Pause after a failed receive (moto unreachable, say) before polling again."""
    turns: Turns = field(default_factory=Turns)
    """Shared by the source's slots (:func:`._functions.poller_for`); its own by default."""

    def run(self, stop: threading.Event) -> None:
        """Poll, when its turn comes, until ``stop`` is set. Never raises: errors are logged and
        polling goes on."""
        while self.turns.enter(stop):
            try:
                messages = self._receive()
            except Exception:
                self.turns.leave(False)
                if stop.is_set():
                    break
                _log.exception("polling %s failed; retrying", self.source.queue_id)
                stop.wait(self.retry_seconds)
                continue
            self.turns.leave(bool(messages))  # the next slot's turn while this one invokes
            try:
                self._process(messages)
            except Exception:
                if stop.is_set():
                    break
                _log.exception("polling %s failed; retrying", self.source.queue_id)
                stop.wait(self.retry_seconds)

    def wake(self) -> None:
        self.turns.wake()

    def poll_once(self) -> int:
        """Receive at most one batch and process it. Returns how many messages it received."""
        messages = self._receive()
        self._process(messages)
        return len(messages)

    def _receive(self) -> list[Mapping[str, JsonValue]]:
        received = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=min(self.source.batch_size, _MAX_RECEIVE),
            WaitTimeSeconds=self.wait_seconds,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return cast("list[Mapping[str, JsonValue]]", received.get("Messages", []))

    def _process(self, messages: Sequence[Mapping[str, JsonValue]]) -> None:
        if not messages:
            return
        failed = self._invoke(messages)
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            self._delete(done)

    def _invoke(self, messages: Sequence[Mapping[str, JsonValue]]) -> set[str]:
        """Run the handler; return the ids of the messages to leave on the queue."""
        ids = [str(m["MessageId"]) for m in messages]
        # A JSON round trip, as over the Lambda runtime API: the handler sees plain JSON values.
        event = json.loads(json.dumps(sqs_event(messages, queue_arn=self.queue_arn, region=self.region)))
        context = LambdaContext.start(
            self.function_name,
            region=self.region,
            memory_mb=self.source.memory_mb,
            timeout_seconds=self.source.timeout_seconds,
        )
        started = time.monotonic()
        try:
            response = json.loads(json.dumps(self.handler(event, context)))
        except Exception:
            _log.exception("%s failed on messages %s; they will be redelivered", self.function_name, ids)
            return set(ids)
        elapsed = time.monotonic() - started
        if elapsed > self.source.timeout_seconds:
            _log.error(
                "%s ran %.1fs, past its %ss timeout: on Lambda it would have been stopped and its "
                "messages %s redelivered",
                self.function_name,
                elapsed,
                self.source.timeout_seconds,
                ids,
            )
            return set(ids)
        if not self.source.report_batch_item_failures:
            return set()
        try:
            failed = failed_message_ids(response, ids)
        except InvalidBatchResponse as exc:
            _log.error("%s: %s; the whole batch %s will be redelivered", self.function_name, exc, ids)
            return set(ids)
        if failed:
            _log.info("%s reported failures %s; they will be redelivered", self.function_name, sorted(failed))
        return failed

    def _delete(self, messages: Sequence[Mapping[str, JsonValue]]) -> None:
        entries: list[DeleteMessageBatchRequestEntryTypeDef] = [
            {"Id": str(i), "ReceiptHandle": str(m["ReceiptHandle"])} for i, m in enumerate(messages)
        ]
        result = self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
        for failure in result.get("Failed", []):
            _log.warning("could not delete a processed message from %s: %s", self.source.queue_id, failure)


@contextlib.contextmanager
def running(
    pollers: Sequence[Callable[[], Poller]],
    per_poller: int | Sequence[int],
    *,
    abandon: Callable[[], bool] = lambda: False,
    grace_seconds: float = _JOIN_GRACE_SECONDS,
    on_stop: Callable[[], None] = lambda: None,
) -> Iterator[None]:
    """Run ``per_poller`` threads of each poller (one count for all, or one per poller); on exit,
    stop them (``on_stop`` ends what they wait on) and wait for the invocations in flight, at most
    ``grace_seconds`` and no longer once ``abandon()`` says so."""
    stop = threading.Event()
    threads: list[threading.Thread] = []
    started: list[Poller] = []
    counts = [per_poller] * len(pollers) if isinstance(per_poller, int) else list(per_poller)
    for make, count in zip(pollers, counts, strict=True):
        for n in range(1, count + 1):
            poller = make()
            name = f"poller-{poller.function_name}-{n}"
            thread = threading.Thread(target=poller.run, args=(stop,), name=name, daemon=True)
            thread.start()
            threads.append(thread)
            started.append(poller)
    try:
        yield
    finally:
        stop.set()
        for poller in started:
            poller.wake()
        on_stop()
        deadline = time.monotonic() + grace_seconds
        for thread in threads:
            while thread.is_alive() and time.monotonic() < deadline and not abandon():
                thread.join(0.05)
        busy = [t.name for t in threads if t.is_alive()]
        if busy:
            # Daemon threads end with the process; their messages come back after the visibility
            # timeout, as after a Lambda timeout.
            _log.warning("leaving %d invocation(s) unfinished: %s", len(busy), busy)
