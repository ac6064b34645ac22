"""The queue ports (:mod:`a2a_serverless.ports.queue`) in process, for when no SQS queue is configured.

* :class:`InlineWorkQueue`: the ``WorkQueue`` of ``A2A_STORE=memory`` (unit tests of the protocol
  layer, the in-memory benchmark). It runs each item on a worker thread right away and keeps the
  contract of the SQS FIFO queue: ``enqueue`` returns at once; an item whose deduplication id was
  queued in the last five minutes is dropped; and one task's items (its message group) are
  processed one at a time, in order, exactly as the SQS worker would.
* :class:`MemoryDeliveryQueue`: a ``DeliveryQueue`` for unit tests; it records what was sent,
  dead-lettered and delayed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..ports import DeliveryItem, WorkItem

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["InlineWorkQueue", "MemoryDeliveryQueue"]

logger = logging.getLogger(__name__)


DEDUPLICATION_SECONDS = 300.0
"""SQS FIFO's deduplication interval."""


class InlineWorkQueue:
    def __init__(self, runtime: Callable[[], Runtime], max_workers: int = 16) -> None:
        """``runtime``: the runtime this queue is part of (so made after it), asked for per item."""
        self._runtime = runtime
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="a2a-inline-worker")
        self._lock = threading.Lock()
        self._seen: dict[str, float] = {}
        self._groups: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
        self.futures: list[Future[None]] = []

    def enqueue(self, item: WorkItem) -> None:
        now = time.monotonic()
        with self._lock:
            self._seen = {k: t for k, t in self._seen.items() if now - t < DEDUPLICATION_SECONDS}
            if item.deduplication_id in self._seen:
                return
            self._seen[item.deduplication_id] = now
            group = self._groups[item.task_id]
        future = self._pool.submit(self._process, group, item)
        future.add_done_callback(_log_crash)
        self.futures = [f for f in self.futures if not f.done()] + [future]

    def _process(self, group: threading.Lock, item: WorkItem) -> None:
        from ..execution.worker import process_work_item

        with group:  # one task's items one at a time, as a FIFO message group
            process_work_item(self._runtime(), item)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)


def _log_crash(future: Future[None]) -> None:
    exc = future.exception()
    if exc is not None:
        logger.error("inline worker crashed", exc_info=exc)


class MemoryDeliveryQueue:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sent: list[DeliveryItem] = []
        self.dead: list[DeliveryItem] = []
        self.delays: list[tuple[str, int]] = []

    def send(self, items: Sequence[DeliveryItem]) -> None:
        with self._lock:
            self.sent.extend(items)

    def dead_letter(self, item: DeliveryItem) -> None:
        with self._lock:
            self.dead.append(item)

    def delay(self, receipt_handle: str, seconds: int) -> None:
        with self._lock:
            self.delays.append((receipt_handle, seconds))
