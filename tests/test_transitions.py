"""The run's rules (``a2a_serverless.transitions``), as the pure functions they are: given a record,
what is written and what the caller learns."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from a2a_serverless.errors import InvalidAgentResponseError, TaskNotCancelableError, UnsupportedOperationError
from a2a_serverless.lifecycle import executor_event
from a2a_serverless.models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_serverless.mutation import Transition
from a2a_serverless.ports import Scope, SendKey, TaskRecord
from a2a_serverless.transitions import (
    CANCELED_TEXT,
    DEAD_LETTER_TEXT,
    INCOMPLETE_TEXT,
    INTERRUPTED_TEXT,
    LEASE_LOST_TEXT,
    OUT_OF_TIME_TEXT,
    Await,
    Claim,
    RunEnd,
    RunLost,
    append_steps,
    await_input,
    claim,
    continue_with,
    dead_letter,
    end_wait,
    expire_lease,
    hold_for_sleep,
    renew_lease,
    request_cancel,
    settle,
    wake_by_push,
)

S = TaskState
H = 200
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def message(text: str, role: Role = Role.ROLE_USER, message_id: str = "") -> Message:
    return Message(message_id=message_id or f"m-{text}", role=role, parts=[Part(text=text)])


def record(state: TaskState = S.TASK_STATE_SUBMITTED, **fields: Any) -> TaskRecord:
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=state), history=[message("hi", message_id="m1")])
    task = task.model_copy(update=fields.pop("task", {}))
    return TaskRecord(scope=Scope("", "alice"), task=task, version=3, last_seq=2, created_at=T0, **fields)


def status(state: TaskState, text: str = "") -> StreamResponse:
    msg = message(text, Role.ROLE_AGENT) if text else None
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=TaskStatus(state=state, message=msg))
    )


def chunk(text: str, append: bool = False) -> StreamResponse:
    artifact = Artifact(artifact_id="a", parts=[Part(text=text)])
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(task_id="t1", context_id="c1", artifact=artifact, append=append)
    )


def states(events: tuple[StreamResponse, ...]) -> list[str]:
    return [
        e.status_update.status.state.name if e.status_update else "artifact" if e.artifact_update else "message"
        for e in events
    ]


def status_text(rec: TaskRecord) -> str:
    assert rec.task.status.message is not None
    return rec.task.status.message.parts[0].text or ""


# ---------------------------------------------------------------------------------------- claim


def test_the_pending_message_is_claimed_with_a_lease_and_nothing_logged() -> None:
    decided = claim(record(pending_message_id="m1"), "m1", receive_count=1, now=100, lease_seconds=60, max_history=H)

    assert decided.result is Claim.CLAIMED
    assert decided.record is not None
    assert (decided.record.pending_message_id, decided.record.running_message_id) == ("", "m1")
    assert decided.record.lease_until == 160
    assert decided.record.state is S.TASK_STATE_SUBMITTED  # the executor reports its state
    assert decided.events == ()


@pytest.mark.parametrize(
    ("rec", "receive_count", "expected"),
    [
        pytest.param(record(S.TASK_STATE_CANCELED, pending_message_id="m1"), 1, Claim.SKIPPED, id="already-ended"),
        pytest.param(record(pending_message_id="m9"), 1, Claim.SKIPPED, id="another-message"),
        pytest.param(record(running_message_id="m1"), 1, Claim.SKIPPED, id="duplicate-delivery"),
        pytest.param(record(running_message_id="m1"), 2, Claim.INTERRUPTED, id="redelivered-after-its-worker-died"),
    ],
)
def test_anything_but_the_pending_message_claims_nothing(rec: TaskRecord, receive_count: int, expected: Claim) -> None:
    decided = claim(rec, "m1", receive_count=receive_count, now=100, lease_seconds=60, max_history=H)

    assert decided.result is expected
    if expected is Claim.INTERRUPTED:
        assert decided.record is not None
        assert decided.record.state is S.TASK_STATE_FAILED
        assert status_text(decided.record) == INTERRUPTED_TEXT
        assert states(decided.events) == ["TASK_STATE_FAILED"]
    else:
        assert decided.record is None


# ---------------------------------------------------------------------------------------- events


def test_the_runs_first_artifact_is_preceded_by_working() -> None:
    step = executor_event(record().task, chunk("x"), first=True, max_history=H)

    assert step is not None
    assert states(step.events) == ["TASK_STATE_WORKING", "artifact"]
    assert step.task.status.state is S.TASK_STATE_WORKING
    assert not step.snapshot
    # and once it works, an artifact is just that
    later = executor_event(step.task, chunk("y", append=True), first=False, max_history=H)
    assert later is not None
    assert states(later.events) == ["artifact"]
    assert [p.text for p in later.task.artifacts[0].parts] == ["xy"]


def test_the_executors_own_working_is_the_only_one() -> None:
    step = executor_event(record().task, status(S.TASK_STATE_WORKING), first=True, max_history=H)

    assert step is not None
    assert states(step.events) == ["TASK_STATE_WORKING"]


def test_a_message_as_the_first_answer_is_a_message_only_reply() -> None:
    step = executor_event(
        record().task, StreamResponse(message=message("hello", Role.ROLE_AGENT)), first=True, max_history=H
    )

    assert step is not None
    assert (step.replied, step.snapshot, step.settles) == (True, True, True)
    assert states(step.events) == ["message", "TASK_STATE_COMPLETED"]
    assert step.task.status.message is not None
    assert step.task.status.message.task_id == ""
    assert step.task.history == record().task.history  # the reply is the status, not history


def test_a_task_event_only_merges_metadata() -> None:
    current = record().task
    assert executor_event(current, StreamResponse(task=current), first=True, max_history=H) is None
    tagged = current.model_copy(update={"metadata": {"agent": "x"}})
    step = executor_event(current, StreamResponse(task=tagged), first=True, max_history=H)
    assert step is not None
    assert (step.task.metadata, step.events, step.snapshot) == ({"agent": "x"}, (), True)
    with pytest.raises(InvalidAgentResponseError):
        executor_event(current, StreamResponse(task=current.model_copy(update={"id": "t2"})), first=True, max_history=H)


def test_nothing_follows_a_final_state() -> None:
    with pytest.raises(InvalidAgentResponseError):
        executor_event(record(S.TASK_STATE_COMPLETED).task, chunk("late"), first=False, max_history=H)


def test_steps_commit_only_while_the_run_owns_the_task() -> None:
    running = record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=99)
    step = executor_event(running.task, status(S.TASK_STATE_COMPLETED), first=False, max_history=H)
    assert step is not None

    decided = append_steps(running, [step], message_id="m1", base_seq=2)

    assert decided.record is not None
    assert (decided.record.running_message_id, decided.record.lease_until) == ("", 0)
    assert decided.record.state is S.TASK_STATE_COMPLETED
    for lost in (
        replace(running, running_message_id=""),  # someone else ended it
        replace(running, last_seq=5),  # someone else logged after the run's view
    ):
        with pytest.raises(RunLost):
            append_steps(lost, [step], message_id="m1", base_seq=2)


def test_an_interruption_keeps_a_cancel_mark_for_settle_to_honour() -> None:
    marked = record(S.TASK_STATE_WORKING, running_message_id="m1", cancel_requested=True)
    step = executor_event(marked.task, status(S.TASK_STATE_INPUT_REQUIRED, "name?"), first=False, max_history=H)
    assert step is not None

    after = append_steps(marked, [step], message_id="m1", base_seq=2).record
    assert after is not None
    assert (after.running_message_id, after.cancel_requested) == ("", True)

    ended = settle(after, message_id="m1", end=RunEnd.RETURNED, max_history=H).record
    assert ended is not None
    assert ended.state is S.TASK_STATE_CANCELED
    assert status_text(ended) == CANCELED_TEXT


# ---------------------------------------------------------------------------------------- settle


@pytest.mark.parametrize(
    ("end", "task", "state", "text"),
    [
        pytest.param(RunEnd.FAILED, {}, S.TASK_STATE_FAILED, "The agent failed", id="raised"),
        pytest.param(RunEnd.INVALID, {}, S.TASK_STATE_FAILED, "invalid response", id="invalid-event"),
        pytest.param(RunEnd.OUT_OF_TIME, {}, S.TASK_STATE_FAILED, OUT_OF_TIME_TEXT, id="out-of-time"),
        pytest.param(RunEnd.CANCELED, {}, S.TASK_STATE_CANCELED, None, id="canceled"),
        pytest.param(RunEnd.RETURNED, {}, S.TASK_STATE_FAILED, INCOMPLETE_TEXT, id="returned-with-nothing"),
        pytest.param(
            RunEnd.RETURNED,
            {"artifacts": [Artifact(artifact_id="a", parts=[Part(text="x")])]},
            S.TASK_STATE_COMPLETED,
            None,
            id="returned-with-artifacts",
        ),
        pytest.param(
            RunEnd.RETURNED,
            {"history": [message("hi", message_id="m1"), message("bye", Role.ROLE_AGENT)]},
            S.TASK_STATE_COMPLETED,
            "bye",
            id="returned-after-a-message",
        ),
    ],
)
def test_a_run_that_did_not_settle_the_task_is_settled_by_how_it_ended(
    end: RunEnd, task: dict[str, Any], state: TaskState, text: str | None
) -> None:
    running = record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=99, task=task)

    decided = settle(running, message_id="m1", end=end, max_history=H)

    assert decided.record is not None
    assert decided.record.state is state
    assert (decided.record.running_message_id, decided.record.lease_until) == ("", 0)
    if text is None:
        assert decided.record.task.status.message is None
    else:
        assert text in status_text(decided.record)


def test_settle_leaves_a_finished_task_and_another_runs_task_alone() -> None:
    done = record(S.TASK_STATE_COMPLETED)
    assert settle(done, message_id="m1", end=RunEnd.FAILED, max_history=H).record is None
    leftovers = replace(done, running_message_id="m1", cancel_requested=True, lease_until=5)
    cleared = settle(leftovers, message_id="m1", end=RunEnd.FAILED, max_history=H).record
    assert cleared is not None
    assert (cleared.state, cleared.running_message_id, cleared.cancel_requested, cleared.lease_until) == (
        S.TASK_STATE_COMPLETED,
        "",
        False,
        0,
    )
    newer_run = record(S.TASK_STATE_WORKING, running_message_id="m2")
    assert settle(newer_run, message_id="m1", end=RunEnd.FAILED, max_history=H).record is None


# ---------------------------------------------------------------------------------------- recovery


def test_a_lease_is_renewed_only_by_the_run_holding_it() -> None:
    running = record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=100)
    renewed = renew_lease(running, message_id="m1", now=90, lease_seconds=60)
    assert (renewed.result, renewed.record.lease_until if renewed.record else None) == (True, 150)
    assert renew_lease(running, message_id="m2", now=90, lease_seconds=60) == renew_lease(
        replace(running, running_message_id=""), message_id="m2", now=90, lease_seconds=60
    )


@pytest.mark.parametrize(
    ("rec", "swept"),
    [
        pytest.param(record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=99), True, id="lapsed"),
        pytest.param(record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=101), False, id="alive"),
        pytest.param(record(S.TASK_STATE_WORKING, lease_until=99), False, id="not-running"),
        pytest.param(record(S.TASK_STATE_INPUT_REQUIRED, running_message_id="m1", lease_until=0), False, id="no-lease"),
    ],
)
def test_the_sweeper_fails_only_runs_whose_lease_lapsed(rec: TaskRecord, swept: bool) -> None:
    decided = expire_lease(rec, now=100, max_history=H)

    assert decided.result is swept
    if swept:
        assert decided.record is not None
        assert decided.record.state is S.TASK_STATE_FAILED
        assert status_text(decided.record) == LEASE_LOST_TEXT
        assert (decided.record.running_message_id, decided.record.lease_until) == ("", 0)


def test_a_dead_lettered_item_fails_the_task_only_while_its_message_is_due() -> None:
    assert dead_letter(record(pending_message_id="m1"), message_id="m1", max_history=H).result is True
    assert dead_letter(record(running_message_id="m1"), message_id="m1", max_history=H).result is True
    failed = dead_letter(record(running_message_id="m1"), message_id="m1", max_history=H).record
    assert failed is not None
    assert status_text(failed) == DEAD_LETTER_TEXT
    assert dead_letter(record(pending_message_id="m2"), message_id="m1", max_history=H).record is None
    assert (
        dead_letter(record(S.TASK_STATE_CANCELED, pending_message_id="m1"), message_id="m1", max_history=H).record
        is None
    )


# ---------------------------------------------------------------------------------------- the API's


def test_cancel_ends_an_idle_task_marks_a_running_one_and_refuses_a_finished_one() -> None:
    idle = request_cancel(record(pending_message_id="m1"), max_history=H).record
    assert idle is not None
    assert (idle.state, idle.pending_message_id) == (S.TASK_STATE_CANCELED, "")
    marked = request_cancel(record(S.TASK_STATE_WORKING, running_message_id="m1"), max_history=H).record
    assert marked is not None
    assert (marked.state, marked.cancel_requested) == (S.TASK_STATE_WORKING, True)
    assert request_cancel(marked, max_history=H).record is None  # marked once
    with pytest.raises(TaskNotCancelableError):
        request_cancel(record(S.TASK_STATE_COMPLETED), max_history=H)


def test_a_continuation_is_a_snapshot_with_the_question_before_the_answer() -> None:
    asked = record(
        S.TASK_STATE_INPUT_REQUIRED,
        task={"status": TaskStatus(state=S.TASK_STATE_INPUT_REQUIRED, message=message("name?", Role.ROLE_AGENT))},
    )

    key = SendKey.message("m2", "f")
    decided = continue_with(asked, message("Ann", message_id="m2"), max_history=H, key=key)

    assert decided.result is True
    assert decided.snapshot
    assert decided.key == key
    assert decided.record is not None
    assert [m.parts[0].text for m in decided.record.task.history] == ["hi", "name?", "Ann"]
    assert decided.record.pending_message_id == "m2"
    # Busy with it: a message with an id of its history may be a re-send (the caller asks the key)
    assert continue_with(decided.record, message("Ann", message_id="m2"), max_history=H, key=key) == Transition(False)
    # and without a key, or with an id the task has never seen, it is the task's error
    for resent, with_key in ((message("Ann", message_id="m2"), None), (message("again", message_id="m3"), key)):
        with pytest.raises(UnsupportedOperationError):
            continue_with(replace(decided.record, running_message_id="m2"), resent, max_history=H, key=with_key)


def test_a_task_waiting_again_takes_a_message_whose_id_its_history_has() -> None:
    # Given a task that asked again after a message m2 (a client reusing the id for its next answer)
    asked = record(S.TASK_STATE_INPUT_REQUIRED, task={"history": [message("hi"), message("Ann", message_id="m2")]})

    decided = continue_with(asked, message("Bob", message_id="m2"), max_history=H, key=SendKey.message("m2", "g"))

    # Then the rule accepts it: whether it is a re-send is the send key's to say, as it is written
    assert decided.result is True
    assert decided.record is not None
    assert decided.record.pending_message_id == "m2"


# ------------------------------------------------------------------------------ durable executions


def test_a_task_waiting_for_input_records_the_callback_its_answer_resumes() -> None:
    decided = await_input(record(S.TASK_STATE_INPUT_REQUIRED), callback_id="cb")
    assert decided.result is Await.WAIT
    assert decided.record is not None
    assert decided.record.waiting_callback == "cb"
    # recorded already (a replayed step): nothing to write
    assert await_input(decided.record, callback_id="cb") == Transition(Await.WAIT)
    # an answer accepted before the callback was recorded is delivered with it
    answered = record(S.TASK_STATE_INPUT_REQUIRED, pending_message_id="m2")
    assert await_input(answered, callback_id="cb").result is Await.WAIT
    assert await_input(record(S.TASK_STATE_CANCELED), callback_id="cb") == Transition(Await.ENDED)
    lost = record(S.TASK_STATE_WORKING, running_message_id="m1")
    assert await_input(lost, callback_id="cb") == Transition(Await.NOT_WAITING)


def test_a_claim_clears_the_callback() -> None:
    waiting = record(S.TASK_STATE_INPUT_REQUIRED, pending_message_id="m2", waiting_callback="cb")
    decided = claim(waiting, "m2", receive_count=1, now=0, lease_seconds=60, max_history=H)
    assert decided.record is not None
    assert decided.record.waiting_callback == ""


def test_a_wait_that_ran_out_fails_the_task_unless_an_answer_came() -> None:
    waiting = record(S.TASK_STATE_INPUT_REQUIRED, waiting_callback="cb")
    decided = end_wait(waiting, callback_id="cb", text="too late", max_history=H)
    assert decided.result is True
    assert decided.record is not None
    assert decided.record.state is S.TASK_STATE_FAILED
    answered = replace(waiting, pending_message_id="m2")
    assert end_wait(answered, callback_id="cb", text="too late", max_history=H) == Transition(False)
    assert end_wait(waiting, callback_id="other", text="too late", max_history=H) == Transition(False)


def test_a_delegations_wait_names_its_token_digest_which_outlives_the_run_until_an_input_wait() -> None:
    running = record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=10)
    held = hold_for_sleep(running, message_id="m1", now=100, lease_seconds=400, callback_id="cb", token="digest")
    assert held.result is True
    assert held.record is not None
    assert (held.record.waiting_callback, held.record.waiting_token, held.record.lease_until) == ("cb", "digest", 500)
    # a plain sleep names no token
    slept = hold_for_sleep(held.record, message_id="m1", now=100, lease_seconds=60, callback_id="cb2")
    assert slept.record is not None
    assert slept.record.waiting_token == ""
    # the run's end keeps the digest, not the callback
    settled = settle(held.record, message_id="m1", end=RunEnd.RETURNED, max_history=H)
    assert settled.record is not None
    assert (settled.record.waiting_callback, settled.record.waiting_token) == ("", "digest")
    # a wait for input drops it
    asking = replace(held.record, task=record(S.TASK_STATE_INPUT_REQUIRED).task, running_message_id="")
    waited = await_input(asking, callback_id="input-cb")
    assert waited.record is not None
    assert waited.record.waiting_token == ""
    # a run that no longer owns the task holds nothing
    lost = hold_for_sleep(running, message_id="m9", now=100, lease_seconds=60, callback_id="cb", token="d")
    assert lost.result is False


def test_a_push_wakes_a_delegations_wait_once_per_state_and_its_next_waits_remember_it() -> None:
    waiting = record(S.TASK_STATE_WORKING, running_message_id="m1", waiting_callback="cb", waiting_token="digest")
    woken = wake_by_push(waiting, token_digest="digest", state="TASK_STATE_COMPLETED")
    assert woken.result == "cb"
    assert woken.record is not None
    assert woken.record.push_woken == "TASK_STATE_COMPLETED"
    assert wake_by_push(woken.record, token_digest="digest", state="TASK_STATE_COMPLETED") == Transition("")
    assert wake_by_push(woken.record, token_digest="other", state="TASK_STATE_FAILED") == Transition("")
    assert wake_by_push(replace(woken.record, waiting_callback=""), token_digest="digest", state="x") == Transition("")
    again = wake_by_push(woken.record, token_digest="digest", state="unreadable")
    assert again.record is not None
    assert again.record.push_woken == "TASK_STATE_COMPLETED,unreadable"
    # the delegation's next wait (the same token) remembers; another delegation or a sleep forgets
    kwargs: dict[str, Any] = {"message_id": "m1", "now": 0, "lease_seconds": 60, "callback_id": "cb2"}
    next_wait = hold_for_sleep(again.record, token="digest", **kwargs).record
    assert next_wait is not None
    assert next_wait.push_woken == "TASK_STATE_COMPLETED,unreadable"
    for other in (hold_for_sleep(again.record, token="new", **kwargs), hold_for_sleep(again.record, **kwargs)):
        assert other.record is not None
        assert other.record.push_woken == ""


def test_a_run_that_ends_clears_the_callback_its_sleep_named() -> None:
    # (a durable run's sleep names a callback on the head; once the run is over it must not be
    # mistaken for the callback an answer resumes)
    running = record(S.TASK_STATE_WORKING, running_message_id="m1", lease_until=99, waiting_callback="sleep-cb")
    settled = settle(running, message_id="m1", end=RunEnd.RETURNED, max_history=H)
    assert settled.record is not None
    assert settled.record.waiting_callback == ""
