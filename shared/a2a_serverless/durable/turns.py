"""The durable execution of one task (:func:`run_task`, which the durable worker runs): turns, and
callback waits for input between them.

* Each turn is the worker's ordinary run of the executor (claim, events, settle, all in the event
  log, which stays the source of truth), as one durable step. An executor with ``durable_steps``
  runs its turn in a child context instead, step by step (:class:`ResumedTurn`, the worker's run
  mode for it, and :class:`~.steps.DurableSteps`).
* While the task waits for input, a callback wait holds no function: the next SendMessage resumes
  it with the new message (:class:`~.queue.DurableQueue`); CancelTask fails the callback and the
  execution ends; a wait past ``A2A_INPUT_WAIT_SECONDS`` fails the task. A turn that ends the task
  ends the execution.

A step that completed is replayed from its checkpoint after the function is recycled, never run
again, so its events are never written twice. A turn interrupted mid-way (the function's timeout,
a crash) is run again by the next invocation: the run rules see the message still recorded as
running and fail the task with a clear message, as the queue mode does for a redelivered item.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..execution.api import Event, EventQueue
from ..execution.run_log import RunLog
from ..execution.run_mode import RunMode, claim_run
from ..execution.run_report import RunReport
from ..execution.worker import process_work_item
from ..json_types import Json, JsonValue
from ..mutation import mutate
from ..ports import Scope, TaskRecord, WorkItem
from ..transitions import Await, Claim, await_input, end_wait
from .steps import DurableSteps

if TYPE_CHECKING:
    from aws_durable_execution_sdk_python.context import DurableContext
    from aws_durable_execution_sdk_python.types import StepContext

    from ..runtime import Runtime

__all__ = ["INPUT_WAIT_TEXT", "ResumedTurn", "run_task"]

INPUT_WAIT_TEXT = "No input arrived within the time this agent waits for it (A2A_INPUT_WAIT_SECONDS); start a new task"


def run_task(
    event: Mapping[str, JsonValue],
    context: DurableContext,
    runtime: Runtime,
    *,
    on_run: Callable[[RunReport], None] = lambda report: None,
) -> Json:
    """The durable execution of one task: turns, and callback waits between them. ``on_run`` gets
    the report of each run of the executor this invocation made (never of one it replayed)."""
    from aws_durable_execution_sdk_python.config import CallbackConfig, Duration
    from aws_durable_execution_sdk_python.exceptions import CallbackError

    item = WorkItem.from_json(str(event["item"]))
    scope = Scope(item.tenant, item.owner)
    settings = runtime.settings
    started = time.monotonic()  # this invocation's start: steps go on in a new one before its limit
    stepped = runtime.executor.durable_steps
    turn = 0
    while True:
        turn += 1
        if stepped:
            after = context.run_in_child_context(
                partial(_stepped_turn, runtime, item, started, on_run), name=f"turn-{turn}"
            )
        else:
            after = context.step(partial(_run_turn, runtime, item, on_run), name=f"turn-{turn}")
        if after != _INTERRUPTED:  # most tasks end in their first turn: no callback for them
            return {"taskId": item.task_id, "turns": turn, "end": after}
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


_INTERRUPTED = "interrupted"


def _run_turn(runtime: Runtime, item: WorkItem, on_run: Callable[[RunReport], None], step: StepContext) -> str:
    # A retried attempt (the step raised) is a redelivery to the run rules: a message still
    # recorded as running fails the task with a clear message. An attempt run again after an
    # interruption finds its message running and skips it: its lease lapses and the sweeper
    # settles the task, as for a worker that died.
    report = process_work_item(runtime, item, receive_count=step.attempt)
    if report is not None:
        on_run(report)
    return _state_after(runtime, item)


def _state_after(runtime: Runtime, item: WorkItem) -> str:
    """How the turn left the task (recorded with the turn, so a replay decides the same):
    ``interrupted`` (it waits for input), ``terminal``, or ``running`` (its run was lost: the
    sweeper settles it)."""
    head = runtime.store.get_head(Scope(item.tenant, item.owner), item.task_id)
    if head is None or head.state.is_terminal:
        return "terminal"
    if head.state.is_interrupted and not head.running_message_id:
        return _INTERRUPTED
    return "running"


def _stepped_turn(
    runtime: Runtime, item: WorkItem, started: float, on_run: Callable[[RunReport], None], turn: DurableContext
) -> str:
    """A turn of an executor that marks steps (``durable_steps``): a child context whose first
    step claims the run; the executor then runs with ``context.steps`` checkpointed in it. When
    the function is recycled, the next invocation replays the claim and the completed steps (their
    results from the checkpoints, their events not emitted again: what the executor emits while
    the turn replays is dropped) and goes on from the first step not completed."""
    claimed = turn.step(partial(_claim, runtime, item), name="claim")
    if claimed != Claim.CLAIMED.value:
        return _state_after(runtime, item)
    scope = Scope(item.tenant, item.owner)
    record = runtime.store.get_task(scope, item.task_id)
    if record is None or record.running_message_id != item.message_id:
        return _state_after(runtime, item)  # ended meanwhile (canceled, or settled by the sweeper)
    mode = ResumedTurn(record=record, context=turn, runtime=runtime, item=item, started=started)
    report = process_work_item(runtime, item, mode=mode)
    if report is not None:
        on_run(report)  # the part of the run this invocation made (its first steps were replayed)
    return _state_after(runtime, item)


@dataclass(frozen=True)
class ResumedTurn(RunMode):
    """The worker's run mode for a turn of an executor with ``durable_steps``: the run was claimed
    by an earlier step (``record`` is the task as read now), ``context.steps`` are checkpointed in
    the turn's child ``context``, what the executor emits while the turn replays was stored by an
    earlier invocation and is dropped, a cancel stops the run once the replay is over, and the
    SDK's ``SuspendExecution`` ends this invocation without settling (the turn goes on in the next
    one)."""

    record: TaskRecord
    context: DurableContext
    runtime: Runtime
    item: WorkItem
    started: float
    """When this invocation started (``time.monotonic()``): steps go on in a new one before its limit."""

    @property
    def suspend(self) -> tuple[type[BaseException], ...]:
        from aws_durable_execution_sdk_python.exceptions import SuspendExecution

        return (SuspendExecution,)

    async def claim(self, runtime: Runtime, item: WorkItem, receive_count: int) -> TaskRecord | None:
        return self.record

    def events(self, log: RunLog) -> EventQueue:
        return _Replayed(log, self.context.is_replaying)

    def steps(self, log: RunLog) -> DurableSteps:
        return DurableSteps(self.context, log, self.runtime, self.item, self.started)

    def stop(self, canceled: asyncio.Event) -> None:
        # A run that replays is stopped where it left off (in the wait CancelTask woke, or the step
        # it was in), not part-way through the replay: there its code handles the cancel (a
        # delegation cancels its remote task).
        _once_replayed(self.context.is_replaying, canceled)


def _once_replayed(replaying: Callable[[], bool], canceled: asyncio.Event) -> None:
    """Set ``canceled`` once the run no longer replays (checked on the run's loop)."""
    if not replaying():
        canceled.set()
    else:
        asyncio.get_running_loop().call_later(0.01, _once_replayed, replaying, canceled)


class _Replayed:
    """The event queue of a resumed durable turn: what the executor emits while the execution
    replays was stored by an earlier invocation, and is dropped."""

    def __init__(self, log: RunLog, replaying: Callable[[], bool]) -> None:
        self._log = log
        self._replaying = replaying

    async def enqueue_event(self, event: Event) -> None:
        if not self._replaying():
            await self._log.enqueue_event(event)


def _claim(runtime: Runtime, item: WorkItem, _step: StepContext) -> str:
    claimed = claim_run(runtime, item, receive_count=1)
    return Claim.SKIPPED.value if claimed is None else claimed.result.value


def _await(runtime: Runtime, scope: Scope, task_id: str, callback_id: str, _step: StepContext) -> str:
    rule = partial(await_input, callback_id=callback_id)
    return mutate(runtime.store, scope, task_id, rule).result.value


def _end_wait(runtime: Runtime, scope: Scope, task_id: str, callback_id: str, _step: StepContext) -> bool:
    rule = partial(end_wait, callback_id=callback_id, text=INPUT_WAIT_TEXT, max_history=runtime.settings.max_history)
    return mutate(runtime.store, scope, task_id, rule).result
