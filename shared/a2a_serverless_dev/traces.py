"""Reading the spans :mod:`a2a_serverless.telemetry._files` wrote: a task's traces, as the local
stack's console serves them. Plain JSON, no OpenTelemetry import.

A trace id is the caller's to choose (a request's ``traceparent`` names it), so a trace may hold
other tasks' spans, another owner's among them. A task's traces therefore hold only its own spans:
those that name the task (``a2a.task.id``, and the tenant where a span names one), and their
descendants that name no task of their own, except a server span: its parent is whatever the request's
header said, so it is another call's, the task's only when it names the task itself. A server span
that names the task but answered "task not found" (``error.type`` -32001) is another scope's call
that did not reach the task; it is left out too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from a2a_serverless.json_types import Json, JsonValue
from a2a_serverless.telemetry._names import A2A_TASK_ID, A2A_TENANT, ERROR_TYPE

__all__ = ["read_spans", "task_traces"]

TASK_NOT_FOUND = "-32001"
"""The ``error.type`` of a call refused with TaskNotFoundError (its JSON-RPC code)."""


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


def task_traces(spans: Iterable[Json], task_id: str, *, tenant: str = "") -> list[Json]:
    """The traces that touch task ``task_id`` of ``tenant``, each with only the task's own spans
    (see the module's doc) in start order; traces in the order they began. A turn of a task is
    one trace."""
    by_trace: dict[str, list[Json]] = {}
    for span in spans:
        by_trace.setdefault(str(span.get("traceId", "")), []).append(span)
    traces: list[Json] = []
    for trace_id, members in by_trace.items():
        own = _own_spans(members, task_id, tenant)
        if own:
            spans_json: list[JsonValue] = list(sorted(own, key=_start))
            traces.append({"traceId": trace_id, "spans": spans_json})
    return sorted(traces, key=lambda t: _start(t["spans"][0]) if t["spans"] else 0)


def _own_spans(members: list[Json], task_id: str, tenant: str) -> list[Json]:
    """The spans of one trace that are the task's: those naming it, and their descendants by
    parent span id that name no task and are not a server span."""
    children: dict[str, list[Json]] = {}
    for span in members:
        parent = span.get("parentSpanId")
        if isinstance(parent, str) and parent:
            children.setdefault(parent, []).append(span)
    kept: dict[str, Json] = {}
    pending = [span for span in members if _names_task(span, task_id, tenant)]
    while pending:
        span = pending.pop()
        span_id = str(span.get("spanId", ""))
        if span_id in kept:
            continue
        kept[span_id] = span
        pending.extend(child for child in children.get(span_id, ()) if _inherits(child))
    return list(kept.values())


def _attributes(span: Json) -> Json:
    attributes = span.get("attributes")
    return attributes if isinstance(attributes, dict) else {}


def _names_task(span: Json, task_id: str, tenant: str) -> bool:
    attributes = _attributes(span)
    if attributes.get(A2A_TASK_ID) != task_id or attributes.get(A2A_TENANT, "") != tenant:
        return False
    return not (span.get("kind") == "SERVER" and attributes.get(ERROR_TYPE) == TASK_NOT_FOUND)


def _inherits(child: Json) -> bool:
    """A child span is its parent's task's unless it names a task (or tenant) itself or is a server
    span (its parent is a caller's choice)."""
    attributes = _attributes(child)
    return child.get("kind") != "SERVER" and A2A_TASK_ID not in attributes and A2A_TENANT not in attributes


def _start(span: JsonValue) -> int:
    value = span.get("startUnixNano", 0) if isinstance(span, dict) else 0
    return value if isinstance(value, int) else 0
