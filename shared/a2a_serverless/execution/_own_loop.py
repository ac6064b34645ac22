"""A run on an event loop of its own, and an invocation that ends whatever the executor does (see
:mod:`.worker`, step 5).

:func:`run_on_own_loop` runs the run's coroutine on a new event loop, in a daemon thread made for
it, while the calling thread (the Lambda handler's, or the local stack's poller) waits. The calling
thread is outside the executor's loop, so it can still act when the executor blocks that loop.
The run tells its :class:`RunGuard` when it is asked to stop (CancelTask's mark as the monitor sees
it, the deadline, a task another writer took) and by when it must have ended; if it has not, the
calling thread **abandons** it: the guard's ``on_abandon`` ends the run as the run would have (the
worker settles the task itself), and the call returns.

When the run's coroutine ends but tasks it started are still pending (an executor that swallowed
its ``CancelledError``), they are cancelled once more and get ``LEFTOVER_GRACE_SECONDS`` on the
loop; then the loop is closed without waiting for them (``asyncio.run`` would wait without limit).
Either way an executor that will not stop is logged once, at WARNING, with the task id.

What becomes of an abandoned executor: a coroutine that swallowed its cancellation is closed
(``GeneratorExit`` at its ``await``, on the loop's thread and in its own context, so its ``finally``
blocks run and its trace span ends as stopped) and dropped with its loop. One that blocks its loop keeps its thread
until it returns; whatever it then emits is refused (the task is settled and the run no longer
owns it), and the run's late steps log at INFO. That thread still uses the process: on Lambda an
executor that spins the CPU slows the environment's next invocations, and one that blocks forever
keeps a thread until the environment is recycled.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

from ..transitions import RunEnd

__all__ = ["LEFTOVER_GRACE_SECONDS", "RunGuard", "run_on_own_loop"]

logger = logging.getLogger("a2a_serverless.execution.worker")

R = TypeVar("R")
T = TypeVar("T")

LEFTOVER_GRACE_SECONDS = 1.0
"""How long tasks still pending when the run's coroutine ended get, once cancelled, to end."""

_DESTROYED_PENDING = "Task was destroyed but it is pending!"


class RunGuard(Generic[R]):
    """What the thread waiting for a run knows of it: when it was asked to stop, by when it must
    have ended, and how to end it without it (:meth:`arm`). Thread-safe."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self._changed = threading.Condition()
        self._asked_at: float | None = None
        self._by: float | None = None
        self.reason: RunEnd | None = None
        """Why the run was first asked to stop: CANCELED, OUT_OF_TIME, or None (it lost its task)."""
        self._on_abandon: Callable[[RunEnd | None], R] | None = None
        self._finished = False
        self._warned = False
        self._contexts: dict[asyncio.Task[Any], contextvars.Context] = {}
        self.abandoned = False
        """True once the waiting thread gave up on the run (its late steps are no news)."""

    def create_task(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A task of the run whose context is known, so that, abandoned, it can be closed in it
        (``Task.get_context`` is Python 3.12's)."""
        context = contextvars.copy_context()
        task = asyncio.get_running_loop().create_task(coro, context=context)
        self._contexts[task] = context
        return task

    def context_of(self, task: asyncio.Task[Any]) -> contextvars.Context | None:
        get_context = getattr(task, "get_context", None)
        return get_context() if get_context is not None else self._contexts.get(task)

    def arm(self, on_abandon: Callable[[RunEnd | None], R]) -> None:
        """How to end the run without it, given why it was asked to stop."""
        self._on_abandon = on_abandon

    def stop(self, reason: RunEnd | None, *, at: float, by: float) -> None:
        """The run is asked to stop at ``at`` (``time.monotonic()``, possibly ahead: the deadline)
        for ``reason``, and must have ended by ``by``. The first ask gives the reason (as the run
        acts on the first signal); the earliest ``by`` counts."""
        with self._changed:
            if self._asked_at is None or at < self._asked_at:
                self._asked_at, self.reason = at, reason
            if self._by is None or by < self._by:
                self._by = by
            self._changed.notify_all()

    def warn_once(self, message: str, *args: object) -> None:
        """Log that the executor will not stop: once per run, whichever part of the worker sees it."""
        with self._changed:
            if self._warned:
                return
            self._warned = True
        logger.warning(message, *args, extra={"task_id": self.task_id})

    def finish(self) -> None:
        with self._changed:
            self._finished = True
            self._changed.notify_all()

    def wait(self) -> bool:
        """Wait until the run finished (True) or is overdue (False: it is then marked abandoned)."""
        with self._changed:
            while not self._finished:
                left = None if self._by is None else self._by - time.monotonic()
                if left is not None and left <= 0 and self._on_abandon is not None:
                    self.abandoned = True
                    return False
                self._changed.wait(left if left is None or left > 0 else 0.05)
            return True

    def abandon(self) -> R:
        assert self._on_abandon is not None
        return self._on_abandon(self.reason)


