"""The run's rules: every change of a task's lifecycle, as a named pure transition.

A task is created SUBMITTED with its first message pending. From there:

* :func:`claim`: the worker takes the pending message (head only: ``running_message_id``, a lease);
  a redelivered item whose run was claimed before and never settled fails the task instead.
* :func:`append_steps`: what the running executor emits, validated one event at a time
  (:func:`.lifecycle.executor_event`) and committed in groups (the first artifact or message of a run is preceded by
  WORKING; a Message as a new task's first answer is a message-only reply).
* :func:`settle`: the end of a run, whatever happened (returned, raised, canceled, out of time);
  the task leaves it terminal or interrupted and no longer running.
* :func:`renew_lease`: a live run says so; :func:`expire_lease` (the sweeper) settles a run whose
  lease lapsed, :func:`dead_letter` one whose work item SQS gave up on.
* :func:`request_cancel` (CancelTask), :func:`continue_with` (a message for an interrupted task),
  :func:`fail_unscheduled` (its work could not be queued).

Each rule is a function of the record as stored and of what the caller knows (the message, the
clock) and returns a :class:`Transition`: the record to commit with its events, or nothing to do,
and a result for the caller. :func:`.mutation.mutate` reads, applies a rule and commits, and on a
version conflict re-reads and re-applies it; it returns the result of the attempt that committed,
so nothing a losing attempt computed can leak out (an agent never runs on a task CancelTask ended
before the claim).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from typing import NoReturn, TypeVar

from .errors import (
    FieldViolation,
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from .lifecycle import DEFAULT_MAX_HISTORY, Step, agent_message, apply_event, status_event
from .models import Message, Role, StreamResponse, TaskState, TaskStatus, utc_now
from .mutation import Transition
from .ports import SendKey, TaskHead, TaskRecord

__all__ = [
    "CANCELED_TEXT",
    "DEAD_LETTER_TEXT",
    "FAILED_TEXT",
    "INCOMPLETE_TEXT",
    "INTERRUPTED_TEXT",
    "INVALID_RESPONSE_TEXT",
    "LEASE_LOST_TEXT",
    "OUT_OF_TIME_TEXT",
    "SCHEDULE_FAILED_TEXT",
    "Await",
    "Claim",
    "RunEnd",
    "RunLost",
    "append_steps",
    "await_input",
    "claim",
    "continue_with",
    "dead_letter",
    "end_task",
    "end_wait",
    "expire_lease",
    "fail_unscheduled",
    "hold_for_sleep",
    "push_wakes",
    "refuse_message",
    "renew_lease",
    "request_cancel",
    "settle",
    "wake_by_push",
]

R = TypeVar("R")

CANCELED_TEXT = "Canceled at the caller's request."
"""The status message of a task canceled by CancelTask (by the operation or by its worker)."""
FAILED_TEXT = "The agent failed while working on this task."
INVALID_RESPONSE_TEXT = "The agent produced an invalid response."
INCOMPLETE_TEXT = "The agent finished without reporting a result."
INTERRUPTED_TEXT = "The agent's run was interrupted before it finished; please send the message again."
LEASE_LOST_TEXT = "The agent's run stopped responding before it finished; please send the message again."
OUT_OF_TIME_TEXT = (
    "The agent ran out of time before it finished (the worker's time limit); please send the message again."
)
DEAD_LETTER_TEXT = "The agent could not process this message after several attempts."
SCHEDULE_FAILED_TEXT = "The task could not be scheduled; please send the message again."


class RunLost(InvalidAgentResponseError):
    """The run no longer owns its task (another writer settled it): nothing more of it is written."""

    def __init__(self) -> None:
        super().__init__("this run no longer owns the task")


# ------------------------------------------------------------------------------- ending a task


def end_task(
    record: TaskRecord, state: TaskState, text: str = "", *, max_history: int = DEFAULT_MAX_HISTORY
) -> tuple[TaskRecord, tuple[StreamResponse, ...]]:
    """The record moved to ``state`` by the server itself (cancel, failure, dead letter), with
    ``text`` as the agent's status message, and nothing left pending, running or to cancel."""
    task = record.task
    message = agent_message(task, text, str(uuid.uuid4())) if text else None
    event = status_event(task, TaskStatus(state=state, message=message, timestamp=utc_now()))
    ended = replace(
        record,
        task=apply_event(task, event, max_history=max_history),
        pending_message_id="",
        running_message_id="",
        lease_until=0,
        cancel_requested=False,
        waiting_callback="",
    )
    return ended, (event,)


