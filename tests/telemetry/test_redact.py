"""Spans that are not the kit's (a framework's, a library's, the agent's) leave without message text
unless content capture is on: every exporter the kit installs gets redacted copies (``_redact``).
The frameworks' own instrumentation, end to end: tests/frameworks/test_framework_spans_content.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, Status, StatusCode

from a2a_serverless import telemetry
from a2a_serverless.telemetry import _sdk
from a2a_serverless.telemetry._files import JsonLinesExporter
from a2a_serverless.telemetry._redact import RedactingExporter, redacted, structural

PROMPT = "my secret prompt zq-1234"
ANSWER = "a private answer zq-5678"

CONTENT_ATTRIBUTES = {
    # The GenAI conventions' content, old and new.
    "gen_ai.prompt": PROMPT,
    "gen_ai.completion": ANSWER,
    "gen_ai.prompt.0.content": PROMPT,
    "gen_ai.completion.0.content": ANSWER,
    "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]),
    "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"content": ANSWER}]}]),
    "gen_ai.system_instructions": PROMPT,
    "gen_ai.tool.call.arguments": json.dumps({"q": PROMPT}),
    "gen_ai.tool.call.result": ANSWER,
    "gen_ai.agent.description": PROMPT,
    # OpenInference, Logfire / Pydantic AI, ADK's first schema, a library's own.
    "input.value": PROMPT,
    "output.value": ANSWER,
    "llm.input_messages.0.message.content": PROMPT,
    "all_messages_events": json.dumps([{"content": PROMPT}]),
    "pydantic_ai.all_messages": json.dumps([{"content": ANSWER}]),
    "final_result": ANSWER,
    "gcp.vertex.agent.llm_request": json.dumps({"contents": [PROMPT]}),
    "some.library.note": ANSWER,
    "tags": (PROMPT, ANSWER),
}
STRUCTURAL_ATTRIBUTES = {
    "gen_ai.operation.name": "chat",
    "gen_ai.system": "strands-agents",
    "gen_ai.provider.name": "aws.bedrock",
    "gen_ai.request.model": "a-model",
    "gen_ai.response.id": "r-1",
    "gen_ai.response.finish_reasons": ("end_turn",),
    "gen_ai.agent.name": "Strands Agents",
    "gen_ai.tool.name": "lookup",
    "gen_ai.tool.call.id": "call-1",
    "gen_ai.conversation.id": "c-1",
    "llm.input_messages.0.message.role": "user",
    "gen_ai.usage.input_tokens": 12,
    "gen_ai.usage.output_tokens": 34,
    "gen_ai.request.temperature": 0.5,
    "gen_ai.request.stream": True,
    "retries": (1, 2),
}


@pytest.fixture
def capture(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    """Tracing on, spans in memory; content capture on when the test is parametrized so."""
    content = bool(getattr(request, "param", False))
    monkeypatch.setenv(telemetry.SWITCH_ENV, "memory")
    monkeypatch.setenv(telemetry.CONTENT_ENV, "true" if content else "false")
    telemetry.reset()
    assert telemetry.tracing_on()
    _sdk.MEMORY.clear()
    yield content
    _sdk.MEMORY.clear()
    monkeypatch.delenv(telemetry.SWITCH_ENV)
    monkeypatch.delenv(telemetry.CONTENT_ENV)
    telemetry.reset()


def _a_library_span(tracer: trace.Tracer) -> None:
    """What a framework's instrumentation records of one model call (and its failure)."""
    other = trace.SpanContext(0x1234, 0x5678, is_remote=False)
    with tracer.start_as_current_span(
        "chat", attributes={**CONTENT_ATTRIBUTES, **STRUCTURAL_ATTRIBUTES}, links=[Link(other, {"why": PROMPT})]
    ) as span:
        span.add_event("gen_ai.user.message", {"content": PROMPT, "role": "user"})
        span.add_event("gen_ai.choice", {"message": ANSWER, "index": 0, "finish_reason": "end_turn"})
        span.add_event("gen_ai.content.prompt", {"gen_ai.prompt": PROMPT})
        span.record_exception(ValueError(f"the model choked on {PROMPT}"))
        span.set_status(Status(StatusCode.ERROR, f"failed: {ANSWER}"))


