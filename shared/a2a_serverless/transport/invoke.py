"""One invocation path: a call of any row (:mod:`.rows`), of either binding and either protocol
version, becomes one typed operation call.

The bindings only find the row and say how their answers are framed: JSON-RPC reads its envelope
and wraps each result in one; REST matches a route and answers bare bodies. Everything between is
here, in this order, for every call: the protocol version is negotiated, the caller authenticated,
the fields converted to the v1.0 request (``row.request_in``), the call context built, and the
row's operation run off the event loop, its result (or each event of its stream) rendered by the
row. Errors propagate to the binding, which renders them in its shape (:mod:`._render`). With tracing
on, the call is one server span (:func:`a2a_serverless.telemetry.server_call`), current while the
operation runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import telemetry
from ..auth import Principal
from ..errors import A2AError
from ..json_types import Json, JsonValue
from ..runtime import Runtime
from ._http import authenticate_request, call_context, negotiate_version, request_id
from .rows import Endpoint
from .sse import last_event_id, sse_response

__all__ = ["Framing", "invoke"]


@dataclass(frozen=True, slots=True)
class Framing:
    """How a binding frames what a row renders."""

    result: Callable[[JsonValue], JsonValue]
    """A result, or a streamed event's rendering -> the response body (or event data)."""
    stream_error: Callable[[A2AError], JsonValue]
    """An error after a stream's first event -> the ``error`` event's data."""


async def invoke(
    row: Endpoint,
    request: Request,
    runtime: Runtime,
    *,
    what: str,
    fields: Callable[[], Awaitable[Json]],
    path: Mapping[str, str],
    tenant: str | None,
    framing: Framing,
) -> Response:
    """Call ``row`` for ``request``; ``what`` names the endpoint in a version error, ``fields``
    reads what the caller sent (after authentication: a REST body is not read for a caller who
    is refused), ``path`` holds the REST path's parameters, and ``tenant`` is the path's tenant
    (None: the request message's ``tenant`` field, as over JSON-RPC)."""
    with telemetry.server_call(row.method.name, request.headers) as call:
        version = negotiate_version(
            request, row.version, what=what, lenient_missing=runtime.settings.lenient_missing_version
        )
        principal: Principal = authenticate_request(request, runtime)
        data = row.request_in(await fields(), path)
        ctx = call_context(
            request,
            runtime,
            principal=principal,
            tenant=str(data.get("tenant") or "") if tenant is None else tenant,
            version=version,
            last_event_id=last_event_id(request) if row.streaming else None,
        )
        call.request(version=version, tenant=ctx.tenant, fields=data)
        if row.streaming:
            opened = await run_in_threadpool(row.open, data, ctx, runtime)
            render = opened.render
            return call.streaming(
                sse_response(
                    opened.stream,
                    lambda event: framing.result(render(event)),
                    framing.stream_error,
                    ping_seconds=runtime.settings.stream_ping_seconds,
                    request_id=request_id(request),
                )
            )
        body = await run_in_threadpool(row.answer, data, ctx, runtime)
        call.result(body)
        return JSONResponse(framing.result(body), media_type=row.media_type)
