"""Emulates an EventBridge schedule (``Type: Schedule`` / ``ScheduleV2`` events): the function is
invoked at the template's ``rate(...)``, with the event EventBridge sends and a context carrying
the function's timeout. As on AWS, a failed invocation is logged and the next one comes at the
next tick; one invocation at a time (a tick that finds the previous one still running is skipped).
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from a2a_serverless.json_types import Json, JsonValue

from ._lambda import ACCOUNT_ID, LambdaContext
from ._loggers import kit_logger
from ._template import ScheduleEventSource
from .pollers import Handler

__all__ = ["SchedulePoller", "scheduled_event"]

_log = kit_logger(__name__)


def scheduled_event(rule_name: str, *, region: str, now: datetime | None = None) -> Json:
    """The event an EventBridge rule's schedule sends its target."""
    at = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": at,
        "region": region,
        "resources": [f"arn:aws:events:{region}:{ACCOUNT_ID}:rule/{rule_name}"],
        "detail": {},
    }


@dataclass
class SchedulePoller:
    source: ScheduleEventSource
    handler: Handler
    function_name: str
    region: str = "us-east-1"
    every_seconds: float | None = None
    """Overrides the template's rate (tests)."""

    def run(self, stop: threading.Event) -> None:
        interval = self.every_seconds or self.source.every_seconds
        next_tick = time.monotonic() + interval
        while not stop.wait(max(0.0, next_tick - time.monotonic())):
            self.invoke_once()
            next_tick = max(next_tick + interval, time.monotonic())

    def wake(self) -> None:
        """Nothing to wake: its waits end on ``stop``."""

    def invoke_once(self) -> JsonValue:
        """One scheduled invocation; returns what the handler returned (None if it raised)."""
        context = LambdaContext.start(
            self.function_name,
            region=self.region,
            memory_mb=self.source.memory_mb,
            timeout_seconds=self.source.timeout_seconds,
        )
        try:
            return self.handler(scheduled_event(self.source.rule_name, region=self.region), context)
        except Exception:
            _log.exception("%s failed on its scheduled invocation", self.function_name)
            return None
