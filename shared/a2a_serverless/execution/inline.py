"""An in-process work queue: runs each item on a worker thread right away.

Used when no SQS queue is configured (``A2A_STORE=memory``: unit tests of the protocol layer and the
in-memory benchmark). It keeps the same contract as SQS from the caller's side: ``enqueue`` returns
at once and the item is processed exactly as the SQS worker would process it.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..ports import WorkItem

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["InlineWorkQueue"]

logger = logging.getLogger(__name__)


class InlineWorkQueue:
    def __init__(self, runtime: Runtime, max_workers: int = 16) -> None:
        self._runtime = runtime
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="a2a-inline-worker")
        self.futures: list[Future[None]] = []

    def enqueue(self, item: WorkItem) -> None:
        from .worker import process_work_item

        future = self._pool.submit(process_work_item, self._runtime, item)
        future.add_done_callback(_log_crash)
        self.futures = [f for f in self.futures if not f.done()] + [future]

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)


def _log_crash(future: Future[None]) -> None:
    exc = future.exception()
    if exc is not None:
        logger.error("inline worker crashed", exc_info=exc)
