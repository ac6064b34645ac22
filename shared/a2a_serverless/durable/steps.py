"""``context.steps`` in durable mode (:class:`DurableSteps`): each step of an executor with
``durable_steps`` is a checkpointed step of its turn's child context (:mod:`.turns`), each sleep a
durable wait, and the waits a delegation opens (:meth:`DurableSteps.open_wait`) are durable callbacks
a verified push or CancelTask completes (:mod:`a2a_serverless.delegation.hook`).

A step that completed is replayed from its checkpoint after the function is recycled, never run
again, so its events are never written twice.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Literal

from ..execution.api import PushWait, Steps
from ..execution.run_log import RunLog
from ..json_types import Json, JsonValue
from ..mutation import mutate
from ..ports import DelegationRef, Scope, WorkItem
from ..transitions import hold_for_sleep

if TYPE_CHECKING:
    from aws_durable_execution_sdk_python.context import DurableContext
    from aws_durable_execution_sdk_python.types import Callback, StepContext

    from ..runtime import Runtime

__all__ = ["DurableSteps"]

logger = logging.getLogger(__name__)


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
