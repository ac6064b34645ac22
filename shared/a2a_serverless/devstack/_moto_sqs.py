"""``ReceiveMessage`` for moto's SQS as SQS behaves, installed by the local stack.

Two defects of moto's receive matter for FIFO queues, where one task's work and one webhook's
notifications must stay in order and never run concurrently:

* no lock around its check-then-mark of in-flight message groups: its server answers on concurrent
  threads, so two pollers receiving at the same moment could both take a message of one group
  (seen here: a notification POSTed twice by two concurrent deliveries);
* its long poll snapshots the in-flight groups once and then spins without sleeping while the only
  visible messages belong to such groups: a group freed meanwhile stays invisible to it until its
  wait ends, and the spinning threads starved the whole process (notifications took 15 s).

The replacement calls moto's receive without a wait, under a per-queue lock (so the check and the
mark are one step, as in SQS), and does the long poll itself: it waits on the queue's condition,
which every send and visibility change of that queue notifies, so a waiting receive answers the
moment a message arrives (or a FIFO group is freed by a delete) and costs nothing while none does
(re-checking a few times a second for messages whose visibility timeout or delay ran out, which
nothing notifies). Receives of different
queues still run in parallel.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

__all__ = ["drain_receives", "install_fifo_receive_lock", "resume_receives"]

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


def _condition(backend: Any, queue_name: str) -> threading.Condition:
    with _guard:
        return _conditions[(id(backend), queue_name)]


def install_fifo_receive_lock() -> None:
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
        with condition:
            while True:
                result = original(self, queue_name, count, 0, visibility_timeout, message_attribute_names)
                remaining = deadline - time.monotonic()
                if result or remaining <= 0 or _draining.is_set():
                    return result
                condition.wait(min(remaining, _RECHECK_SECONDS))

    receive_message._a2a_fifo_lock = True  # type: ignore[attr-defined]
    SQSBackend.receive_message = receive_message  # type: ignore[method-assign]
    for name in (
        "send_message",
        "send_message_batch",
        "change_message_visibility",
        "change_message_visibility_batch",
        # deleting a FIFO message frees its group: the next message of the group is receivable
        "delete_message",
        "delete_message_batch",
    ):
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
