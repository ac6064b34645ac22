"""A run's writes: the event queue handed to the executor, and the one writer of the task's head.

The worker owns its task while it runs it, so it does not read the task before each write: it keeps
the record as it last committed it, and each commit is conditioned on that record's version. A
conflict means someone else wrote the task (CancelTask's mark, or another writer that ended the run):
the writer then reads the task again and lets the rule decide (carry on, or the run is lost).

:class:`RunLog` is the executor's ``EventQueue``. Each event is validated at once against the run's
view of the task (so an invalid event raises in the executor, where it was emitted), and queued;
a committer writes what is queued in order, and the events that arrive while a commit is in flight
go out together in the next one (group commit), within what one transaction can hold. Commits
start at least the commit interval apart (``Settings.commit_interval``: 0.05 s on DynamoDB, 0 in
memory): every commit rewrites the task's head (and moves it in the listing indexes when its status
changed), so an agent that streams its answer in small chunks costs one commit per interval rather
than one per chunk; a chunk waits up to that interval for its commit (what streams pay). With an
interval, the first commit also takes what the executor emits in its next few steps
(:data:`FIRST_COMMIT_STEPS`): a ``working`` status and the answer that follows it go out together.
An event that settles the task (terminal or interrupted), and :meth:`RunLog.flush`, commit at once;
the event that settles is committed before ``enqueue_event`` returns, and closes the queue.
With tracing on, each commit is a span (:func:`a2a_serverless.telemetry.commit`) naming how many
events and bytes it carried, and the log items it writes carry its ``traceparent``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from .. import telemetry
from ..blobs import PartOffloader
from ..config import Settings
from ..errors import InvalidAgentResponseError
from ..lifecycle import Step, executor_event
from ..models import Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from ..mutation import Committed, Transition, rebase
from ..ports import MAX_ITEM_PAYLOAD_BYTES, ItemTooLarge, TaskRecord, TaskStore, VersionConflict
from ..transitions import RunLost, append_steps
from .api import Event
from .run_report import Written, references

__all__ = [
    "BATCH_BYTES",
    "FIRST_COMMIT_STEPS",
    "MAX_PENDING_BYTES",
    "RunLog",
    "RunWriter",
    "to_stream_response",
]

logger = logging.getLogger(__name__)

R = TypeVar("R")

BATCH_BYTES = 2 * 1024 * 1024
"""Most event bytes one commit carries (a transaction holds 4 MB, the snapshot included)."""
MAX_PENDING_BYTES = 8 * 1024 * 1024
"""An executor that emits faster than its events can be stored waits once this much is queued."""
FIRST_COMMIT_STEPS = 8
"""How many steps of the loop a run's first commit lets the executor take after its first event
(:meth:`RunLog._first_commit`): enough for an agent that emits a status and then its answer."""
_ATTEMPTS = 20


class _Handoff:
    """A batch handed from the loop to the first commit's thread, which takes what is queued itself
    if none comes in time; whichever comes first decides, once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._given = threading.Event()
        self._batch: list[tuple[Step, int]] | None = None
        self._taken = False

    def give(self, batch: Callable[[], list[tuple[Step, int]]]) -> None:
        with self._lock:
            if not self._taken:
                self._batch = batch()
        self._given.set()

    def take(self, timeout: float, batch: Callable[[], list[tuple[Step, int]]]) -> list[tuple[Step, int]]:
        self._given.wait(timeout)
        with self._lock:
            self._taken = True
            return self._batch if self._batch is not None else batch()


def to_stream_response(event: Event) -> StreamResponse:
    if isinstance(event, Task):
        return StreamResponse(task=event)
    if isinstance(event, Message):
        return StreamResponse(message=event)
    if isinstance(event, TaskStatusUpdateEvent):
        return StreamResponse(status_update=event)
    if isinstance(event, TaskArtifactUpdateEvent):
        return StreamResponse(artifact_update=event)
    raise InvalidAgentResponseError(f"unsupported event type {type(event).__name__}")