def _ended(record: TaskRecord, result: R, state: TaskState, text: str, max_history: int) -> Transition[R]:
    ended, events = end_task(record, state, text, max_history=max_history)
    return Transition(result, ended, events)


# ------------------------------------------------------------------------------- the worker's run


class Claim(StrEnum):
    CLAIMED = "claimed"
    """The run is this worker's: run the executor."""
    INTERRUPTED = "interrupted"
    """A redelivery of a run that was claimed and never settled: the task was failed."""
    SKIPPED = "skipped"
    """A duplicate or stale item (or a task already ended): nothing to do."""


def claim(
    record: TaskRecord, message_id: str, *, receive_count: int, now: int, lease_seconds: int, max_history: int
) -> Transition[Claim]:
    """Only the work item whose message is pending may start a run: the claim makes it the running
    one, with a lease until ``now + lease_seconds``. The task's state is the executor's to report
    (its first event). A redelivered item (``receive_count`` > 1) whose run is still recorded as
    running was abandoned by its worker: the task fails with a clear message."""
    if record.task.status.state.is_terminal:
        return Transition(Claim.SKIPPED)
    if record.pending_message_id == message_id:
        claimed = replace(
            record,
            pending_message_id="",
            running_message_id=message_id,
            lease_until=now + lease_seconds,
            waiting_callback="",
        )
        return Transition(Claim.CLAIMED, claimed)
    if record.running_message_id == message_id and receive_count > 1:
        return _ended(record, Claim.INTERRUPTED, TaskState.TASK_STATE_FAILED, INTERRUPTED_TEXT, max_history)
    return Transition(Claim.SKIPPED)


def append_steps(record: TaskRecord, steps: Sequence[Step], *, message_id: str, base_seq: int) -> Transition[None]:
    """Commit a run's steps, validated against its view of the task as of ``base_seq``. Refused
    (:class:`RunLost`) once the run no longer owns the task: another writer ended it or logged
    after ``base_seq``. A step that settles the task ends the run: not running any more, no lease;
    a terminal one also drops a cancel mark (an interrupted one keeps it: :func:`settle` cancels)."""
    if record.running_message_id != message_id or record.last_seq != base_seq or record.task.status.state.is_terminal:
        raise RunLost()
    last = steps[-1]
    new = replace(record, task=last.task, replied=record.replied or any(s.replied for s in steps))
    if last.settles:
        terminal = last.task.status.state.is_terminal
        new = replace(
            new,
            running_message_id="",
            lease_until=0,
            cancel_requested=new.cancel_requested and not terminal,
            waiting_callback="",  # a durable run's sleep named one: the run is over
        )
    events = tuple(e for step in steps for e in step.events)
    return Transition(None, new, events, snapshot=any(s.snapshot for s in steps))


def renew_lease(record: TaskRecord, *, message_id: str, now: int, lease_seconds: int) -> Transition[bool]:
    """Extend the run's lease (never shorten it: a durable run's sleep holds it longer); False
    (nothing written) once the run no longer owns the task."""
    if record.running_message_id != message_id:
        return Transition(False)
    return Transition(True, replace(record, lease_until=max(record.lease_until, now + lease_seconds)))


class RunEnd(StrEnum):
    RETURNED = "returned"
    """The executor returned (or reported a final state)."""
    FAILED = "failed"
    """The executor raised, or what it emitted could not be stored."""
    INVALID = "invalid"
    """The executor emitted an event the task could not take."""
    CANCELED = "canceled"
    """CancelTask's mark stopped the run."""
    OUT_OF_TIME = "out_of_time"
    """The worker's deadline stopped the run."""


_END_TEXT = {
    RunEnd.FAILED: FAILED_TEXT,
    RunEnd.INVALID: INVALID_RESPONSE_TEXT,
    RunEnd.OUT_OF_TIME: OUT_OF_TIME_TEXT,
}


