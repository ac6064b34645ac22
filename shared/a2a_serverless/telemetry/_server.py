"""The server span of one A2A call, either binding, either protocol version (OpenTelemetry's A2A
server span: named after the method, kind SERVER, lasting until a stream's body is done)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind
from starlette.responses import Response, StreamingResponse

from . import _names as n
from ._spans import flush_entry, record_error, set_text, tracer

__all__ = ["LiveServerCall"]


class LiveServerCall:
    """The server span of one A2A call (:func:`a2a_serverless.telemetry.server_call`), a
    :class:`._switch.ServerCall`."""

    def __init__(self, method: str, headers: Mapping[str, str], content: bool) -> None:
        self._content = content
        self._span = tracer().start_span(
            method, context=propagate.extract(headers), kind=SpanKind.SERVER, attributes={n.A2A_METHOD: method}
        )
        self._scope: contextlib.AbstractContextManager[Span] | None = None
        self._deferred = False

    def __enter__(self) -> LiveServerCall:
        self._scope = trace.use_span(
            self._span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )
        self._scope.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        assert self._scope is not None
        self._scope.__exit__(None, None, None)
        if exc is not None:
            status = getattr(exc, "http_status", 500)
            record_error(self._span, exc, content=self._content, failed=not isinstance(status, int) or status >= 500)
        if exc is not None or not self._deferred:
            self._end()

    def _end(self) -> None:
        self._span.end()
        flush_entry()

    def request(self, *, version: str, tenant: str, fields: Mapping[str, Any]) -> None:
        span = self._span
        span.set_attribute(n.A2A_PROTOCOL_VERSION, str(version))
        set_text(span, n.A2A_TENANT, tenant)
        message = fields.get("message")
        if isinstance(message, Mapping):
            set_text(span, n.A2A_MESSAGE_ID, message.get("messageId"))
            set_text(span, n.A2A_TASK_ID, message.get("taskId"))
            set_text(span, n.CONVERSATION_ID, message.get("contextId"))
            references = message.get("referenceTaskIds")
            if isinstance(references, list) and references:
                span.set_attribute(n.A2A_REFERENCE_TASK_IDS, [str(r) for r in references])
        set_text(span, n.A2A_TASK_ID, fields.get("id") if "message" not in fields else None)
        set_text(span, n.A2A_TASK_ID, fields.get("taskId"))

    def result(self, body: object) -> None:
        """What a unary call answered: the task's id, context and state when it is (or holds) a Task."""
        task = body.get("task", body) if isinstance(body, Mapping) else None
        if not isinstance(task, Mapping) or not isinstance(task.get("status"), Mapping):
            return
        set_text(self._span, n.A2A_TASK_ID, task.get("id"))
        set_text(self._span, n.CONVERSATION_ID, task.get("contextId"))
        state = task["status"].get("state")
        if isinstance(state, str) and state.startswith("TASK_STATE_"):
            self._span.set_attribute(n.A2A_TASK_STATE, state)

    def streaming(self, response: Response) -> Response:
        """The span lasts until the stream's body is done (the convention's "time to produce the
        response stream"), not just until it opened: it ends when the body's iteration does, at its
        end or when it is closed (a client that went away)."""
        if not isinstance(response, StreamingResponse):
            return response
        self._deferred = True
        body = response.body_iterator

        async def traced() -> AsyncIterator[str | bytes | memoryview[int]]:
            try:
                async for chunk in body:
                    yield chunk
            finally:
                self._end()

        response.body_iterator = traced()
        return response
