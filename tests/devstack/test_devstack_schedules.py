"""Scheduled functions on the local stack: invoked at the template's rate as EventBridge would."""

from __future__ import annotations

import threading
from typing import Any

from a2a_serverless_dev._template import ScheduleEventSource
from a2a_serverless_dev.schedule_pollers import SchedulePoller

SOURCE = ScheduleEventSource(
    function_id="SweeperFunction",
    handler="a2a_serverless.functions.sweeper:handler",
    rule_name="SweeperFunctionSweep",
    every_seconds=60.0,
    timeout_seconds=60,
    memory_mb=512,
)


class Calls:
    def __init__(self, *, raises_first: bool = False) -> None:
        self.events: list[tuple[dict[str, Any], Any]] = []
        self.raises_first = raises_first
        self.enough = threading.Event()

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        self.events.append((event, context))
        if len(self.events) >= 3:
            self.enough.set()
        if self.raises_first and len(self.events) == 1:
            raise RuntimeError("sweeper failed")
        return {"swept": 0}


def test_an_invocation_gets_eventbridges_scheduled_event_and_the_functions_timeout() -> None:
    calls = Calls()
    poller = SchedulePoller(source=SOURCE, handler=calls, function_name="a2a-local-SweeperFunction")

    assert poller.invoke_once() == {"swept": 0}

    ((event, context),) = calls.events
    assert (event["source"], event["detail-type"], event["detail"]) == ("aws.events", "Scheduled Event", {})
    assert event["resources"] == ["arn:aws:events:us-east-1:123456789012:rule/SweeperFunctionSweep"]
    assert context.function_name == "a2a-local-SweeperFunction"
    assert 0 < context.get_remaining_time_in_millis() <= 60_000


def test_the_schedule_keeps_ticking_after_a_failure_and_stops_when_told() -> None:
    # Given a poller ticking every 50 ms whose first invocation fails
    calls = Calls(raises_first=True)
    poller = SchedulePoller(source=SOURCE, handler=calls, function_name="f", every_seconds=0.05)
    stop = threading.Event()
    thread = threading.Thread(target=poller.run, args=(stop,), daemon=True)

    # When it runs for a few ticks and is told to stop
    thread.start()
    assert calls.enough.wait(10)
    stop.set()
    thread.join(10)

    # Then it went on after the failure, and stopped
    assert not thread.is_alive()
    assert len(calls.events) >= 3
