"""The run's watcher (:class:`RunMonitor`): CancelTask's mark, a task another writer took, and the
run's lease, on a thread of its own beside the executor (see :mod:`.worker`, step 2)."""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable
from functools import partial

from ..ports import TaskStore
from ..transitions import renew_lease
from .run_log import RunWriter

__all__ = ["CANCEL_POLL_SECONDS", "RunMonitor"]

logger = logging.getLogger("a2a_serverless.execution.worker")

CANCEL_POLL_SECONDS = 0.25


class RunMonitor:
    """The run's watcher, on a thread of its own (so a slow or blocking executor cannot stall it):
    it reads the head every ``CANCEL_POLL_SECONDS`` (the memory store wakes it on a change), reports
    CancelTask's mark and a task another writer took, and renews the lease while ``alive()``."""

    def __init__(
        self,
        store: TaskStore,
        writer: RunWriter,
        message_id: str,
        *,
        lease_seconds: int,
        on_cancel: Callable[[], object],
        on_lost: Callable[[], object],
        alive: Callable[[], bool],
    ) -> None:
        self._store = store
        self._writer = writer
        self._message_id = message_id
        self._lease_seconds = lease_seconds
        self._on_cancel = on_cancel
        self._on_lost = on_lost
        self._alive = alive
        self._stopped = threading.Event()
        # In the run's context: its lines carry the invocation's log keys (its task, its request).
        watch = contextvars.copy_context().run
        self._thread = threading.Thread(target=watch, args=(self._watch,), name="a2a-run-monitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=2 * CANCEL_POLL_SECONDS)

    def _watch(self) -> None:
        record = self._writer.record
        scope, task_id = record.scope, record.task_id
        reported_cancel = False
        failures = 0
        last_read = time.monotonic()
        while not self._stopped.is_set():
            try:
                head = self._store.get_head(scope, task_id)
                if head is None or head.running_message_id != self._message_id:
                    if not self._writer.ended_run(self._message_id):
                        self._on_lost()  # someone else ended the run (not the run itself)
                    return
                if head.cancel_requested and not reported_cancel:
                    reported_cancel = True
                    self._on_cancel()
                if self._alive() and head.lease_until - time.time() < self._lease_seconds * 2 / 3:
                    lease = self._lease_seconds
                    rule = partial(renew_lease, message_id=self._message_id, now=int(time.time()), lease_seconds=lease)
                    self._writer.transact(rule)
                version, failures, last_read = head.version, 0, time.monotonic()
            except Exception:
                # The store is unreachable or throttling: back off (up to 5 s), and say so once, then
                # every 20 failures, rather than four times a second.
                if failures % 20 == 0:
                    logger.exception("watching the run failed; retrying", extra={"task_id": task_id})
                failures += 1
                version = -1
                if time.monotonic() - last_read > self._lease_seconds:
                    # The lease has lapsed unrenewed: the sweeper owns the task now, and nothing this
                    # run writes could commit. Stop it rather than retry forever.
                    logger.error(
                        "the store was unreachable for longer than the run's lease; stopping the run",
                        extra={"task_id": task_id},
                    )
                    self._on_lost()
                    return
            if self._stopped.is_set():
                return
            if version < 0:
                self._stopped.wait(min(CANCEL_POLL_SECONDS * 2 ** min(failures, 5), 5.0))
            elif self._store.notifies_changes:
                self._store.wait_for_change(scope, task_id, version, CANCEL_POLL_SECONDS)
            else:
                # A store that cannot tell (DynamoDB) would just sleep: wait on our own stop instead,
                # so a run that ends does not hold its invocation up to a poll interval longer.
                self._stopped.wait(CANCEL_POLL_SECONDS)
