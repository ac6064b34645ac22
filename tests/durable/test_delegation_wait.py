"""The durable delegation's wait (``a2a_serverless.durable.delegation_wait``), as the pure functions
it is: given where the wait stands and what a step recorded (the send, a read of the remote task,
how a durable wait ended), what comes next. No event loop, no remote, no durable runner: the shell
that reads and acts is covered on the local runner by ``tests/delegation/test_durable_delegation.py``."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest

from a2a_serverless.delegation import Delegation, Outcome
from a2a_serverless.durable.delegation_wait import (
    POLL_SECONDS,
    PUSH_RECHECK_SECONDS,
    READ_FAILURES,
    Ended,
    Wait,
    begin,
    looks_first,
    opened,
    read,
    woken,
)
from a2a_serverless.json_types import Json
from a2a_serverless.models import Message, Part, Role, Task, TaskState, TaskStatus

S = TaskState
AT = 1_000.0
"""When the send step recorded its answer (``time.time()``)."""


def remote_task(state: TaskState = S.TASK_STATE_WORKING, text: str = "") -> Task:
    said = Message(message_id="r1", role=Role.ROLE_AGENT, parts=[Part(text=text)]) if text else None
    return Task(id="rt1", context_id="rc1", status=TaskStatus(state=state, message=said))


def sent_task(*, token: str = "", at: float = AT) -> Json:
    return {"task": remote_task(S.TASK_STATE_SUBMITTED).to_wire(), "name": "far", "token": token, "ref": "", "at": at}


def waiting(*, token: str = "", limit: float | None = None) -> Wait:
    begun = begin(sent_task(token=token), remote="far", limit=limit)
    assert isinstance(begun, Wait)
    return begun


def found(task: Task, at: float) -> Json:
    """What a read step records when it found ``task``."""
    return {"task": task.to_wire(), "at": at}


def failed(at: float) -> Json:
    return {"error": "connection refused", "at": at}


# ---------------------------------------------------------------------------------------- begin


def test_a_send_that_failed_ends_the_delegation_unreachable_with_nothing_to_cancel() -> None:
    sent: Json = {"error": "the remote's card could not be read", "name": "far", "ref": "", "at": AT}

    begun = begin(sent, remote="far", limit=None)

    assert begun == Ended(Delegation("far", Outcome.UNREACHABLE, "the remote's card could not be read"), cancel=False)


def test_a_message_only_reply_ends_the_delegation_replied_with_the_reply() -> None:
    reply = Message(message_id="m9", role=Role.ROLE_AGENT, parts=[Part(text="done already")])

    begun = begin({"message": reply.to_wire(), "name": "far", "at": AT}, remote="far", limit=None)

    assert isinstance(begun, Ended)
    assert (begun.delegation.outcome, begun.delegation.detail) == (Outcome.REPLIED, "'far' replied.")
    assert begun.delegation.reply == reply
    assert begun.cancel is False


@pytest.mark.parametrize(
    ("token", "limit", "interval", "end"),
    [
        pytest.param("secret", None, PUSH_RECHECK_SECONDS, None, id="pushes-no-limit"),
        pytest.param("", None, POLL_SECONDS[0], None, id="polls-no-limit"),
        pytest.param("", 30.0, POLL_SECONDS[0], AT + 30.0, id="polls-with-a-limit"),
    ],
)
def test_a_task_starts_the_wait_at_the_sends_time(token: str, limit: float | None, interval: float, end: Any) -> None:
    wait = waiting(token=token, limit=limit)

    assert (wait.pushes, wait.interval, wait.end, wait.now) == (bool(token), interval, end, AT)
    assert (wait.reads, wait.failures, wait.rang) == (0, 0, False)
    assert wait.task == remote_task(S.TASK_STATE_SUBMITTED)
    assert "secret" not in repr(wait)  # the token itself is not kept
    assert looks_first(wait) is False  # the first wait opens before the first read


# --------------------------------------------------------------------------------------- opened


def test_each_wait_is_counted_and_lasts_the_interval() -> None:
    wait, seconds = opened(waiting(token="secret"))

    assert (wait.reads, seconds) == (1, PUSH_RECHECK_SECONDS)
    wait, seconds = opened(wait)
    assert (wait.reads, seconds) == (2, PUSH_RECHECK_SECONDS)


def test_the_limit_cuts_a_wait_short_but_never_under_a_second() -> None:
    wait = waiting(token="secret", limit=30.0)

    assert opened(wait)[1] == 30.0
    assert opened(dataclasses.replace(wait, now=AT + 29.5))[1] == 1.0
    assert opened(dataclasses.replace(wait, now=AT + 40.0))[1] == 1.0


def test_polls_back_off_from_the_first_interval_to_the_longest() -> None:
    # Given a remote without pushes and no limit, when every wait runs out, then the waits double
    # from the first interval and stay at the longest
    wait, lengths = waiting(), []
    for _ in range(8):
        wait, seconds = opened(wait)
        lengths.append(seconds)
        wait, ended = read(wait, found(remote_task(), at=wait.now))
        assert ended is None
        after = woken(wait, "timeout", seconds)
        assert after is not None
        wait = after

    assert lengths == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert POLL_SECONDS == (2.0, 60.0)
    assert wait.now == AT + sum(lengths)  # each wait that ran out moved the clock on by its length


# ----------------------------------------------------------------------------------------- read


def test_a_read_of_a_working_task_ends_nothing_and_keeps_what_it_found() -> None:
    wait = dataclasses.replace(waiting(), failures=2)
    progress = remote_task(S.TASK_STATE_WORKING, "halfway")

    after, ended = read(wait, found(progress, at=AT + 5))

    assert ended is None
    assert (after.task, after.now, after.failures) == (progress, AT + 5, 0)
    assert wait.task == remote_task(S.TASK_STATE_SUBMITTED)  # the state read is never changed


@pytest.mark.parametrize(
    ("state", "outcome", "words"),
    [
        (S.TASK_STATE_COMPLETED, Outcome.COMPLETED, "completed its task"),
        (S.TASK_STATE_FAILED, Outcome.FAILED, "failed"),
        (S.TASK_STATE_REJECTED, Outcome.REJECTED, "rejected the task"),
        (S.TASK_STATE_CANCELED, Outcome.CANCELED, "canceled its task"),
        (S.TASK_STATE_INPUT_REQUIRED, Outcome.INPUT_REQUIRED, "needs more input"),
        (S.TASK_STATE_AUTH_REQUIRED, Outcome.AUTH_REQUIRED, "needs authorization"),
    ],
)
def test_a_task_that_ended_ends_the_delegation_by_its_state_with_nothing_to_cancel(
    state: TaskState, outcome: Outcome, words: str
) -> None:
    task = remote_task(state, "all there is")

    _, ended = read(waiting(limit=1.0), found(task, at=AT + 5))  # (past the limit too: its end wins)

    assert ended is not None
    assert (ended.delegation.outcome, ended.cancel) == (outcome, False)
    assert ended.delegation.detail == f"The remote agent 'far' {words}: all there is"
    assert ended.delegation.task == task


def test_a_read_past_the_limit_times_out_and_cancels_the_remote_task() -> None:
    wait = waiting(limit=3.0)

    before, ended = read(wait, found(remote_task(), at=AT + 2.9))
    assert ended is None
    _, ended = read(before, found(remote_task(S.TASK_STATE_WORKING, "still going"), at=AT + 3.0))

    assert ended is not None
    assert (ended.delegation.outcome, ended.cancel) == (Outcome.TIMED_OUT, True)
    assert ended.delegation.detail == "The remote agent 'far' did not finish within the time it was given (3 s)."
    assert ended.delegation.task == remote_task(S.TASK_STATE_WORKING, "still going")


def test_reads_that_fail_in_a_row_end_the_delegation_unreachable_and_cancel_the_remote_task() -> None:
    wait = waiting()
    for n in range(1, READ_FAILURES):
        wait, ended = read(wait, failed(at=AT + n))
        assert ended is None
        assert (wait.failures, wait.now) == (n, AT + n)
        assert wait.task == remote_task(S.TASK_STATE_SUBMITTED)  # a failed read keeps what was known

    _, ended = read(wait, failed(at=AT + READ_FAILURES))

    assert ended is not None
    assert (ended.delegation.outcome, ended.cancel) == (Outcome.UNREACHABLE, True)
    assert ended.delegation.detail == "The remote agent 'far' could not be read 3 times in a row."
    assert ended.delegation.task == remote_task(S.TASK_STATE_SUBMITTED)


def test_a_read_that_succeeds_forgives_the_failures_before_it() -> None:
    wait = waiting()
    for n in range(READ_FAILURES - 1):
        wait, _ = read(wait, failed(at=AT + n))
    wait, _ = read(wait, found(remote_task(), at=AT + 10))

    for n in range(READ_FAILURES - 1):
        wait, ended = read(wait, failed(at=AT + 20 + n))
        assert ended is None


# --------------------------------------------------------------------------------------- woken


def test_a_push_has_the_task_read_before_the_next_wait_and_moves_no_clock() -> None:
    wait, seconds = opened(waiting(token="secret"))

    rang = woken(wait, "push", seconds)

    assert rang is not None
    assert (rang.rang, rang.now, rang.interval) == (True, AT, PUSH_RECHECK_SECONDS)
    assert looks_first(rang) is True
    # and a wait that then runs out does not
    quiet = woken(rang, "timeout", seconds)
    assert quiet is not None
    assert (quiet.rang, looks_first(quiet)) == (False, False)


def test_with_pushes_a_wait_that_runs_out_keeps_its_interval() -> None:
    wait, seconds = opened(waiting(token="secret"))

    after = woken(wait, "timeout", seconds)

    assert after is not None
    assert (after.now, after.interval) == (AT + PUSH_RECHECK_SECONDS, PUSH_RECHECK_SECONDS)


@pytest.mark.parametrize("token", ["secret", ""])
def test_cancel_task_ends_the_wait(token: str) -> None:
    wait, seconds = opened(waiting(token=token))

    assert woken(wait, "canceled", seconds) is None


def test_time_up_has_the_task_read_before_another_wait() -> None:
    wait, seconds = opened(waiting(token="secret", limit=5.0))
    assert seconds == 5.0  # (the limit, not the 300 s recheck)

    after = woken(wait, "timeout", seconds)

    assert after is not None
    assert (after.past_end, looks_first(after)) == (True, True)


@pytest.mark.parametrize("how", ["push", "timeout", "canceled"])
def test_no_rule_changes_the_state_it_is_given(how: Literal["push", "timeout", "canceled"]) -> None:
    wait = waiting(limit=10.0)
    copy = dataclasses.replace(wait)

    opened(wait)
    read(wait, found(remote_task(S.TASK_STATE_COMPLETED), at=AT + 1))
    read(wait, failed(at=AT + 1))
    woken(wait, how, 2.0)

    assert wait == copy
    with pytest.raises(dataclasses.FrozenInstanceError):
        wait.now = 0.0  # type: ignore[misc]