class RunWriter:
    """Every write of one run (its event batches, lease renewals, the final settle) goes through
    here, one at a time (the committer and the lease renewer are on different threads)."""

    def __init__(self, store: TaskStore, record: TaskRecord) -> None:
        self._store = store
        self._record = record
        self._committed = True
        """Whether ``_record`` is what this run committed (False: what it read after a conflict)."""
        self._lock = threading.Lock()

    @property
    def record(self) -> TaskRecord:
        """The task as this run last committed (or read) it."""
        return self._record

    def ended_run(self, message_id: str) -> bool:
        """Whether this run's own commit ended its run of ``message_id`` (settled the task). Waits
        for a commit in flight: its head may be stored a moment before the commit returns (a
        store's write after it, such as a checkpoint), and the head alone cannot tell."""
        with self._lock:
            return self._committed and self._record.running_message_id != message_id

    def transact(self, rule: Callable[[TaskRecord], Transition[R]]) -> Committed[R]:
        """Apply ``rule`` to the record as last committed and commit its decision; on a conflict,
        read the task again and re-apply the rule to what is stored now."""
        with self._lock:
            record = self._record
            for _ in range(_ATTEMPTS):
                decided = rule(record)
                if decided.record is None:
                    return Committed(record, decided.result, wrote=False)
                try:
                    stored = self._store.commit(
                        rebase(decided.record, record), decided.events, snapshot=decided.snapshot
                    )
                except VersionConflict:
                    fresh = self._store.get_task(record.scope, record.task_id)
                    if fresh is None:
                        raise RunLost() from None
                    record = self._record = fresh
                    self._committed = False
                    continue
                self._record, self._committed = stored, True
                return Committed(stored, decided.result, wrote=True)
            raise VersionConflict(f"task {record.task_id} kept changing; gave up after {_ATTEMPTS} attempts")


