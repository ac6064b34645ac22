"""Server-Sent Events framing for both bindings (A2A specification, sections 9.4.2 SendStreamingMessage and 11.7
Streaming).

Each event is ``id: <seq>`` plus one compact ``data:`` line: a full JSON-RPC response carrying the
request id (JSON-RPC) or the bare StreamResponse (REST). ``: ping`` comments keep idle connections
open. An error after the first event is sent as ``event: error`` and ends the stream. When the
client disconnects, Starlette cancels the body and the event-log polling stops with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable

from starlette.requests import Request
from starlette.responses import StreamingResponse

from ..errors import A2AError, FieldViolation, InvalidParamsError
from ..json_types import JsonValue
from ..models import StreamResponse
from ..operations.streaming import EventStream, StreamItem
from ._render import internal_error

__all__ = ["end_streams", "last_event_id", "sse_response", "streams_open"]

_closing = threading.Event()
_SHUTDOWN_CHECK_SECONDS = 0.25


def end_streams() -> None:
    """Make every open stream of this process end cleanly within a quarter second (a server that
    is stopping: its clients see the stream end and resume with ``Last-Event-ID``)."""
    _closing.set()


def streams_open() -> None:
    """Let streams run again (a server starting in a process that stopped one before)."""
    _closing.clear()


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}


_EVENT_ID = re.compile(r"[0-9]{1,18}")
"""A sequence number as this server sends it: ASCII digits only (``str.isdigit`` also accepts
superscripts and other scripts' digits, which ``int`` refuses or reads differently), and short
enough for an int64."""


def last_event_id(request: Request) -> int | None:
    """The ``Last-Event-ID`` a reconnecting client sends (the last sequence number it received).
    Absent or blank: None. Anything but a sequence number: InvalidParams."""
    raw = request.headers.get("last-event-id")
    if raw is None or not raw.strip():
        return None
    value = raw.strip()
    if _EVENT_ID.fullmatch(value) is None:
        raise InvalidParamsError(violations=[FieldViolation("Last-Event-ID", "must be an event id from this stream")])
    return int(value)


def sse_response(
    stream: EventStream,
    render: Callable[[StreamResponse], JsonValue],
    render_error: Callable[[A2AError], JsonValue],
    *,
    ping_seconds: float,
    request_id: str = "",
) -> StreamingResponse:
    return StreamingResponse(
        _frames(stream, render, render_error, ping_seconds, request_id),
        media_type="text/event-stream",
        headers=SSE_HEADERS,
    )


async def _frames(
    stream: EventStream,
    render: Callable[[StreamResponse], JsonValue],
    render_error: Callable[[A2AError], JsonValue],
    ping_seconds: float,
    request_id: str,
) -> AsyncIterator[str]:
    events = stream.events()
    upcoming: asyncio.Task[StreamItem] | None = None
    last_sent = time.monotonic()
    try:
        while True:
            if upcoming is None:
                upcoming = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({upcoming}, timeout=min(ping_seconds, _SHUTDOWN_CHECK_SECONDS))
            if _closing.is_set():
                return  # the server is stopping: end cleanly (the client resumes with Last-Event-ID)
            if not done:
                if time.monotonic() - last_sent >= ping_seconds:
                    last_sent = time.monotonic()
                    yield ": ping\n\n"
                continue
            last_sent = time.monotonic()
            current, upcoming = upcoming, None
            try:
                seq, event = current.result()
            except StopAsyncIteration:
                return
            except A2AError as exc:
                yield _error_frame(render_error(exc))
                return
            except Exception:
                yield _error_frame(render_error(internal_error(request_id, "stream failed")))
                return
            yield f"id: {seq}\ndata: {json.dumps(render(event), separators=(',', ':'))}\n\n"
    finally:
        if upcoming is not None:
            upcoming.cancel()
            with contextlib.suppress(BaseException):
                await upcoming
        await events.aclose()  # type: ignore[attr-defined]


def sse_error_response(body: JsonValue) -> StreamingResponse:
    """A stream whose only event is the error ``body`` (rendered now: a body that cannot be
    encoded raises here, for the caller's plain-JSON fallback). This is how v0.3 servers answer
    a streaming JSON-RPC call that fails before its first event, and the 0.3 Python client types
    a stream's errors only when they come as its events."""
    frame = _error_frame(body)

    async def frames() -> AsyncIterator[str]:
        yield frame

    return StreamingResponse(frames(), media_type="text/event-stream", headers=SSE_HEADERS)


def _error_frame(body: JsonValue) -> str:
    return f"event: error\ndata: {json.dumps(body, separators=(',', ':'))}\n\n"
