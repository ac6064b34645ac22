"""Spans as JSON lines: one file per process in a directory, appended as each span ends.

This is how the local stack collects its processes' spans without a server of its own: each function
process writes ``spans-<pid>.jsonl`` in the stack's directory, and the dev API reads them all
(:func:`read_spans`). One span is one line::

    {"traceId": "…32 hex", "spanId": "…16 hex", "parentSpanId": "…16 hex" or null, "name": "SendMessage",
     "kind": "SERVER", "service": "a2a-local-WorkerFunction", "startUnixNano": 1, "endUnixNano": 2,
     "status": {"code": "ERROR", "description": "…"}, "attributes": {…},
     "links": [{"traceId": "…", "spanId": "…"}], "events": [{"name": "…", "timeUnixNano": 1, "attributes": {…}}]}
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..json_types import Json, JsonValue

__all__ = ["JsonLinesExporter", "span_json"]


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def _attributes(attributes: Mapping[str, object] | None) -> Json:
    """Attribute values as JSON (OpenTelemetry keeps sequences as tuples)."""
    return {str(k): list(v) if isinstance(v, tuple) else v for k, v in (attributes or {}).items()}


def span_json(span: ReadableSpan) -> Json:
    context = span.get_span_context()
    assert context is not None  # an SDK span always has one
    parent = span.parent
    links: list[JsonValue] = [
        {"traceId": _hex(link.context.trace_id, 32), "spanId": _hex(link.context.span_id, 16)} for link in span.links
    ]
    events: list[JsonValue] = [
        {"name": event.name, "timeUnixNano": event.timestamp, "attributes": _attributes(event.attributes)}
        for event in span.events
    ]
    return {
        "traceId": _hex(context.trace_id, 32),
        "spanId": _hex(context.span_id, 16),
        "parentSpanId": _hex(parent.span_id, 16) if parent is not None else None,
        "name": span.name,
        "kind": span.kind.name,
        "service": str(span.resource.attributes.get("service.name", "")),
        "startUnixNano": span.start_time,
        "endUnixNano": span.end_time,
        "status": {"code": span.status.status_code.name, "description": span.status.description or ""},
        "attributes": _attributes(span.attributes),
        "links": links,
        "events": events,
    }


class JsonLinesExporter(SpanExporter):
    """Appends each finished span to ``<directory>/spans-<pid>.jsonl`` (a line is written whole, so
    a reader sees whole lines, or a last one still being written, which it skips)."""

    def __init__(self, directory: str) -> None:
        self._directory = Path(directory)
        self._lock = threading.Lock()
        self._out: TextIO | None = None
        self._pid = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(json.dumps(span_json(s), separators=(",", ":")) + "\n" for s in spans)
        try:
            with self._lock:
                out = self._file()
                out.write(lines)
                out.flush()
        except OSError:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _file(self) -> TextIO:
        """This process's file, opened once (again in a forked child: its pid is another)."""
        if self._out is None or self._pid != os.getpid():
            self._directory.mkdir(parents=True, exist_ok=True)
            self._pid = os.getpid()
            self._out = (self._directory / f"spans-{self._pid}.jsonl").open("a", encoding="utf-8")
        return self._out

    def shutdown(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None