class RunLog:
    """The executor's event queue for one run (see the module docstring). Use it as an async
    context manager: the committer runs inside it."""

    def __init__(
        self, writer: RunWriter, *, message_id: str, settings: Settings, offloader: PartOffloader | None = None
    ) -> None:
        self._writer = writer
        self._interval = settings.commit_interval
        self._offloader = offloader
        """Stores an event's large parts (:mod:`a2a_serverless.blobs`) before it is queued, so what
        is queued, measured and folded is what will be written."""
        self._message_id = message_id
        self._max_history = settings.max_history
        self._task = writer.record.task
        """The run's view: the task as committed, with every queued step applied."""
        self._base_seq = writer.record.last_seq
        self._steps: list[tuple[Step, int]] = []
        self._queued_bytes = 0
        self._accepted = 0
        self._wake = asyncio.Event()
        self._now = asyncio.Event()
        """Set when what is queued must be committed without waiting out the interval."""
        self._progress = asyncio.Condition()
        self._committer: asyncio.Task[None] | None = None
        self.closed = False
        """True once an event settled the task: any further one is refused."""
        self.failure: BaseException | None = None
        """Why committing stopped (the run lost its task, or the store refused a write)."""
        self.failed = asyncio.Event()
        self.written = Written()
        """What the run's commits stored so far (the worker's cost metrics)."""

    async def __aenter__(self) -> RunLog:
        self._committer = asyncio.create_task(self._commit_queued())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._committer is not None:
            self._committer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._committer

    @property
    def task(self) -> Task:
        return self._task

    async def enqueue_event(self, event: Event) -> None:
        if self.failure is not None:
            raise self.failure
        if self.closed:
            raise InvalidAgentResponseError("the task already settled; no further events")
        incoming = to_stream_response(event)
        if self._offloader is not None and self._offloader.may_offload(incoming):
            record = self._writer.record
            stored = await asyncio.to_thread(self._offloader.offload_one, incoming, record.scope, record.task_id)
            self.written.offloaded += references(stored) - references(incoming)
            incoming = stored
        step = executor_event(self._task, incoming, first=self._accepted == 0, max_history=self._max_history)
        self._accepted += 1
        if step is None:
            return
        size = 0
        for stored in step.events:
            length = len(stored.to_json().encode("utf-8"))
            if length > MAX_ITEM_PAYLOAD_BYTES:
                raise ItemTooLarge(
                    f"an event of {length} bytes does not fit one item (at most {MAX_ITEM_PAYLOAD_BYTES})"
                )
            size += length
        self._task = step.task
        self._steps.append((step, size))
        self._queued_bytes += size
        self._wake.set()
        if step.settles:
            self.closed = True
            await self.flush()
        elif self._queued_bytes > MAX_PENDING_BYTES:
            await self._wait_for(lambda: self._queued_bytes <= MAX_PENDING_BYTES // 2)
        else:
            await asyncio.sleep(0)  # let an idle committer start on it right away

    async def flush(self) -> None:
        """Commit everything queued now; return once it is, raise why it could not be."""
        self._now.set()
        self._wake.set()
        try:
            await self._wait_for(lambda: not self._steps)
        finally:
            self._now.clear()

    async def _wait_for(self, condition: Callable[[], bool]) -> None:
        async with self._progress:
            await self._progress.wait_for(lambda: condition() or self.failure is not None)
        if self.failure is not None:
            raise self.failure

    async def _commit_queued(self) -> None:
        started = 0.0  # when the last commit began (0: none yet)
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._steps:
                    if not started and self._interval > 0:
                        started, batch, committed = await self._first_commit()
                    else:
                        await self._linger(started + self._interval - time.monotonic())
                        started, batch, committed = await asyncio.to_thread(self._commit, self._batch())
                    written = sum(size for _, size in batch)
                    if committed.wrote:
                        self.written.add(sum(len(step.events) for step, _ in batch), written)
                    self._base_seq = committed.record.last_seq
                    del self._steps[: len(batch)]
                    self._queued_bytes -= written
                    async with self._progress:
                        self._progress.notify_all()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if not isinstance(exc, RunLost):
                logger.error("could not store the run's events", exc_info=exc)
            self.failure = exc
            self.failed.set()
            async with self._progress:
                self._progress.notify_all()

    async def _first_commit(self) -> tuple[float, list[tuple[Step, int]], Committed[None]]:
        """The run's first commit, with what the executor emits as it starts (a hello's ``working``
        status and its answer: one commit, not two). Its thread starts at once; the loop lets the
        executor go :data:`FIRST_COMMIT_STEPS` steps further, then hands the thread what is queued.
        A loop that does not come back within the commit interval (an executor that blocks it) does
        not hold the first event: the thread then commits what is queued itself."""
        woke = time.monotonic()  # the next commit's interval counts from the first event, not from here
        handoff = _Handoff()
        # Submitted now (asyncio.to_thread would submit at the task's first step, which a loop the
        # executor blocks next never takes), in this context (the run's span), as to_thread would.
        call = partial(contextvars.copy_context().run, self._commit_handed, handoff)
        commit = asyncio.get_running_loop().run_in_executor(None, call)
        for _ in range(FIRST_COMMIT_STEPS):
            await asyncio.sleep(0)
        handoff.give(self._batch)
        _, batch, committed = await commit
        return woke, batch, committed

    def _commit_handed(self, handoff: _Handoff) -> tuple[float, list[tuple[Step, int]], Committed[None]]:
        return self._commit(handoff.take(self._interval, self._batch))

    async def _linger(self, seconds: float) -> None:
        """Let more events join the next commit, for at most ``seconds``: not when the run must
        commit now (an event settled it, or a flush), nor when a full batch is already queued."""
        if seconds <= 0 or self._now.is_set() or self.closed or self._queued_bytes >= BATCH_BYTES:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._now.wait(), seconds)

    def _commit(self, batch: list[tuple[Step, int]]) -> tuple[float, list[tuple[Step, int]], Committed[None]]:
        """(On a thread.) Commit ``batch``; returns when the commit began, the batch, and what it stored."""
        started = time.monotonic()
        steps = [step for step, _ in batch]
        rule = partial(append_steps, steps=steps, message_id=self._message_id, base_seq=self._base_seq)
        with telemetry.commit(sum(len(step.events) for step in steps), sum(size for _, size in batch)) as note:
            committed = self._writer.transact(rule)
            note.stored(committed.record.last_seq)
        return started, batch, committed

    def _batch(self) -> list[tuple[Step, int]]:
        batch: list[tuple[Step, int]] = []
        total = 0
        for step, size in self._steps:
            if batch and total + size > BATCH_BYTES:
                break
            batch.append((step, size))
            total += size
        return batch
