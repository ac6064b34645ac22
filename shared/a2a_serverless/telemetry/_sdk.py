"""The OpenTelemetry SDK, set up once per process when the switch is on (imported only then).

The process's tracer provider is the global one, so an agent's own spans (the standard API's
``trace.get_tracer(...)``) land in the same traces, nested under the run that is current when they
start. A provider someone else installed first (the ADOT Lambda layer, the user's own) is used as
it is: ``otlp`` then adds no exporter (that provider's owner exports), ``file`` and ``memory`` do.

Every exporter added here is wrapped in :class:`._redact.RedactingExporter`: with content capture
off, spans that are not the kit's (a framework's, a library's, the agent's) go out without what may
be message text. A foreign provider's own exporters are its owner's, not wrapped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ._files import JsonLinesExporter
from ._redact import RedactingExporter

__all__ = ["MEMORY", "finished_spans", "flush", "install", "otlp_processor"]

MEMORY = InMemorySpanExporter()
"""Where ``memory`` keeps this process's finished spans."""

_lock = threading.Lock()
_installed: set[str] = set()
_ours: TracerProvider | None = None


def _service_name() -> str:
    return os.environ.get("AWS_LAMBDA_FUNCTION_NAME") or os.environ.get("POWERTOOLS_SERVICE_NAME") or "a2a-serverless"


def _provider() -> tuple[TracerProvider, bool]:
    """The SDK provider spans go to, and whether it is someone else's."""
    global _ours
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current, current is not _ours
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win (Resource.create reads them); else the
    # function's name, as Lambda names it.
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: _service_name()}
    _ours = TracerProvider(resource=Resource.create(attributes))
    trace.set_tracer_provider(_ours)
    return _ours, False


def install(modes: frozenset[str], directory: str, content: Callable[[], bool]) -> None:
    """Add the exporters ``modes`` names (once each; ``file`` writes in ``directory``): the switch's
    modes and directory, which :mod:`._switch` passes in (it imports this module, never the reverse,
    so nothing here names its ``Switch``); ``content`` says, at each export, whether content capture
    is on."""
    global _capture
    _capture = content
    with _lock:
        provider, foreign = _provider()
        for mode in sorted(modes):
            key = f"file:{directory}" if mode == "file" else mode
            if key in _installed:
                continue
            if mode == "otlp":
                if foreign:
                    continue
                provider.add_span_processor(otlp_processor())
            elif mode == "memory":
                provider.add_span_processor(SimpleSpanProcessor(_guarded(MEMORY)))
            else:
                provider.add_span_processor(SimpleSpanProcessor(_guarded(JsonLinesExporter(directory))))
            _installed.add(key)


def otlp_processor(endpoint: str | None = None) -> BatchSpanProcessor:
    """The ``otlp`` exporter (to ``endpoint``, else as ``OTEL_EXPORTER_OTLP_*`` say), batched, its
    failures told once per export interval (:mod:`._otlp`)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from ._otlp import QuietExporter, export_interval_seconds
    from ._sigv4 import signed_session  # CloudWatch's endpoint: each export signed

    exporter = OTLPSpanExporter(endpoint=endpoint, session=signed_session())
    return BatchSpanProcessor(_guarded(QuietExporter(exporter, export_interval_seconds())))


def _always_off() -> bool:
    return False


_capture: Callable[[], bool] = _always_off
"""Whether content capture is on, as :func:`install` was told to read it."""


def _content() -> bool:
    """Whether content capture is on now (read at export: tests switch it)."""
    try:
        return _capture()
    except Exception:  # an environment changed to something wrong since: keep text out
        return False


def _guarded(exporter: SpanExporter) -> RedactingExporter:
    """``exporter``, given spans that are not the kit's without message text unless capture is on."""
    return RedactingExporter(exporter, _content)


def flush() -> None:
    """Export what is batched now. On Lambda the environment freezes when the handler returns, so
    a batch left waiting would go out late (at the next invocation) or never."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.force_flush()


def finished_spans() -> tuple[ReadableSpan, ...]:
    return MEMORY.get_finished_spans()
