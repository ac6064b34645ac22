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

import asyncio
import concurrent.futures
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Literal

from ..json_types import Json, JsonValue
from ..mutation import mutate
from ..ports import DelegationRef, Scope, TaskStore, WorkItem
from ..ports.durable import DurableRuns
from ..transitions import Await, Claim, await_input, end_wait, hold_for_sleep
from .api import PushWait, Steps
from .run_log import RunLog
from .run_report import RunReport
from .worker import Resumable, claim_run, process_work_item

if TYPE_CHECKING:
    from aws_durable_execution_sdk_python.context import DurableContext
    from aws_durable_execution_sdk_python.types import Callback, StepContext

    from ..runtime import Runtime

__all__ = ["INPUT_WAIT_TEXT", "DurableQueue", "DurableSteps", "execution_name", "run_task"]

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
    from aws_durable_execution_sdk_python.exceptions import SuspendExecution

    claimed = turn.step(partial(_claim, runtime, item), name="claim")
    if claimed != Claim.CLAIMED.value:
        return _state_after(runtime, item)
    scope = Scope(item.tenant, item.owner)
    record = runtime.store.get_task(scope, item.task_id)
    if record is None or record.running_message_id != item.message_id:
        return _state_after(runtime, item)  # ended meanwhile (canceled, or settled by the sweeper)

    def steps(log: RunLog) -> Steps:
        return DurableSteps(turn, log, runtime, item, started)

    resumable = Resumable(record=record, steps=steps, replaying=turn.is_replaying, suspend=(SuspendExecution,))
    report = process_work_item(runtime, item, resumable=resumable)
    if report is not None:
        on_run(report)  # the part of the run this invocation made (its first steps were replayed)
    return _state_after(runtime, item)


def _claim(runtime: Runtime, item: WorkItem, _step: StepContext) -> str:
    claimed = claim_run(runtime, item, receive_count=1)
    return Claim.SKIPPED.value if claimed is None else claimed.result.value


