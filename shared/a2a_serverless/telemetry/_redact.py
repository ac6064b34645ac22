"""No message text in an exported span unless content capture is on, whoever made the span.

The kit's spans put text in only with ``A2A_TRACING_CONTENT=true`` (:mod:`._spans`). Other spans on
the same (global) tracer provider are not the kit's to write: a framework's own instrumentation
(Strands' ``chat`` and ``invoke_agent`` spans carry the prompt in ``gen_ai.user.message`` events and
the answer in ``gen_ai.choice``; Pydantic AI's ``instrument=True`` puts the conversation in
``gen_ai.input.messages``, ``pydantic_ai.all_messages``, ``final_result``; Google ADK's
``call_llm`` in ``gcp.vertex.agent.llm_request``...), a library's, the agent's own. Every exporter
the kit installs (``otlp``, ``file``, ``memory``) is wrapped in :class:`RedactingExporter`, which,
with capture off, exports a copy of each such span that keeps only what cannot be message text:

- attributes whose values are numbers or booleans (token counts, ports, temperatures, flags);
- string attributes whose key is structural: a name, an id, a model, a type, a role, a status, a
  provider, a finish reason (:func:`structural`); never ``*.content``, ``*.message(s)``,
  ``*.value``, ``*.prompt``, ``*.completion``, ``*.arguments``, ``*.result``, ``*.instructions``
  or anything else;
- events by name only, their attributes filtered the same way (an exception event keeps
  ``exception.type``, not its message or stack, which may quote the user);
- the status code, without its description (an exception's message); links, with their
  attributes filtered; the name, ids, kind, times, resource and scope as they are.

Spans of the kit's own tracer (``a2a_serverless``) are exported as they are. With capture on,
everything is. A span's name is kept: instrumentations name spans by operation and agent or tool
(``chat``, ``invoke_agent Strands Agents``, ``execute_tool lookup``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

__all__ = ["KIT_SCOPE", "RedactingExporter", "redacted", "structural"]

KIT_SCOPE = "a2a_serverless"
"""The kit's tracer (:func:`._spans.tracer`): its spans follow the switch themselves."""

_STRUCTURAL_KEYS = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.system",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.response.id",
        "gen_ai.response.finish_reasons",
        "gen_ai.conversation.id",
        "gen_ai.agent.id",
        "gen_ai.agent.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "gen_ai.tool.type",
        "gen_ai.output.type",
        "gen_ai.token.type",
        "gen_ai.data_source.id",
        "error.type",
        "exception.type",
        "server.address",
        "http.request.method",
        "http.method",
        "url.scheme",
        "rpc.system",
        "rpc.service",
        "rpc.method",
        "db.system",
        "db.system.name",
        "messaging.system",
        "messaging.operation",
        "messaging.operation.name",
        "otel.status_code",
        "otel.scope.name",
        "otel.scope.version",
        "openinference.span.kind",
        "logfire.span_type",
        "logfire.level_name",
    }
)
_STRUCTURAL_LAST = frozenset({"id", "name", "model", "system", "type", "kind", "role", "status", "provider", "version"})
"""The last dot-separated word of a key whose string value names a thing rather than says something."""


def structural(key: str) -> bool:
    """Whether a string attribute under ``key`` names a thing (kept) rather than may hold text."""
    return key in _STRUCTURAL_KEYS or key.rsplit(".", 1)[-1].lower() in _STRUCTURAL_LAST


def _kept(key: str, value: Any) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, str):
        return structural(key)
    if isinstance(value, Sequence):
        return all(isinstance(v, (bool, int, float)) for v in value) or (
            all(isinstance(v, str) for v in value) and structural(key)
        )
    return False


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {key: value for key, value in (attributes or {}).items() if _kept(key, value)}


def redacted(span: ReadableSpan) -> ReadableSpan:
    """``span`` as exported with capture off: itself when it is the kit's, else a copy without what
    may be text (the module's docstring)."""
    scope = span.instrumentation_scope
    if scope is not None and scope.name == KIT_SCOPE:
        return span
    return ReadableSpan(
        name=span.name,
        context=span.get_span_context(),
        parent=span.parent,
        resource=span.resource,
        attributes=_attributes(span.attributes),
        events=[Event(e.name, _attributes(e.attributes), e.timestamp) for e in span.events],
        links=[Link(link.context, _attributes(link.attributes)) for link in span.links],
        kind=span.kind,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=scope,
    )


class RedactingExporter(SpanExporter):
    """``inner``, given :func:`redacted` copies of the spans while ``content()`` is false."""

    def __init__(self, inner: SpanExporter, content: Callable[[], bool]) -> None:
        self.inner = inner
        self._content = content

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self._content():
            spans = [redacted(span) for span in spans]
        return self.inner.export(spans)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()
