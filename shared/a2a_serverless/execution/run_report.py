"""What one run of a work item did: the worker returns it, and the Lambda entry point turns it into
the operators' metrics (``docs/tracing.md``, "Metrics"). The worker knows the facts; the edge owns
how they are published."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..blobs import PartRef, map_parts
from ..models import Part, TaskState
from ..ports import TaskRecord

__all__ = ["RUN_LOST", "RunReport", "Written", "references", "report_run"]

RUN_LOST = "lost"
"""The outcome of a run whose task another writer ended (the sweeper, a cancel that settled it)."""


@dataclass(slots=True)
class Written:
    """What a run's commits stored (its :class:`~.run_log.RunLog` counts them): what drives its
    cost, with the head each commit rewrites."""

    commits: int = 0
    events: int = 0
    bytes: int = 0
    """The events' JSON (what the log items hold, before compression)."""
    offloaded: int = 0
    """The events' parts moved to the blob bucket (:mod:`a2a_serverless.blobs`)."""

    def add(self, events: int, size: int) -> None:
        self.commits += 1
        self.events += events
        self.bytes += size


@dataclass(frozen=True, slots=True)
class RunReport:
    outcome: str
    """How the run ended: a :class:`~a2a_serverless.transitions.RunEnd` value, or :data:`RUN_LOST`."""
    seconds: float
    """From the work item's start (its claim) to the run's end (its settle)."""
    state: TaskState | None = None
    """The task's state as the run left it, when terminal or interrupted (None: the run lost the
    task, or could not settle it)."""
    task_seconds: float | None = None
    """From the task's creation to the run's end, when ``state`` is set: the task's latency."""
    written: Written = field(default_factory=Written)


def references(obj: object) -> int:
    """How many parts of ``obj`` (as for :func:`~a2a_serverless.blobs.map_parts`) are stored ones."""
    count = 0

    def look(parts: list[Part]) -> list[Part]:
        nonlocal count
        count += sum(PartRef.of(part) is not None for part in parts)
        return parts

    map_parts(obj, look)
    return count


def report_run(outcome: str, started: float, record: TaskRecord | None, written: Written) -> RunReport:
    """The report of a run that began at ``started`` (``time.monotonic()``), left ``record`` and
    stored ``written``."""
    seconds = time.monotonic() - started
    if record is None or not (record.state.is_terminal or record.state.is_interrupted):
        return RunReport(outcome, seconds, written=written)
    created = record.created_at
    task_seconds = (datetime.now(UTC) - created).total_seconds() if created is not None else None
    return RunReport(outcome, seconds, record.state, task_seconds, written)
