"""Fix ``fifo_receives``: SQS ReceiveMessage as SQS behaves, for FIFO queues and long polls.

**moto's behaviour** (moto 5.2.5, ``moto/sqs/models.py``, ``SQSBackend.receive_message``):

* no lock around its check-then-mark of in-flight message groups (``queue.pending_message_groups``
  is copied, then messages are marked received), while its server answers on concurrent threads:
  two consumers receiving at the same moment can both take a message of one FIFO group (seen
  here: a push notification POSTed twice by two concurrent deliveries);
* its long poll copies the in-flight groups once, then loops on ``Queue.wait_for_messages(1)``,
  which returns at once whenever the queue holds *any* visible message: while the only visible
  messages belong to in-flight groups the loop spins without sleeping (the spinning threads
  starved the process; notifications took 15 s), and a group freed meanwhile (its message
  deleted) stays invisible to it until its wait ends, since the copy is not refreshed.

**AWS's behaviour** (SQS Developer Guide, "FIFO queue delivery logic in Amazon SQS", section
"Receiving messages"; AWS re:Post knowledge center, "Why doesn't my Amazon SQS FIFO queue return
all messages or messages in other message groups?"; SQS Developer Guide, "Amazon SQS short and long
polling"): while messages of a group are in flight no other receive gets a message of that group,
until they are deleted or their visibility timeout expires; a long poll returns as soon as a
message is available, including one of a group that was just freed.

**A minimal reproduction** (the long poll; the check-then-mark race needs concurrent requests to
``ThreadedMotoServer`` and shows only under load)::

    import threading, time, boto3
    from moto import mock_aws
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q.fifo", Attributes={
            "FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
        for body in ("first", "second"):
            sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g")
        first = sqs.receive_message(QueueUrl=url)["Messages"][0]  # group "g" now in flight
        threading.Timer(0.5, sqs.delete_message,
                        kwargs={"QueueUrl": url, "ReceiptHandle": first["ReceiptHandle"]}).start()
        start, cpu = time.monotonic(), time.process_time()
        second = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=3).get("Messages", [])
        print([m["Body"] for m in second], time.monotonic() - start, time.process_time() - cpu)
        # SQS: ['second'] after ~0.5 s (the delete frees the group);
        # moto 5.2.5: [] after 3 s, ~2 s of CPU spent spinning (with this fix: ['second'], 0.5 s)

**The upstream report** (for getmoto/moto)::

    Title: SQS FIFO: concurrent ReceiveMessage calls can receive two messages of one group; long
    poll busy-waits and misses groups freed during the wait

    `SQSBackend.receive_message` checks `queue.pending_message_groups` and marks messages
    received without a lock. Under `ThreadedMotoServer`, two concurrent receives can both pass
    the check and take consecutive messages of the same MessageGroupId, which SQS never does
    (in-flight messages block their group until deleted or visible again).

    With WaitTimeSeconds > 0 the loop calls `queue.wait_for_messages(1)`, which returns
    immediately when any message is visible, even one whose group is in flight: the request
    spins at 100% CPU for the whole wait. And `currently_pending_groups` is a copy taken at the
    start, so a group freed by DeleteMessage during the wait is not seen until the next call.

    Suggested fix: hold a per-queue lock across the check and the mark; in the long poll wait on
    a condition notified by send, delete and visibility changes, and re-read the pending groups
    on every pass.

    Reproduction (the long poll): (the snippet above). moto 5.2.5, Python 3.11.

The fix calls moto's receive without a wait, under a per-queue lock (the check and the mark are one
step, as in SQS), and does the long poll itself: it waits on the queue's condition, which every
send, visibility change and delete of that queue notifies, so a waiting receive answers the moment
a message arrives or a FIFO group is freed, and costs nothing while none does (it re-checks once a
second for messages whose visibility timeout or delay ran out, which nothing notifies). Receives
of different queues still run in parallel. :func:`end_waiting_receives` ends the waits in progress
(they answer empty) when the stack's function process that asked for them died: moto cannot see
its client gone, and a wait left running would take the next message for nobody, hiding it for the
queue's visibility timeout.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ._shape import Fix, Target

__all__ = ["FIX", "drain_receives", "end_waiting_receives", "resume_receives"]

_RECHECK_SECONDS = 1.0
"""How often a waiting receive looks again without being told (visibility timeouts, delays): once
a second, so the idle stack's dozen waiting pollers cost moto little (four times a second, they
were most of an idle stack's CPU)."""

