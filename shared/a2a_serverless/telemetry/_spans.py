"""The kit's spans, on the OpenTelemetry API (imported only while tracing is on: the package's
public functions check the switch first).

Context crosses processes as a W3C ``traceparent`` string that travels with the thing it belongs
to: the work item (SQS body, durable execution input), the event-log item (the table's stream),
the delivery item (the push queue). An HTTP request's own context (``traceparent``, or what
``OTEL_PROPAGATORS`` names) is the server span's parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from . import _names as n

__all__ = [
    "carrier_of",
    "commit_span",
    "dispatch_span",
    "enqueue_span",
    "flush_entry",
    "inner_span",
    "invoke_agent",
    "parent_context",
    "post_span",
    "record_error",
    "set_text",
    "span_links",
    "tracer",
]

_W3C = TraceContextTextMapPropagator()


def tracer() -> trace.Tracer:
    return trace.get_tracer("a2a_serverless")


def carrier_of(span: Span | None = None) -> str:
    """``span``'s (default: the current span's) ``traceparent``, or '' when there is none."""
    ctx = trace.set_span_in_context(span) if span is not None else None
    carrier: dict[str, str] = {}
    _W3C.inject(carrier, context=ctx)
    return carrier.get("traceparent", "")


def parent_context(traceparent: str) -> otel_context.Context | None:
    """The context a carried ``traceparent`` names (None: no valid one: the span starts a trace)."""
    if not traceparent:
        return None
    ctx = _W3C.extract({"traceparent": traceparent})
    return ctx if trace.get_current_span(ctx).get_span_context().is_valid else None


def set_text(span: Span, key: str, value: object) -> None:
    """Set ``key`` when ``value`` is a non-empty string."""
    if isinstance(value, str) and value:
        span.set_attribute(key, value)


def flush_entry() -> None:
    """An invocation's outermost span ended: on Lambda, export now (the environment freezes next)."""
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        from . import _sdk

        _sdk.flush()


def record_error(span: Span, exc: BaseException, *, content: bool, failed: bool = True) -> None:
    """``error.type`` (an A2A error's JSON-RPC code, else the exception's class) and, when ``failed``
    (a server fault, not the caller's), ERROR status. The exception's message and stack go in only
    with content on: an executor's message may quote what the user wrote."""
    code = getattr(exc, "jsonrpc_code", None)
    span.set_attribute(n.ERROR_TYPE, str(code) if isinstance(code, int) else type(exc).__qualname__)
    if (reason := getattr(exc, "reason", None)) and isinstance(reason, str):
        span.set_attribute(n.ERROR_REASON, reason)
    if content:
        span.record_exception(exc)
    if failed:
        span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))


# ------------------------------------------------------------------------------- the queue and the run


@contextlib.contextmanager
def enqueue_span(task_id: str, message_id: str) -> Iterator[str]:
    """The producer span of queuing a work item; yields the ``traceparent`` the item carries."""
    current = trace.get_current_span()
    if current.is_recording():
        current.set_attribute(n.A2A_TASK_ID, task_id)  # a new task's id is known from here on
    attributes = {n.A2A_TASK_ID: task_id, n.A2A_MESSAGE_ID: message_id, n.MESSAGING_OPERATION: "send"}
    with inner_span(n.SPAN_ENQUEUE, SpanKind.PRODUCER, attributes) as span:
        yield carrier_of(span)


@contextlib.contextmanager
def inner_span(name: str, kind: SpanKind, attributes: Mapping[str, Any]) -> Iterator[Span]:
    """A span current in the block; an exception leaving it is its error, by class
    (:func:`record_error`), never by message."""
    with tracer().start_as_current_span(
        name, kind=kind, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except BaseException as exc:
            record_error(span, exc, content=False)
            raise


@contextlib.contextmanager
def entry_span(
    name: str, traceparent: str, attributes: Mapping[str, Any], *, content: bool, links: Sequence[str] = ()
) -> Iterator[Span]:
    """A consumer span that continues the trace ``traceparent`` names: the worker's run, the
    dispatcher's task, a delivery; linked to the spans ``links`` name. An exception that escapes it
    is its error."""
    kind = SpanKind.CONSUMER
    attrs = {n.MESSAGING_OPERATION: "process", **attributes}
    span = tracer().start_span(
        name, context=parent_context(traceparent), kind=kind, attributes=attrs, links=span_links(links)
    )
    try:
        with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            yield span
    except BaseException as exc:
        record_error(span, exc, content=content)
        raise
    finally:
        span.end()
        flush_entry()


async def invoke_agent(
    execute: Callable[[], Awaitable[None]], *, agent: str, attributes: Mapping[str, Any], input_text: str | None
) -> None:
    """The GenAI ``invoke_agent`` span around one executor run, current while it runs (so the
    agent's own spans nest under it). An exception is the span's error and the run's."""
    run = trace.get_current_span()
    attrs: dict[str, Any] = {n.GEN_AI_OPERATION: n.INVOKE_AGENT, n.GEN_AI_AGENT_NAME: agent, **attributes}
    if input_text is not None:
        attrs[n.GEN_AI_INPUT] = json.dumps([{"role": "user", "parts": [{"type": "text", "content": input_text}]}])
    name = f"{n.INVOKE_AGENT} {agent}"
    with tracer().start_as_current_span(
        name, kind=SpanKind.INTERNAL, attributes=attrs, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            await execute()
        except BaseException as exc:
            if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):  # (closed: the worker left it)
                span.set_attribute(n.RUN_OUTCOME, "stopped")
            else:
                span.set_attribute(n.RUN_OUTCOME, "raised")
                record_error(span, exc, content=input_text is not None)
                if run.is_recording():
                    record_error(run, exc, content=False)
            raise
        span.set_attribute(n.RUN_OUTCOME, "returned")


@contextlib.contextmanager
def commit_span(events: int, size: int) -> Iterator[Span]:
    attributes = {n.COMMIT_EVENTS: events, n.COMMIT_BYTES: size}
    with inner_span(n.SPAN_COMMIT, SpanKind.INTERNAL, attributes) as span:
        yield span


# ------------------------------------------------------------------------------- push


def span_links(traceparents: Sequence[str]) -> list[Link]:
    return [
        Link(trace.get_current_span(ctx).get_span_context())
        for tp in traceparents
        if (ctx := parent_context(tp)) is not None
    ]


@contextlib.contextmanager
def dispatch_span(traceparent: str, links: list[str], attributes: Mapping[str, Any]) -> Iterator[str]:
    """The dispatcher's span for one task's stream records: a child of the newest record's commit,
    linked to the other commits the batch carried; yields what the delivery items carry."""
    with entry_span(n.SPAN_DISPATCH, traceparent, attributes, content=False, links=links) as span:
        yield carrier_of(span)


@contextlib.contextmanager
def post_span(url_host: str, url_port: int | None, seq: str) -> Iterator[Span]:
    """One webhook POST (CLIENT). The URL is not recorded: its path or query may carry a secret."""
    attributes: dict[str, Any] = {n.HTTP_METHOD: "POST", n.SERVER_ADDRESS: url_host}
    if url_port is not None:
        attributes[n.SERVER_PORT] = url_port
    if seq.isdigit():
        attributes[n.PUSH_SEQ] = int(seq)
    with inner_span(n.SPAN_POST, SpanKind.CLIENT, attributes) as span:
        yield span