class DurableSteps(Steps):
    """``context.steps`` in durable mode: each ``run`` is a checkpointed step of the turn's child
    context, each ``sleep`` a durable wait (no function runs meanwhile; the run's lease is
    extended over it). Before a step, what the executor emitted is stored (so a replay, which
    drops what it re-emits, loses nothing); a step's own events are stored before its checkpoint.
    After a step that leaves less than ``durable_step_seconds`` of the invocation, the run goes on
    in a new invocation (a one-second wait), so no step meets the function's timeout. That choice
    is recorded with the step's result, so a replay makes the same one. A step the run's end (a
    cancel) cuts off is recorded as stopped, in one log line: not a failure to retry."""

    def __init__(self, context: DurableContext, log: RunLog, runtime: Runtime, item: WorkItem, started: float) -> None:
        self._context = context
        self._log = log
        self._runtime = runtime
        self._settings = runtime.settings
        self._item = item
        self._started = started
        self.public_url = runtime.settings.public_url

    async def run(self, name: str, fn: Callable[[], JsonValue]) -> JsonValue:
        from aws_durable_execution_sdk_python.config import Duration

        await self._log.flush()
        loop = asyncio.get_running_loop()
        calls: list[concurrent.futures.Future[Json]] = []
        stopping = threading.Event()

        async def call() -> Json:
            result = await Steps.run(self, name, fn)  # the plain call, here inside the step
            await self._log.flush()
            return {"result": result, "goOn": self._left() < self._settings.durable_step_seconds}

        def body(_step: StepContext) -> Json:
            running = asyncio.run_coroutine_threadsafe(call(), loop)
            calls.append(running)
            if stopping.is_set():
                running.cancel()
            try:
                return running.result()
            except concurrent.futures.CancelledError:
                # The run was stopped while the step worked (CancelTask, the invocation's deadline,
                # the task taken over): the step ends without a result. Not a failure: raised, the
                # SDK would log a traceback and schedule a retry of a run that is over.
                logger.info(
                    "step %r stopped: its run ended (canceled, out of time or taken over)",
                    name,
                    extra={"task_id": self._item.task_id},
                )
                return {"stopped": True}

        try:
            done = await asyncio.to_thread(self._context.step, body, name)
        except asyncio.CancelledError:
            stopping.set()  # the step's work stops with the run, not when the process ends
            for running in calls:
                running.cancel()
            raise
        if done.get("stopped"):
            # Replayed: the run this step belonged to ended with it; so does this one.
            raise asyncio.CancelledError
        if done["goOn"]:
            await asyncio.to_thread(self._context.wait, Duration.from_seconds(1), f"{name}-go-on")
        return done["result"]

    durable = True

    async def sleep(self, seconds: float, name: str) -> None:
        """A callback wait that times out after ``seconds``: no function runs meanwhile, and
        CancelTask can end it early (it fails the callback the head names; the run's monitor then
        sees the cancel mark)."""
        wait = await self._open(seconds, name, token="")
        if await wait.result() == "canceled":
            await self.until_stopped()

    async def open_wait(self, seconds: float, name: str, *, token_digest: str) -> PushWait:
        wait = await self._open(seconds, name, token=token_digest)
        return wait if wait.held else _Ended()

    async def expect_push(self, token_digest: str, ref: str) -> None:
        item = self._item
        target = DelegationRef(Scope(item.tenant, item.owner), item.task_id, token_digest)
        await asyncio.to_thread(self._runtime.store.put_delegation_ref, ref, target)
        await asyncio.to_thread(self._hold, 0, "", token_digest, None)

    async def forget_push(self, ref: str) -> None:
        await asyncio.to_thread(self._runtime.store.delete_delegation_ref, ref)

    async def until_stopped(self) -> None:
        # CancelTask woke the wait (it fails the callback): the run's monitor sees the cancel mark
        # and stops the executor, which must not start its next step meanwhile. A monitor that
        # cannot read the task stops the run itself within the lease.
        await asyncio.sleep(self._settings.run_lease_seconds)

    async def _open(self, seconds: float, name: str, *, token: str) -> _CallbackWait:
        from aws_durable_execution_sdk_python.config import CallbackConfig, Duration

        await self._log.flush()
        whole = max(1, math.ceil(seconds))
        config = CallbackConfig(timeout=Duration.from_seconds(whole))
        callback = await asyncio.to_thread(self._context.create_callback, name, config)
        # No function renews the run's lease while it waits: hold it over the wait, and name the
        # callback on the head for CancelTask and the push receiver (a step, so a replay does not
        # write it again).
        hold = partial(self._hold, whole, callback.callback_id, token)
        held = await asyncio.to_thread(self._context.step, hold, f"{name}-hold")
        return _CallbackWait(callback, bool(held))

    def _hold(self, seconds: int, callback_id: str, token: str, _step: StepContext | None) -> bool:
        item = self._item
        lease = seconds + self._settings.run_lease_seconds
        rule = partial(
            hold_for_sleep,
            message_id=item.message_id,
            now=int(time.time()),
            lease_seconds=lease,
            callback_id=callback_id,
            token=token,
        )
        return mutate(self._runtime.store, Scope(item.tenant, item.owner), item.task_id, rule).result

    def _left(self) -> float:
        """Seconds left of this invocation: the function's own count when Lambda gives one, at most
        the configured limit counted from the invocation's start."""
        limit = self._settings.durable_invocation_seconds - (time.monotonic() - self._started)
        lambda_context = getattr(self._context, "lambda_context", None)
        if lambda_context is not None:
            limit = min(limit, lambda_context.get_remaining_time_in_millis() / 1000)
        return limit


class _CallbackWait:
    """A wait on a durable callback: ``held`` is False when the run no longer owned the task."""

    def __init__(self, callback: Callback[str], held: bool) -> None:
        self._callback = callback
        self.held = held

    async def result(self) -> Literal["push", "timeout", "canceled"]:
        from aws_durable_execution_sdk_python.exceptions import CallbackError, CallbackExternalError

        try:
            await asyncio.to_thread(self._callback.result)
        except CallbackExternalError:
            return "canceled"  # failed by CancelTask (DurableRuns.abandon)
        except CallbackError:
            return "timeout"
        return "push"


class _Ended:
    """The wait of a run that no longer owns its task (canceled, or settled by the sweeper)."""

    async def result(self) -> Literal["canceled"]:
        return "canceled"


def _await(runtime: Runtime, scope: Scope, task_id: str, callback_id: str, _step: StepContext) -> str:
    rule = partial(await_input, callback_id=callback_id)
    return mutate(runtime.store, scope, task_id, rule).result.value


def _end_wait(runtime: Runtime, scope: Scope, task_id: str, callback_id: str, _step: StepContext) -> bool:
    rule = partial(end_wait, callback_id=callback_id, text=INPUT_WAIT_TEXT, max_history=runtime.settings.max_history)
    return mutate(runtime.store, scope, task_id, rule).result
