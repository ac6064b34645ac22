"""The ``otlp`` exporter, quiet when its collector is away.

OpenTelemetry's OTLP/HTTP exporter logs every attempt of every batch that fails (a WARNING per
retry, an ERROR when it gives up), and retries each batch for up to its timeout
(``OTEL_EXPORTER_OTLP_TIMEOUT``, 10 s). With no collector listening, that was several lines every
few seconds on a busy function, and each Lambda invocation's flush waited out the retries. Spans
are telemetry: a request never fails for them, and a collector that is away is worth one line per
export interval (``OTEL_BSP_SCHEDULE_DELAY``, 5 s), not one per span or per retry.

:class:`QuietExporter` wraps the exporter: a batch that fails is reported in one WARNING line (with
the exporter's own last reason), and for the rest of the interval the batches that follow are
dropped at once instead of waiting for the collector again; the next line counts them.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["EXPORTER_LOGGER", "QuietExporter", "export_interval_seconds"]

EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
"""Where the OTLP/HTTP span exporter logs its failures."""

_log = logging.getLogger(__name__)


def export_interval_seconds() -> float:
    """The batch span processor's export interval (``OTEL_BSP_SCHEDULE_DELAY``, milliseconds)."""
    try:
        return max(float(os.environ.get("OTEL_BSP_SCHEDULE_DELAY", "5000")) / 1000, 0.1)
    except ValueError:
        return 5.0


class QuietExporter(SpanExporter, logging.Filter):
    """``inner`` (the OTLP exporter), its failures told in one WARNING line per ``interval`` seconds."""

    def __init__(self, inner: OTLPSpanExporter, interval: float) -> None:
        logging.Filter.__init__(self)
        self._inner = inner
        self._interval = interval
        self._lock = threading.Lock()
        self._quiet_until = 0.0
        self._dropped = 0
        self._reason = ""
        logging.getLogger(EXPORTER_LOGGER).addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        """The exporter's own lines about a failed attempt: kept as the reason of ours, not written."""
        if record.levelno >= logging.WARNING:
            self._reason = record.getMessage()
            return False
        return True

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            if time.monotonic() < self._quiet_until:
                self._dropped += len(spans)
                return SpanExportResult.FAILURE
        self._reason = ""
        try:
            result = self._inner.export(spans)
        except Exception as exc:  # never a request's failure
            self._reason = f"{type(exc).__name__}: {exc}"
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            with self._lock:
                dropped, self._dropped = self._dropped + len(spans), 0
                self._quiet_until = time.monotonic() + self._interval
            _log.warning(
                "tracing: %d span(s) not exported to the OTLP endpoint (%s); the next %g s of spans are dropped",
                dropped,
                self._reason.rstrip(".") or "the collector did not take them",
                self._interval,
            )
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        logging.getLogger(EXPORTER_LOGGER).removeFilter(self)
        self._inner.shutdown()  # type: ignore[no-untyped-call]  # untyped in the exporter
