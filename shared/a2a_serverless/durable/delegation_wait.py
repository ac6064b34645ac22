"""The rules of a durable delegation's wait (:mod:`.delegation`), written as
:mod:`a2a_serverless.transitions` writes a run's: a frozen :class:`Wait` (where the wait stands) and
pure functions from it and what was read to what comes next. The shell
(:func:`.delegation.delegate_durably`) only reads (the send, the remote task, how a durable wait
ended: each recorded by a step or a wait, so a replay reads the same), calls a rule, and acts on
its answer: it opens the next wait, relays the remote task, cancels it, or returns.

1. :func:`begin`: what the send step recorded. A failure or a message-only reply ends the
   delegation (:class:`Ended`); a task starts the wait.
2. :func:`looks_first`: after a push said the remote task ended (or once time is up), the task is
   read before another wait opens.
3. :func:`opened`: the next wait, numbered, and its length: with pushes a read every
   :data:`PUSH_RECHECK_SECONDS` still covers a lost push; without them the waits are polls, backing
   off from :data:`POLL_SECONDS`'s first value to its last; never past the limit, never under a
   second.
4. :func:`read`: the remote task as a read found it, or the read's failure. The delegation ends when
   the task did (its own state: nothing to cancel), at the limit (TIMED_OUT), or after
   :data:`READ_FAILURES` failed reads in a row (UNREACHABLE); at the last two the remote task still
   works, and the shell cancels it.
5. :func:`woken`: how the wait ended. A push is read at once; a wait that ran out moves the clock
   on by its length (at least: the next read says exactly) and, without pushes, doubles the next
   one; CancelTask ends the delegation (None: the shell cancels the remote task and stops).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from ..delegation._common import OF_STATE, Delegation, Outcome, detail
from ..delegation.remote import ENDED
from ..json_types import JsonValue
from ..models import Message, Task

__all__ = [
    "POLL_SECONDS",
    "PUSH_RECHECK_SECONDS",
    "READ_FAILURES",
    "Ended",
    "Wait",
    "begin",
    "looks_first",
    "opened",
    "read",
    "woken",
]

POLL_SECONDS = (2.0, 60.0)
"""The first and the longest durable wait between reads of a remote that sends no pushes."""
PUSH_RECHECK_SECONDS = 300.0
"""With pushes: the longest wait without one before the remote task is read anyway."""
READ_FAILURES = 3
"""Reads of the remote task that may fail in a row before the delegation gives up."""


@dataclass(frozen=True)
class Wait:
    """Where a delegation's wait stands between its steps."""

    remote: str
    """The remote agent's name (for what the delegation says when it ends)."""
    task: Task
    """The remote task as last read (as the send answered, before the first read)."""
    pushes: bool
    """The remote was given a push config: a verified push ends a wait early."""
    limit: float | None
    """The seconds the remote was given (None: no limit)."""
    end: float | None
    """When (``time.time()``) the limit is up: the send's time plus ``limit``."""
    now: float
    """The time of the last read (after a wait that ran out: at least its end)."""
    interval: float
    """The length of the next wait (the limit may cut it shorter)."""
    reads: int = 0
    """Waits opened so far: they and their reads are numbered by it."""
    failures: int = 0
    """Failed reads in a row."""
    rang: bool = False
    """The last wait was ended by a push."""

    @property
    def past_end(self) -> bool:
        return self.end is not None and self.now >= self.end


@dataclass(frozen=True)
class Ended:
    """How the delegation ended; ``cancel``: the remote task still works, and is asked to cancel."""

    delegation: Delegation
    cancel: bool = False


def begin(sent: Mapping[str, JsonValue], *, remote: str, limit: float | None) -> Wait | Ended:
    """What the send step recorded (``error``, or ``message``, or ``task`` with ``token``; and
    ``at``): the delegation's end, or its wait."""
    if "error" in sent:
        return Ended(Delegation(remote, Outcome.UNREACHABLE, str(sent["error"])))
    if "message" in sent:
        reply = Message.model_validate(sent["message"])
        return Ended(Delegation(remote, Outcome.REPLIED, f"{remote!r} replied.", reply=reply))
    pushes = bool(str(sent["token"]))
    now = float(str(sent["at"]))
    return Wait(
        remote=remote,
        task=Task.model_validate(sent["task"]),
        pushes=pushes,
        limit=limit,
        end=None if limit is None else now + limit,
        now=now,
        interval=PUSH_RECHECK_SECONDS if pushes else POLL_SECONDS[0],
    )


def looks_first(wait: Wait) -> bool:
    """Whether the remote task is read before the next wait opens: a push said it ended, or time is up."""
    return wait.rang or wait.past_end


def opened(wait: Wait) -> tuple[Wait, float]:
    """The wait with its next wait counted, and that wait's length in seconds."""
    seconds = wait.interval if wait.end is None else max(1.0, min(wait.interval, wait.end - wait.now))
    return replace(wait, reads=wait.reads + 1), seconds


def read(wait: Wait, checked: Mapping[str, JsonValue]) -> tuple[Wait, Ended | None]:
    """The wait after a read step recorded ``checked`` (``task`` or ``error``; and ``at``), and the
    delegation's end if it came."""
    now = float(str(checked["at"]))
    if "error" in checked:
        wait = replace(wait, now=now, failures=wait.failures + 1)
    else:
        wait = replace(wait, now=now, failures=0, task=Task.model_validate(checked["task"]))
    task, name = wait.task, wait.remote
    if task.status.state in ENDED:
        return wait, Ended(Delegation(name, OF_STATE[task.status.state], detail(name, task), task=task))
    if wait.past_end:
        return wait, Ended(Delegation.timed_out(name, f"{wait.limit:.0f} s", task), cancel=True)
    if wait.failures >= READ_FAILURES:
        text = f"The remote agent {name!r} could not be read {READ_FAILURES} times in a row."
        return wait, Ended(Delegation(name, Outcome.UNREACHABLE, text, task=task), cancel=True)
    return wait, None


def woken(wait: Wait, how: Literal["push", "timeout", "canceled"], seconds: float) -> Wait | None:
    """The wait after a wait of ``seconds`` ended ``how``; None when CancelTask ended it."""
    if how == "canceled":
        return None
    wait = replace(wait, rang=how == "push")
    if how == "timeout":
        interval = wait.interval if wait.pushes else min(wait.interval * 2, POLL_SECONDS[1])
        wait = replace(wait, now=wait.now + seconds, interval=interval)
    return wait
