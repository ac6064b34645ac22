"""Reading the spans :mod:`._files` wrote: a task's traces, as the local stack's dev API serves them.
Plain JSON, no OpenTelemetry import."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..json_types import Json, JsonValue
from ._names import A2A_TASK_ID

__all__ = ["read_spans", "task_traces"]


def read_spans(directory: str | Path) -> Iterator[Json]:
    """Every span the processes wrote in ``directory`` (a line cut short is skipped)."""
    for path in sorted(Path(directory).glob("spans-*.jsonl")):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                span = json.loads(line)
            except ValueError:
                continue
            if isinstance(span, dict):
                yield span


def task_traces(spans: Iterable[Json], task_id: str) -> list[Json]:
    """The traces that touch task ``task_id`` (a span of theirs names it), each with all its spans
    in start order; traces in the order they began. A turn of a task is one trace."""
    by_trace: dict[str, list[Json]] = {}
    touched: set[str] = set()
    for span in spans:
        trace_id = str(span.get("traceId", ""))
        by_trace.setdefault(trace_id, []).append(span)
        attributes = span.get("attributes")
        if isinstance(attributes, dict) and attributes.get(A2A_TASK_ID) == task_id:
            touched.add(trace_id)
    traces: list[Json] = []
    for trace_id in touched:
        members = sorted(by_trace[trace_id], key=_start)
        spans_json: list[JsonValue] = list(members)
        traces.append({"traceId": trace_id, "spans": spans_json})
    return sorted(traces, key=lambda t: _start(t["spans"][0]) if t["spans"] else 0)


def _start(span: JsonValue) -> int:
    value = span.get("startUnixNano", 0) if isinstance(span, dict) else 0
    return value if isinstance(value, int) else 0