def settle(record: TaskRecord, *, message_id: str, end: RunEnd, max_history: int) -> Transition[None]:
    """Leave the task terminal or interrupted after the run of ``message_id``, and not running.

    * Another run's task (a newer run owns it): nothing.
    * Already terminal: only leftovers (running, lease, cancel mark) are cleared.
    * The run stopped for input itself, but CancelTask had marked it: the cancel was accepted, so it
      wins (CANCELED). Otherwise an interruption the run reported stays.
    * Canceled: CANCELED. Raised, invalid, out of time: FAILED with a safe message.
    * Returned without a final state: COMPLETED with the last agent message when there is one, or
      with the artifacts; FAILED when it produced nothing.
    """
    if record.running_message_id not in ("", message_id):
        return Transition(None)
    task = record.task
    state = task.status.state
    leftovers = bool(record.running_message_id or record.cancel_requested or record.lease_until)
    clear = replace(record, running_message_id="", lease_until=0, cancel_requested=False, waiting_callback="")
    if state.is_terminal:
        return Transition(None, clear) if leftovers else Transition(None)
    if not record.running_message_id:
        # The run settled the task itself (it stopped for input).
        if record.cancel_requested:
            return _ended(record, None, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT, max_history)
        return Transition(None, clear) if leftovers else Transition(None)
    if end is RunEnd.CANCELED:
        return _ended(record, None, TaskState.TASK_STATE_CANCELED, "", max_history)
    if end is not RunEnd.RETURNED:
        return _ended(record, None, TaskState.TASK_STATE_FAILED, _END_TEXT[end], max_history)
    if task.history and task.history[-1].role is Role.ROLE_AGENT:
        last = task.history[-1]
        event = status_event(task, TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=last, timestamp=utc_now()))
        return Transition(None, replace(clear, task=apply_event(task, event, max_history=max_history)), (event,))
    if task.artifacts:
        return _ended(record, None, TaskState.TASK_STATE_COMPLETED, "", max_history)
    return _ended(record, None, TaskState.TASK_STATE_FAILED, INCOMPLETE_TEXT, max_history)


def expire_lease(record: TaskRecord, *, now: int, max_history: int) -> Transition[bool]:
    """The sweeper: a run whose lease ended before ``now`` (its worker died, or its environment was
    shut down) fails its task. True when it did."""
    if not record.running_message_id or not record.lease_until or record.lease_until >= now:
        return Transition(False)
    if record.task.status.state.is_terminal:
        return Transition(False, replace(record, running_message_id="", lease_until=0, cancel_requested=False))
    return _ended(record, True, TaskState.TASK_STATE_FAILED, LEASE_LOST_TEXT, max_history)


def dead_letter(record: TaskRecord, *, message_id: str, max_history: int) -> Transition[bool]:
    """A work item SQS gave up on: fail its task if that message is still pending or running."""
    mine = message_id in (record.pending_message_id, record.running_message_id)
    if record.task.status.state.is_terminal or not mine:
        return Transition(False)
    return _ended(record, True, TaskState.TASK_STATE_FAILED, DEAD_LETTER_TEXT, max_history)


# ------------------------------------------------------------------------------- the API's rules


def request_cancel(record: TaskRecord, *, max_history: int) -> Transition[None]:
    """CancelTask: a task nobody runs is canceled at once; a running one is marked for its worker
    (which stops the run and ends it CANCELED). A terminal task is TaskNotCancelable."""
    task = record.task
    if task.status.state.is_terminal:
        raise TaskNotCancelableError(
            f"Task {task.id} is already {task.status.state.value}", metadata={"taskId": task.id}
        )
    if record.running_message_id:
        return Transition(None) if record.cancel_requested else Transition(None, replace(record, cancel_requested=True))
    return _ended(record, None, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT, max_history)


def continue_with(record: TaskRecord, message: Message, *, max_history: int, key: SendKey | None) -> Transition[bool]:
    """A message for an interrupted task (INPUT_REQUIRED / AUTH_REQUIRED) becomes its pending
    message, after the agent's question in the history, and its send key ``key`` is written with
    it (None: the send is not de-duplicated, no key). True if accepted. False when the task cannot
    take a message now but its history holds one with this id: perhaps a re-send, which the caller
    tells by the key (and otherwise raises :func:`refuse_message`'s error). Raises the spec's
    errors for a task that cannot take it (``DuplicateMessage`` from the store when the key exists)."""
    task = record.task
    if message.context_id and task.context_id and message.context_id != task.context_id:
        raise InvalidParamsError(
            violations=[FieldViolation("message.contextId", "does not match the task's contextId")]
        )
    if record.pending_message_id or record.running_message_id or not task.status.state.is_interrupted:
        if key is not None and any(m.message_id == message.message_id for m in task.history):
            return Transition(False)
        refuse_message(record)
    user_message = message.model_copy(update={"context_id": task.context_id})
    asked = [task.status.message] if task.status.message is not None else []
    history = [*task.history, *asked, user_message][-max_history:]
    status = task.status.model_copy(update={"message": None})
    new_task = task.model_copy(update={"history": history, "status": status})
    # A history edit no event expresses: the task is stored as a snapshot.
    return Transition(
        True,
        replace(record, task=new_task, pending_message_id=message.message_id),
        snapshot=True,
        key=key,
    )


