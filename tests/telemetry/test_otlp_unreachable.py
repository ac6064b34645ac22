"""``A2A_TRACING=otlp`` with no collector listening: spans are still made (a request never fails for
them), and the exporter's failure is one WARNING line per export interval, not one per span, batch
or retry (telemetry/_otlp.py)."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider

from a2a_serverless.telemetry import _sdk


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def loud(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.levelno >= logging.WARNING]


@pytest.fixture
def logged() -> Iterator[Lines]:
    """Every line the OpenTelemetry SDK, its exporter and our tracing write."""
    lines = Lines()
    loggers = [logging.getLogger(name) for name in ("opentelemetry", "a2a_serverless.telemetry")]
    for each in loggers:
        each.addHandler(lines)
    yield lines
    for each in loggers:
        each.removeHandler(lines)


def _nothing_listening() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/traces"


def test_an_unreachable_collector_is_one_warning_per_export_interval(
    logged: Lines, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the otlp exporter aimed at a port on 127.0.0.1 where nothing listens (each export's
    # retries bounded by 2 s, batches exported every 3 s)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "3000")
    provider = TracerProvider()
    provider.add_span_processor(_sdk.otlp_processor(_nothing_listening()))
    tracer = provider.get_tracer("test")
    try:
        # When calls make spans and flush them, as each Lambda invocation does, within one interval
        started = time.monotonic()
        for _call in range(5):
            for _span in range(20):
                with tracer.start_as_current_span("SendMessage"):
                    pass
            provider.force_flush()
        within = time.monotonic() - started

        # Then one WARNING line says so, naming what was lost; nothing else is written
        assert within < 3, "the batches after the first failure waited for the collector again"
        (line,) = logged.loud
        assert line.levelno == logging.WARNING
        assert line.getMessage().startswith("tracing: 20 span(s) not exported to the OTLP endpoint (")

        # When the interval has passed and another span is exported
        time.sleep(max(0.0, line.created + 3.2 - time.time()))
        with tracer.start_as_current_span("SendMessage"):
            pass
        provider.force_flush()

        # Then a second line counts the spans dropped meanwhile
        _first, second = logged.loud
        assert second.getMessage().startswith("tracing: 81 span(s) not exported")
    finally:
        provider.shutdown()
