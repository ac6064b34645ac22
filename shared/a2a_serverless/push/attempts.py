"""A record of every webhook delivery attempt, one JSON line each, for the local stack's console.

Off unless ``A2A_PUSH_ATTEMPT_LOG`` names a file (the local stack sets it; a deployed stack leaves it
empty, and its delivery function's logs and metrics say the same things). Each attempt appends one
line with a single ``write`` to a file opened with ``O_APPEND``: no lock, and the lines of several
processes (the local stack runs the delivery function in processes of its own) never interleave.

A line names ids, sequence numbers, the HTTP status or the short, fixed reason the sender gives
(exception class names, never a server's text), the latency and the outcome: never the webhook URL,
its query, the token or the credentials.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..json_types import Json

if TYPE_CHECKING:
    from ..ports import DeliveryItem
    from .sender import SendResult

__all__ = ["ATTEMPT_LOG_VARIABLE", "Attempt", "AttemptLog", "read_attempts"]

ATTEMPT_LOG_VARIABLE = "A2A_PUSH_ATTEMPT_LOG"
"""The setting :attr:`~a2a_serverless.config.Settings.push_attempt_log` as the environment has it."""

AttemptOutcome = Literal["delivered", "retrying", "dead-lettered"]
"""``dead-lettered``: the attempts are spent, or the failure was final (another 4xx, a refused
address); ``error`` says which."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Attempt:
    tenant: str
    owner: str
    task_id: str
    config_id: str
    seq: int
    attempt: int
    status: int | None
    error: str
    latency_ms: float
    outcome: AttemptOutcome
    time: str = ""

    @classmethod
    def of(
        cls, item: DeliveryItem, seq: int, attempt: int, max_attempts: int, result: SendResult, latency_ms: float
    ) -> Attempt:
        """The attempt to deliver event ``seq`` of ``item`` (attempt ``attempt`` of ``max_attempts``)
        that ended with ``result`` after ``latency_ms``."""
        outcome: AttemptOutcome = "delivered"
        if result.outcome == "retry" and attempt < max_attempts:
            outcome = "retrying"
        elif result.outcome != "delivered":
            outcome = "dead-lettered"
        return cls(
            tenant=item.tenant,
            owner=item.owner,
            task_id=item.task_id,
            config_id=item.config_id,
            seq=seq,
            attempt=attempt,
            status=result.status,
            # The sender's reasons are fixed phrases, status codes and exception class names.
            error="" if result.outcome == "delivered" else result.reason,
            latency_ms=latency_ms,
            outcome=outcome,
        )

    def to_line(self) -> bytes:
        data: Json = {
            "time": self.time or datetime.now(UTC).isoformat(timespec="milliseconds"),
            "tenant": self.tenant,
            "owner": self.owner,
            "taskId": self.task_id,
            "configId": self.config_id,
            "seq": self.seq,
            "attempt": self.attempt,
            "status": self.status,
            "error": self.error,
            "latencyMs": round(self.latency_ms, 1),
            "outcome": self.outcome,
        }
        return (json.dumps(data, separators=(",", ":")) + "\n").encode()


class AttemptLog:
    """Appends :class:`Attempt` lines to ``path``; a failure to write is logged, never raised (the
    record must not change what is delivered)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def record(self, attempt: Attempt) -> None:
        line = attempt.to_line()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as exc:
            _log.warning("cannot append to the push attempt log (%s)", type(exc).__name__)


def read_attempts(path: str | Path) -> Iterator[Json]:
    """The lines of the log, oldest first (a missing file has none; a torn line is skipped)."""
    try:
        with open(path, "rb") as lines:
            for raw in lines:
                try:
                    row = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    yield row
    except FileNotFoundError:
        return
