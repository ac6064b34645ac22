"""Durable execution mode (``A2A_EXECUTION_MODE=durable``, ``docs/durable-tasks.md``): each task
runs as one durable execution, named after the task.

* :class:`DurableQueue` is the ``WorkQueue`` SendMessage hands work to: a task's first message
  starts its execution; a later one (an answer to INPUT_REQUIRED / AUTH_REQUIRED) completes the
  callback the waiting execution recorded on the task's head.
* :func:`run_task` is the execution: one durable step per turn (the worker's ordinary run of
  the executor: claim, events, settle, all in the event log, which stays the source of truth),
  then, while the task waits for input, a callback wait that holds no function: the next
  SendMessage resumes it with the new message; CancelTask fails the callback and the execution
  ends; a wait past ``A2A_INPUT_WAIT_SECONDS`` fails the task. A turn that ends the task ends the
  execution.

A step that completed is replayed from its checkpoint after the function is recycled, never run
again, so its events are never written twice. A turn interrupted mid-way (the function's timeout,
a crash) is run again by the next invocation: the run rules see the message still recorded as
running and fail the task with a clear message, as the queue mode does for a redelivered item.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from ..ports import Scope, TaskStore, WorkItem
from ..ports.durable import DurableRuns
from ..transitions import Await, await_input, end_wait, mutate
from .worker import process_work_item

if TYPE_CHECKING:
    from aws_durable_execution_sdk_python.context import DurableContext
    from aws_durable_execution_sdk_python.types import StepContext

    from ..runtime import Runtime

__all__ = ["INPUT_WAIT_TEXT", "DurableQueue", "execution_name", "run_task"]

logger = logging.getLogger(__name__)

INPUT_WAIT_TEXT = "No input arrived within the time this agent waits for it (A2A_INPUT_WAIT_SECONDS); start a new task"


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


def run_task(event: Mapping[str, Any], context: DurableContext, runtime: Runtime) -> dict[str, Any]:
    """The durable execution of one task: turns, and callback waits between them."""
    from aws_durable_execution_sdk_python.config import CallbackConfig, Duration
    from aws_durable_execution_sdk_python.exceptions import CallbackError

    item = WorkItem.from_json(str(event["item"]))
    scope = Scope(item.tenant, item.owner)
    settings = runtime.settings
    turn = 0
    while True:
        turn += 1
        context.step(partial(_run_turn, runtime, item), name=f"turn-{turn}")
        callback = context.create_callback(
            name=f"input-{turn}",
            config=CallbackConfig(timeout=Duration.from_seconds(settings.input_wait_seconds)),
        )
        waiting = context.step(
            partial(_await, runtime, scope, item.task_id, callback.callback_id), name=f"await-{turn}"
        )
        if waiting != Await.WAIT.value:
            return {"taskId": item.task_id, "turns": turn, "end": waiting}
        try:
            answer = callback.result()
        except CallbackError as exc:  # timed out, or failed by CancelTask
            ended = context.step(
                partial(_end_wait, runtime, scope, item.task_id, callback.callback_id), name=f"end-wait-{turn}"
            )
            return {"taskId": item.task_id, "turns": turn, "end": "input-wait-expired" if ended else type(exc).__name__}
        item = WorkItem.from_json(str(json.loads(str(answer))["item"]))


def _run_turn(runtime: Runtime, item: WorkItem, step: StepContext) -> None:
    # A retried attempt (the step raised) is a redelivery to the run rules: a message still
    # recorded as running fails the task with a clear message. An attempt run again after an
    # interruption finds its message running and skips it: its lease lapses and the sweeper
    # settles the task, as for a worker that died.
    process_work_item(runtime, item, receive_count=step.attempt)


def _await(runtime: Runtime, scope: Scope, task_id: str, callback_id: str, _step: StepContext) -> str:
    rule = partial(await_input, callback_id=callback_id)
    return mutate(runtime.store, scope, task_id, rule).result.value


def _end_wait(runtime: Runtime, scope: Scope, task_id: str, callback_id: str, _step: StepContext) -> bool:
    rule = partial(end_wait, callback_id=callback_id, text=INPUT_WAIT_TEXT, max_history=runtime.settings.max_history)
    return mutate(runtime.store, scope, task_id, rule).result