_conditions: defaultdict[tuple[int, str], threading.Condition] = defaultdict(threading.Condition)
_guard = threading.Lock()
_draining = threading.Event()
"""Set while the stack shuts down: long polls answer at once instead of waiting."""


def drain_receives() -> None:
    """End every waiting long poll now, and let none wait until :func:`resume_receives` (the stack
    calls this when it stops its pollers, so none waits out its 20 s)."""
    _draining.set()
    with _guard:
        conditions = list(_conditions.values())
    for condition in conditions:
        with condition:
            condition.notify_all()


def resume_receives() -> None:
    _draining.clear()


_ended = [0]
"""Bumped by :func:`end_waiting_receives`: a receive that waited across a change answers empty."""


def end_waiting_receives() -> None:
    """End the long polls waiting now (they answer empty); later ones wait as usual."""
    with _guard:
        _ended[0] += 1
        conditions = list(_conditions.values())
    for condition in conditions:
        with condition:
            condition.notify_all()


def _condition(backend: Any, queue_name: str) -> threading.Condition:
    with _guard:
        return _conditions[(id(backend), queue_name)]


_NOTIFYING = (
    "send_message",
    "send_message_batch",
    "change_message_visibility",
    "change_message_visibility_batch",
    # deleting a FIFO message frees its group: the next message of the group is receivable
    "delete_message",
    "delete_message_batch",
)


def install() -> None:
    """Patch ``SQSBackend``'s receive (and the calls that make messages receivable) for the rest of
    the process (idempotent)."""
    from moto.sqs.models import SQSBackend

    original = SQSBackend.receive_message
    if getattr(original, "_a2a_fifo_lock", False):
        return

    @functools.wraps(original)
    def receive_message(
        self: Any,
        queue_name: str,
        count: int,
        wait_seconds_timeout: int,
        visibility_timeout: int,
        message_attribute_names: list[str] | None = None,
    ) -> Any:
        condition = _condition(self, queue_name)
        deadline = time.monotonic() + (wait_seconds_timeout or 0)
        ended = _ended[0]
        with condition:
            while True:
                result = original(self, queue_name, count, 0, visibility_timeout, message_attribute_names)
                remaining = deadline - time.monotonic()
                if result or remaining <= 0 or _draining.is_set():
                    return result
                condition.wait(min(remaining, _RECHECK_SECONDS))
                if _ended[0] != ended:
                    return result  # (empty) its caller may be gone: take nothing for it

    receive_message._a2a_fifo_lock = True  # type: ignore[attr-defined]
    SQSBackend.receive_message = receive_message  # type: ignore[method-assign]
    for name in _NOTIFYING:
        setattr(SQSBackend, name, _notifying(getattr(SQSBackend, name)))


def _notifying(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (its first argument the queue's name), then wake the receives waiting on it."""

    @functools.wraps(method)
    def call(self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
        result = method(self, queue_name, *args, **kwargs)
        condition = _condition(self, queue_name)
        with condition:
            condition.notify_all()
        return result

    return call


_BACKEND = "moto.sqs.models:SQSBackend"

FIX = Fix(
    name="fifo_receives",
    module=__name__,
    install=install,
    targets=(
        Target(
            f"{_BACKEND}.receive_message",
            ("self", "queue_name", "count", "wait_seconds_timeout", "visibility_timeout", "message_attribute_names"),
        ),
        Target(
            f"{_BACKEND}.send_message",
            (
                "self",
                "queue_name",
                "message_body",
                "message_attributes",
                "delay_seconds",
                "deduplication_id",
                "group_id",
                "system_attributes",
                "validate_group_id",
            ),
        ),
        Target(f"{_BACKEND}.send_message_batch", ("self", "queue_name", "entries")),
        Target(f"{_BACKEND}.change_message_visibility", ("self", "queue_name", "receipt_handle", "visibility_timeout")),
        Target(f"{_BACKEND}.change_message_visibility_batch", ("self", "queue_name", "entries")),
        Target(f"{_BACKEND}.delete_message", ("self", "queue_name", "receipt_handle")),
        Target(f"{_BACKEND}.delete_message_batch", ("self", "queue_name", "receipts")),
    ),
)
