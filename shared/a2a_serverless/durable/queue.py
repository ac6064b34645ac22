"""The ``WorkQueue`` of durable mode: SendMessage hands it a task's work, and it starts or resumes the
task's durable execution (:mod:`.turns`) through the ``DurableRuns`` port.

A task's first message starts its execution, named after the task (:func:`execution_name`: a second
start of one task names the execution that runs it). A later one (an answer to INPUT_REQUIRED /
AUTH_REQUIRED) completes the callback the waiting execution recorded on the task's head.
"""

from __future__ import annotations

import json
import time

from ..ports import Scope, TaskStore, WorkItem
from ..ports.durable import DurableRuns

__all__ = ["DurableQueue", "execution_name"]


def execution_name(item: WorkItem) -> str:
    """The execution's name: the task id (Lambda allows 1-64 of ``[A-Za-z0-9_-]``: a task id is a
    UUID), so a second start of one task names the execution that runs it."""
    return item.task_id


class DurableQueue:
    """``WorkQueue`` of durable mode: a first message starts the task's execution; a later one
    resumes the execution waiting for it, by the callback its head names."""

    def __init__(self, store: TaskStore, runs: DurableRuns, *, callback_wait_seconds: float = 10.0) -> None:
        self._store = store
        self._runs = runs
        self._callback_wait_seconds = callback_wait_seconds

    def enqueue(self, item: WorkItem) -> None:
        payload = json.dumps({"item": item.to_json()}, separators=(",", ":"))
        if item.turn <= 1:  # the task's first message (its creation logged one event)
            self._runs.start(execution_name(item), payload)
            return
        # An answer: the execution records its callback right after the turn that asked ended, so
        # an answer that came quicker waits for it here (one small read per poll).
        scope = Scope(item.tenant, item.owner)
        deadline = time.monotonic() + self._callback_wait_seconds
        delay = 0.02
        while True:
            head = self._store.get_head(scope, item.task_id)
            if head is None or head.state.is_terminal:
                return  # nothing to deliver to
            if head.waiting_callback:
                self._runs.resume(head.waiting_callback, payload)
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"no execution of task {item.task_id} waits for input")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
