"""Applying a rule of :mod:`.transitions`: the one optimistic read-modify-write loop.

A rule is a pure function of the record as stored; it returns a :class:`Transition`: the record to
commit with its events (or nothing to write) and a result for the caller. :func:`mutate` reads the
task, applies the rule and commits what it decided, conditioned on the version it read; on a
version conflict it re-reads and re-applies the rule, and it returns the result of the attempt
that committed, so nothing a losing attempt computed can leak out (style: "a value computed inside
a closure that may be retried must come back as the closure's result").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from .errors import TaskNotFoundError
from .models import StreamResponse
from .ports import Scope, SendKey, TaskRecord, TaskStore, VersionConflict

__all__ = ["Committed", "Transition", "mutate", "rebase"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Transition(Generic[R]):
    """What a rule decided: ``record`` to commit (None: nothing to write) with ``events`` appended
    after it, ``snapshot`` when ``record.task`` is not the fold of the events, ``key`` for a send key
    the same commit writes, and ``result``."""

    result: R
    record: TaskRecord | None = None
    events: tuple[StreamResponse, ...] = ()
    snapshot: bool = False
    key: SendKey | None = None


@dataclass(frozen=True, slots=True)
class Committed(Generic[R]):
    """What :func:`mutate` did: the record as stored after the commit (as read when nothing was
    written) and the result of the attempt that decided."""

    record: TaskRecord
    result: R
    wrote: bool


def mutate(
    store: TaskStore,
    scope: Scope,
    task_id: str,
    rule: Callable[[TaskRecord], Transition[R]],
    *,
    attempts: int = 20,
) -> Committed[R]:
    """Read the task, apply ``rule`` and commit what it decided, retrying on ``VersionConflict``.

    ``rule`` must be a pure function of the record: it can run several times. It may raise an
    ``A2AError`` to abort. Raises ``TaskNotFoundError`` when the task does not exist.
    """
    for _ in range(attempts):
        record = store.get_task(scope, task_id)
        if record is None:
            raise TaskNotFoundError(metadata={"taskId": task_id})
        decided = rule(record)
        if decided.record is None:
            return Committed(record, decided.result, wrote=False)
        try:
            stored = store.commit(
                rebase(decided.record, record),
                decided.events,
                snapshot=decided.snapshot,
                key=decided.key,
            )
        except VersionConflict:
            continue
        return Committed(stored, decided.result, wrote=True)
    raise VersionConflict(f"task {task_id} kept changing; gave up after {attempts} attempts")


def rebase(new: TaskRecord, read: TaskRecord) -> TaskRecord:
    """``new`` as the successor of ``read``: what the store's conditions check comes from the read."""
    return replace(new, version=read.version, last_seq=read.last_seq, checkpoint=read.checkpoint)