class _Outcome(Generic[R]):
    value: R
    error: BaseException | None = None


def run_on_own_loop(main: Coroutine[Any, Any, R], guard: RunGuard[R]) -> R:
    """Run ``main`` on a new loop in a thread of its own; return its result, or what
    ``guard.abandon()`` returns once the run is overdue. The thread runs in a copy of the caller's
    context (as ``asyncio.run`` runs its coroutine), so log keys and the trace carry over."""
    outcome: _Outcome[R] = _Outcome()
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_exception_handler(guard))

    def drive() -> None:
        try:
            outcome.value = loop.run_until_complete(main)
        except BaseException as exc:
            outcome.error = exc
        finally:
            guard.finish()
            try:
                _wind_down(loop, guard)
            except Exception:
                logger.exception("could not wind the run's loop down", extra={"task_id": guard.task_id})
            finally:
                loop.close()

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(drive,), name="a2a-run-loop", daemon=True)
    thread.start()
    if not guard.wait():
        guard.warn_once(
            "the executor did not stop when asked (it blocks its event loop, or keeps running): "
            "the worker ended the run without it; its thread stays until it returns"
        )
        return guard.abandon()
    # The run ended; what it left behind gets its short grace before the invocation returns.
    thread.join(LEFTOVER_GRACE_SECONDS + 1.0)
    if thread.is_alive():
        guard.abandoned = True
        guard.warn_once("the executor blocks its event loop after the run ended; its thread stays until it returns")
    if outcome.error is not None:
        raise outcome.error
    return outcome.value


def _wind_down(loop: asyncio.AbstractEventLoop, guard: RunGuard[Any]) -> None:
    """Cancel what the run left pending, give it a short grace, then leave it (never wait for it)."""
    leftovers = asyncio.all_tasks(loop)
    if leftovers:
        for task in leftovers:
            task.cancel()
        loop.run_until_complete(asyncio.wait(leftovers, timeout=LEFTOVER_GRACE_SECONDS))
        for task in leftovers:
            if task.done() and not task.cancelled() and (exc := task.exception()) is not None:
                logger.info("a task the run left raised as it was stopped: %r", exc, extra={"task_id": guard.task_id})
        if stubborn := [task for task in leftovers if not task.done()]:
            guard.warn_once(
                "the executor did not stop when cancelled (it swallows asyncio.CancelledError): "
                "the worker ended the run without it (%d task(s) abandoned)",
                len(stubborn),
            )
            guard.abandoned = True
            for task in stubborn:
                _close(task, guard)
            return  # its async generators may be suspended in those tasks: not closed either
    loop.run_until_complete(loop.shutdown_asyncgens())


def _close(task: asyncio.Task[Any], guard: RunGuard[Any]) -> None:
    """Close an abandoned task's coroutine now, on its loop's thread and in its own context, as
    garbage collection would later, anywhere: its ``finally`` blocks and context managers (the
    run's trace span) then end in the context they began in, not in a stranger's."""
    context = guard.context_of(task)
    if context is None:
        return  # (Python 3.11, a task the executor made: left to garbage collection)
    try:
        context.run(task.get_coro().close)
    except RuntimeError as exc:  # it awaited again as it was closed
        logger.info("an abandoned task of the run would not close: %s", exc, extra={"task_id": guard.task_id})


def _exception_handler(guard: RunGuard[Any]) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """The loop's exception handler: asyncio's, except that the tasks of an abandoned run, dropped
    with its closed loop, are not reported as "destroyed but pending" (they were left on purpose)."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if guard.abandoned and context.get("message") == _DESTROYED_PENDING:
            logger.debug("an abandoned task of the run was dropped", extra={"task_id": guard.task_id})
            return
        loop.default_exception_handler(context)

    return handle