def refuse_message(record: TaskRecord) -> NoReturn:
    """The spec's error for a message to a task that cannot take one: terminal, or not (yet)
    waiting for input."""
    task = record.task
    state = task.status.state
    if state.is_terminal:
        raise UnsupportedOperationError(
            f"Task {task.id} is in terminal state {state.value} and cannot accept messages",
            metadata={"taskId": task.id},
        )
    raise UnsupportedOperationError(
        f"Task {task.id} is still working on a previous message", metadata={"taskId": task.id}
    )


# ------------------------------------------------------------------ durable executions (docs/durable-tasks.md)


class Await(StrEnum):
    WAIT = "wait"
    """The task waits for input and now names the execution's callback: suspend until it is called."""
    ENDED = "ended"
    """The task is over (canceled meanwhile, or failed): the execution ends."""
    NOT_WAITING = "not-waiting"
    """The task is neither waiting for input nor over (its run was lost; the sweeper settles it)."""


def await_input(record: TaskRecord, *, callback_id: str) -> Transition[Await]:
    """A durable execution whose turn left the task INPUT_REQUIRED / AUTH_REQUIRED records the
    callback its next message resumes it with. A message accepted before (``pending_message_id``)
    is delivered with the same callback: SendMessage waits for the id to appear."""
    state = record.task.status.state
    if state.is_terminal:
        return Transition(Await.ENDED)
    if not state.is_interrupted or record.running_message_id:
        return Transition(Await.NOT_WAITING)
    if record.waiting_callback == callback_id:
        return Transition(Await.WAIT)
    return Transition(Await.WAIT, replace(record, waiting_callback=callback_id, waiting_token="", push_woken=""))


def hold_for_sleep(
    record: TaskRecord, *, message_id: str, now: int, lease_seconds: int, callback_id: str, token: str = ""
) -> Transition[bool]:
    """A durable run that sleeps (no function runs) holds its lease over the sleep and names the
    callback that ends it, for CancelTask to wake it; a delegation's wait also names the digest of
    the token its remote's push must carry (``token``) to wake it early. The states whose pushes
    already woke the delegation (``push_woken``) are kept while its token is the same, and cleared
    with another (a new delegation, or a plain sleep). False once the run no longer owns the task."""
    held = renew_lease(record, message_id=message_id, now=now, lease_seconds=lease_seconds)
    if held.record is None:
        return held
    woken = held.record.push_woken if token and token == held.record.waiting_token else ""
    return Transition(True, replace(held.record, waiting_callback=callback_id, waiting_token=token, push_woken=woken))


def wake_by_push(record: TaskRecord, *, token_digest: str, state: str) -> Transition[str]:
    """A verified push to a delegation (``delegation.hook``) announcing its remote task's ``state``:
    the callback to resume if :func:`push_wakes`, with ``state`` recorded in ``push_woken``
    (announced again, it wakes nothing); '' otherwise."""
    if not push_wakes(record, token_digest=token_digest, state=state):
        return Transition("")
    woken = f"{record.push_woken},{state}" if record.push_woken else state
    return Transition(record.waiting_callback, replace(record, push_woken=woken))


def push_wakes(head: TaskHead | TaskRecord, *, token_digest: str, state: str) -> bool:
    """Whether a push announcing ``state`` wakes the task: it waits on the delegation of
    ``token_digest``, and no push announcing ``state`` woke that delegation before."""
    waits = head.waiting_token == token_digest and bool(head.waiting_callback)
    return waits and state not in head.push_woken.split(",")


def end_wait(record: TaskRecord, *, callback_id: str, text: str, max_history: int) -> Transition[bool]:
    """The execution's wait for input ended without a message (its time limit): the task, if it
    still waits on this callback with nothing pending, fails with ``text``. True if it did."""
    if record.waiting_callback != callback_id or record.pending_message_id or record.state.is_terminal:
        return Transition(False)
    return _ended(record, True, TaskState.TASK_STATE_FAILED, text, max_history)


def fail_unscheduled(record: TaskRecord, *, message_id: str, max_history: int) -> Transition[None]:
    """The work item for ``message_id`` could not be queued: fail the task rather than leave it
    waiting for a worker that will never come."""
    if record.pending_message_id != message_id or record.task.status.state.is_terminal:
        return Transition(None)
    return _ended(record, None, TaskState.TASK_STATE_FAILED, SCHEDULE_FAILED_TEXT, max_history)