def _everything(span: ReadableSpan) -> str:
    return span.to_json(indent=None)


def test_a_library_s_span_keeps_its_structure_and_loses_its_text(capture: bool) -> None:
    _a_library_span(trace.get_tracer("some.library"))

    (span,) = _sdk.finished_spans()
    everything = _everything(span)
    for text in ("secret", "private", "zq-"):
        assert text not in everything
    assert dict(span.attributes or {}) == STRUCTURAL_ATTRIBUTES
    events = {event.name: dict(event.attributes or {}) for event in span.events}
    assert events == {
        "gen_ai.user.message": {"role": "user"},
        "gen_ai.choice": {"index": 0},
        "gen_ai.content.prompt": {},
        "exception": {"exception.type": "ValueError"},  # no message, no stack
    }
    assert span.status.status_code is StatusCode.ERROR
    assert not span.status.description
    assert [dict(link.attributes or {}) for link in span.links] == [{}]
    assert span.name == "chat"
    assert span.context is not None
    assert span.context.trace_id
    assert span.parent is None


@pytest.mark.parametrize("capture", [True], indirect=True)
def test_with_content_capture_on_a_library_s_span_leaves_as_it_was(capture: bool) -> None:
    _a_library_span(trace.get_tracer("some.library"))

    (span,) = _sdk.finished_spans()
    assert dict(span.attributes or {}) == {**CONTENT_ATTRIBUTES, **STRUCTURAL_ATTRIBUTES}
    assert PROMPT in _everything(span)
    assert ANSWER in _everything(span)


def test_the_kit_s_own_spans_are_left_to_the_kit(capture: bool) -> None:
    # The kit's tracer puts text in only with capture on (test_spans); what it sets stays as it is.
    with trace.get_tracer("a2a_serverless").start_as_current_span("invoke_agent X", attributes={"a2a.note": "kept"}):
        pass

    (span,) = _sdk.finished_spans()
    assert dict(span.attributes or {}) == {"a2a.note": "kept"}


def test_the_file_exporter_writes_the_redacted_copy(capture: bool, tmp_path: Path) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_sdk._guarded(JsonLinesExporter(str(tmp_path)))))

    _a_library_span(provider.get_tracer("some.library"))
    provider.shutdown()

    written = "".join(path.read_text() for path in tmp_path.glob("spans-*.jsonl"))
    assert '"gen_ai.request.model":"a-model"' in written
    assert "secret" not in written
    assert "private" not in written


def test_every_exporter_the_kit_installs_redacts() -> None:
    assert isinstance(_sdk.otlp_processor("http://127.0.0.1:9/v1/traces").span_exporter, RedactingExporter)
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    exporters = [
        getattr(p, "span_exporter", None)
        for p in provider._active_span_processor._span_processors  # what install added
    ]
    assert any(isinstance(e, RedactingExporter) and e.inner is _sdk.MEMORY for e in exporters)
    assert not any(e is _sdk.MEMORY for e in exporters)


@pytest.mark.parametrize(
    ("key", "kept"),
    [
        ("gen_ai.request.model", True),
        ("gen_ai.tool.name", True),
        ("llm.output_messages.0.message.role", True),
        ("gen_ai.prompt.0.content", False),
        ("gen_ai.choice", False),
        ("input.value", False),
        ("gen_ai.system_instructions", False),
        ("logfire.msg", False),
    ],
)
def test_a_string_is_kept_only_under_a_key_that_names_a_thing(key: str, kept: bool) -> None:
    assert structural(key) is kept


def test_a_redacted_copy_leaves_the_original_alone(capture: bool) -> None:
    _a_library_span(trace.get_tracer("some.library"))
    (exported,) = _sdk.finished_spans()
    assert redacted(exported).attributes == exported.attributes  # already redacted: a fixed point
