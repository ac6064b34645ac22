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
mark are one step, as in SQS), and does the long poll itself, sleeping between attempts. Receives
of different queues still run in parallel.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import defaultdict
from typing import Any

__all__ = ["install_fifo_receive_lock"]

_POLL_SECONDS = 0.02

_locks: defaultdict[tuple[int, str], threading.Lock] = defaultdict(threading.Lock)
_guard = threading.Lock()


def install_fifo_receive_lock() -> None:
    """Patch ``SQSBackend.receive_message`` for the rest of the process (idempotent)."""
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
        with _guard:
            lock = _locks[(id(self), queue_name)]
        deadline = time.monotonic() + (wait_seconds_timeout or 0)
        while True:
            with lock:
                result = original(self, queue_name, count, 0, visibility_timeout, message_attribute_names)
            if result or time.monotonic() >= deadline:
                return result
            time.sleep(_POLL_SECONDS)

    receive_message._a2a_fifo_lock = True  # type: ignore[attr-defined]
    SQSBackend.receive_message = receive_message  # type: ignore[method-assign]
