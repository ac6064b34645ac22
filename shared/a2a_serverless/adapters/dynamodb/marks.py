"""The one write that changes a task's head without reading the task first: the cancel mark.

A commit puts the whole head conditioned on the version it read, after reading the task; while a
run streams, its group commits move the version faster than that read-then-write completes, so the
mark is an UpdateItem of two attributes instead, conditioned on the run it is for."""

from __future__ import annotations

from datetime import datetime

from ...models import format_timestamp
from ...ports.store import Scope
from .codec import META_SK, Keys
from .table import Table

__all__ = ["mark_cancel"]


def mark_cancel(table: Table, scope: Scope, task_id: str, message_id: str, now: datetime) -> bool:
    """Set the head's cancel mark and move its version on (the run's next commit then fails its
    condition, re-reads and sees the mark), if the task still runs ``message_id`` unmarked. False
    when it does not (any more): the caller decides again from a fresh read."""
    return table.update_if(
        {"pk": {"S": Keys(scope).task_pk(task_id)}, "sk": {"S": META_SK}},
        "SET cancelRequested = :yes, #version = #version + :one, updatedAt = :now",
        "attribute_exists(pk) AND runningMessageId = :run AND cancelRequested = :no",
        {
            ":yes": {"BOOL": True},
            ":no": {"BOOL": False},
            ":one": {"N": "1"},
            ":run": {"S": message_id},
            ":now": {"S": format_timestamp(now)},
        },
        names={"#version": "version"},
    )
