"""What carries a trace from one process to the next, and what it costs: the work item (SQS body,
durable input), the event-log item (the table's stream), the delivery item (the push queue)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from a2a_serverless import telemetry
from a2a_serverless.adapters.dynamodb.table import log_item
from a2a_serverless.ports import Scope, WorkItem
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.telemetry._spans import tracer

TRACEPARENT = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"


def item_bytes(item: dict[str, dict[str, str]]) -> int:
    """An item's size as DynamoDB bills it, for string and number attributes (names + values)."""
    size = 0
    for name, value in item.items():
        size += len(name.encode())
        if "S" in value:
            size += len(value["S"].encode())
        else:
            digits = value["N"].lstrip("-").replace(".", "").strip("0") or "0"
            size += (len(digits) + 1) // 2 + 1
    return size


def test_a_work_item_carries_its_trace_outside_its_identity() -> None:
    # Given a work item, and the same work carried with a trace (a re-send comes in a trace of its own)
    item = WorkItem(tenant="", owner="o", task_id="t", message_id="m")
    traced = WorkItem.from_json(replace(item, trace=TRACEPARENT).to_json())

    # Then the trace travels, and SQS still deduplicates the two as one message
    assert traced.trace == TRACEPARENT
    assert traced.deduplication_id == item.deduplication_id


def test_a_delivery_item_carries_its_trace_outside_its_identity() -> None:
    item = DeliveryItem(tenant="", owner="o", task_id="t", config_id="c", up_to_seq=3)
    traced = DeliveryItem.from_json(replace(item, trace=TRACEPARENT).to_json())
    assert traced.trace == TRACEPARENT
    assert traced.deduplication_id == item.deduplication_id


@pytest.mark.usefixtures("spans")
def test_a_log_item_carries_its_commit_s_traceparent_for_60_bytes() -> None:
    # Given a log item written outside any span, and one written inside a commit's span
    def written() -> dict[str, dict[str, str]]:
        return log_item(Scope("", "o"), "t", 1, ['{"statusUpdate":{}}'], datetime.now(UTC), None)  # type: ignore[return-value]

    plain = written()
    with tracer().start_as_current_span("commit events"):
        carried = telemetry.traceparent()
        traced = written()

    # Then the traced one holds that span's traceparent, which is what it costs: "trace" and 55 characters
    assert "trace" not in plain
    assert traced["trace"] == {"S": carried}
    assert item_bytes(traced) - item_bytes(plain) == 60


def test_tracing_off_writes_no_trace_into_a_log_item() -> None:
    item = log_item(Scope("", "o"), "t", 1, ["{}"], datetime.now(UTC), None)
    assert "trace" not in item
