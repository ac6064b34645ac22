"""The rows of the binding table, and the one invocation path that runs any of them.

A row is one way of calling a method (a JSON-RPC method name, or a REST route), in either protocol
version. It says which method of :mod:`a2a_serverless.methods` it calls and how its wire shapes
convert: ``request_in`` turns what the caller sent into the v1.0 request message's ProtoJSON, the
method's operation runs (or, where v0.3 semantics differ, the row's own), and ``result_out`` turns
the result, or each streamed event, into the caller's JSON. The v1.0 rows are derived from the
method table here; the v0.3 rows (:mod:`.v03`) are the same kind of row with their own names,
converters and renderers.

:func:`invoke` runs any row, of either binding and either protocol version. The bindings only find
the row and say how their answers are framed: JSON-RPC reads its envelope and wraps each result in
one; REST matches a route and answers bare bodies. Everything between is here, in this order, for
every call: the protocol version is negotiated (:func:`negotiate_version`, ``A2A-Version``), the
caller authenticated, the fields converted to the v1.0 request (``row.request_in``), the call
context built, and the row's operation run off the event loop, its result (or each event of its
stream) rendered by the row. Errors propagate to the binding, which renders them in its shape
(:mod:`._render`). With tracing on, the call is one server span
(:func:`a2a_serverless.telemetry.server_call`), current while the operation runs.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import re
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, ParamSpec, Protocol, TypeVar

from pydantic import ValidationError
from pydantic.alias_generators import to_camel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import telemetry
from ..auth import Principal
from ..errors import A2AError, InvalidParamsError, VersionNotSupportedError
from ..json_types import Json, JsonValue
from ..methods import METHODS, Method, MethodInfo, Operation, RestRoute
from ..models import ProtoModel, StreamResponse
from ..operations import CallContext, EventStream
from ..runtime import Runtime
from ..versions import SUPPORTED, ProtocolVersion
from ._http import authenticate_request, call_context, request_id
from .sse import last_event_id, sse_response

__all__ = [
    "JSON_MEDIA_TYPE",
    "REST_MEDIA_TYPE",
    "V1_JSONRPC_ROWS",
    "V1_REST_ROWS",
    "Endpoint",
    "Framing",
    "OpenedStream",
    "RequestIn",
    "Row",
    "StreamRow",
    "asks_for_v1",
    "invoke",
    "is_legacy_request",
    "negotiate_version",
    "states_version",
]

Req = TypeVar("Req", bound=ProtoModel)
Res = TypeVar("Res")
W = TypeVar("W", bound=ProtoModel | None)
P = ParamSpec("P")
T = TypeVar("T")

REST_MEDIA_TYPE = "application/a2a+json"
JSON_MEDIA_TYPE = "application/json"

RequestIn = Callable[[Json, Mapping[str, str]], Json]
"""(the fields the caller sent: JSON-RPC params, a REST body or query; the REST path's parameters,
``tenant`` included) -> the v1.0 request message as ProtoJSON. Raises InvalidParams naming the
caller's own field path."""


@dataclass(frozen=True, slots=True)
class OpenedStream:
    """A prepared event stream and how each of its events is rendered for this row's caller."""

    stream: EventStream
    render: Callable[[StreamResponse], JsonValue]


class Endpoint(Protocol):
    """What dispatch reads of any row (rows differ in their request and response types, which only
    the row itself handles: JSON in, JSON out)."""

    @property
    def name(self) -> str: ...
    @property
    def method(self) -> MethodInfo: ...
    @property
    def version(self) -> ProtocolVersion: ...
    @property
    def route(self) -> RestRoute | None: ...
    @property
    def media_type(self) -> str: ...
    @property
    def streaming(self) -> bool: ...
    @property
    def request_in(self) -> RequestIn: ...
    def answer(self, data: Json, ctx: CallContext, runtime: Runtime) -> JsonValue: ...
    def open(self, data: Json, ctx: CallContext, runtime: Runtime) -> OpenedStream: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class _Row(Generic[Req]):
    name: str
    """The method's name as this row's callers write it (``SendMessage``, ``message/send``)."""
    method: Method[Req, ProtoModel | None]
    version: ProtocolVersion
    request_in: RequestIn
    route: RestRoute | None = None
    """The REST route (None: a JSON-RPC method)."""
    media_type: str = JSON_MEDIA_TYPE

    def parse(self, data: Json) -> Req:
        try:
            return self.method.request.model_validate(data)
        except ValidationError as exc:
            raise InvalidParamsError.from_validation(exc) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(_Row[Req], Generic[Req, Res]):
    """One way to call a unary method: ``Req`` is its request message, ``Res`` what the row's
    operation returns (the method's, or the row's own where its version's semantics differ)."""

    call: Operation[Req, Res]
    result_out: Callable[[Res], JsonValue]
    streaming = False

    def answer(self, data: Json, ctx: CallContext, runtime: Runtime) -> JsonValue:
        """Validate ``data``, run the operation, render its result."""
        return self.result_out(self.call(self.parse(data), ctx, runtime))

    def open(self, data: Json, ctx: CallContext, runtime: Runtime) -> OpenedStream:
        raise TypeError(f"{self.name} is not a streaming method")


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamRow(_Row[Req]):
    """One way to call a streaming method: each event is rendered by ``result_out``."""

    stream: Operation[Req, EventStream]
    result_out: Callable[[StreamResponse], JsonValue]
    streaming = True

    def answer(self, data: Json, ctx: CallContext, runtime: Runtime) -> JsonValue:
        raise TypeError(f"{self.name} is a streaming method")

    def open(self, data: Json, ctx: CallContext, runtime: Runtime) -> OpenedStream:
        """Validate ``data`` and prepare the event stream."""
        return OpenedStream(self.stream(self.parse(data), ctx, runtime), self.result_out)


def _to_wire_or_null(result: ProtoModel | None) -> JsonValue:
    return None if result is None else result.to_wire()


def _to_wire_or_empty(result: ProtoModel | None) -> Json:
    return {} if result is None else result.to_wire()


def _params(fields: Json, _: Mapping[str, str]) -> Json:
    return fields


def with_path_fields(fields: Json, path: Mapping[str, str]) -> Json:
    """The request message of a v1.0 REST call: body (or query) fields, with the fields bound in
    the path winning.

    A path field may also arrive in the body or the query under either ProtoJSON spelling
    (``task_id`` or ``taskId``, A2A specification, section 5.5 JSON Field Naming Convention), and the model would
    prefer the camelCase one, so both are dropped before the path value is set: ``POST /tasks/A/pushNotificationConfigs
    {"taskId": "B"}`` acts on task A (the path wins). The tenant comes from the
    ``/{tenant}`` prefix only (empty without one), as the call context does.
    """
    bound = {"tenant": "", **path}
    spellings = {*bound, *(to_camel(name) for name in bound)}  # the models' own alias generator
    return {**{k: v for k, v in fields.items() if k not in spellings}, **bound}


def _v1_row(method: Method[Req, W], request_in: RequestIn, route: RestRoute | None = None) -> Endpoint:
    """The v1.0 row of ``method``: its own request and result, ProtoJSON both ways (an empty
    result is ``null`` over JSON-RPC, ``{}`` over REST)."""
    media_type = JSON_MEDIA_TYPE if route is None else REST_MEDIA_TYPE
    if method.stream is not None:
        return StreamRow(
            name=method.name,
            method=method,
            version=ProtocolVersion.V1_0,
            request_in=request_in,
            stream=method.stream,
            result_out=_to_wire_or_null,
            route=route,
            media_type=media_type,
        )
    assert method.call is not None  # a method has exactly one of call and stream
    return Row(
        name=method.name,
        method=method,
        version=ProtocolVersion.V1_0,
        request_in=request_in,
        call=method.call,
        result_out=_to_wire_or_null if route is None else _to_wire_or_empty,
        route=route,
        media_type=media_type,
    )


def _v1_jsonrpc(method: Method[Req, W]) -> Endpoint:
    return _v1_row(method, _params)


def _v1_rest(route: RestRoute) -> Callable[[Method[Req, W]], Endpoint]:
    def row(method: Method[Req, W]) -> Endpoint:
        return _v1_row(method, with_path_fields, route)

    return row


V1_JSONRPC_ROWS: tuple[Endpoint, ...] = tuple(m.bind(_v1_jsonrpc) for m in METHODS)
V1_REST_ROWS: tuple[Endpoint, ...] = tuple(m.bind(_v1_rest(r)) for m in METHODS for r in m.routes)


# --------------------------------------------------------------------------- the protocol version

V1 = ProtocolVersion.V1_0
V03 = ProtocolVersion.V0_3
SUPPORTED_VERSIONS = ", ".join(SUPPORTED)
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$")


def negotiate_version(
    request: Request, serves: ProtocolVersion, *, what: str, lenient_missing: bool = False
) -> ProtocolVersion:
    """The protocol version of a request to an endpoint (or JSON-RPC method) that speaks ``serves``
    (A2A specification, section 3.6 Versioning), or ``VersionNotSupportedError``.

    ``A2A-Version`` comes from the header or the query parameter, ``Major.Minor`` with any patch
    ignored. Absent or blank means 0.3: a v0.3 endpoint takes it as such, and a v1.0 endpoint
    refuses it unless ``lenient_missing`` (for 1.0 clients that omit the header). ``1.x`` up to our
    minor is 1.0; ``0.3`` is 0.3; anything else, or a version this endpoint does not speak (the v1.0
    method names asked for with 0.3, the ``/v1`` paths of the 0.3 REST binding asked for with 1.0),
    is refused. ``what`` names the endpoint in the error message.
    """
    raw = _raw_version(request)
    if not raw:
        if serves == V03 or lenient_missing:
            return serves
        raise VersionNotSupportedError(
            f"{what} is part of A2A {serves}, and a request without A2A-Version is 0.3: send A2A-Version: {serves}",
            metadata={"supportedVersions": SUPPORTED_VERSIONS},
        )
    match = _VERSION.match(raw)
    asked = (int(match.group(1)), int(match.group(2))) if match else None
    version = V1 if asked is not None and asked[0] == 1 and asked[1] <= 0 else V03 if asked == (0, 3) else None
    if version is None:
        raise VersionNotSupportedError(
            f"Version {raw[:16]!r} is not supported; this agent serves {SUPPORTED_VERSIONS}",
            metadata={"supportedVersions": SUPPORTED_VERSIONS},
        )
    if version != serves:
        raise VersionNotSupportedError(
            f"{what} is part of A2A {serves}, not {version}", metadata={"supportedVersions": SUPPORTED_VERSIONS}
        )
    return version


def is_legacy_request(request: Request) -> bool:
    """Whether the caller speaks 0.3 by its ``A2A-Version`` (absent, or 0.x): the error format to
    use before the method is known."""
    raw = _raw_version(request)
    return not raw or raw.startswith("0.")


def asks_for_v1(request: Request) -> bool:
    """Whether ``A2A-Version`` asks for a 1.x this agent serves: then only v1.0 names exist."""
    match = _VERSION.match(_raw_version(request))
    return match is not None and int(match.group(1)) == 1 and int(match.group(2)) <= 0


def states_version(request: Request) -> bool:
    """Whether the caller sent ``A2A-Version`` at all: clients written before the header (0.3 era)
    never do; a 1.0-era client speaking 0.3 (a compat mode) says ``0.3``."""
    return bool(_raw_version(request))


def _raw_version(request: Request) -> str:
    return (request.headers.get("a2a-version") or request.query_params.get("A2A-Version") or "").strip()


# --------------------------------------------------------------------------- the invocation


@dataclass(frozen=True, slots=True)
class Framing:
    """How a binding frames what a row renders."""

    result: Callable[[JsonValue], JsonValue]
    """A result, or a streamed event's rendering -> the response body (or event data)."""
    stream_error: Callable[[A2AError], JsonValue]
    """An error after a stream's first event -> the ``error`` event's data."""


# The operations block (the store's calls; a blocking SendMessage waits for its task): each runs on a
# thread of this pool, as many at once as Starlette's run_in_threadpool allows (anyio's 40), in the
# caller's context (its log keys, its span). asyncio's executor, not Starlette's helper: that one
# loads anyio's event-loop backend at its first call (22 ms of CPU imported alone in the Lambda image;
# about 10 of an API function's first call, bench/README.md), which a function that opens no stream
# never needs otherwise.
_OPERATIONS = ThreadPoolExecutor(max_workers=40, thread_name_prefix="a2a-operation")


async def _off_loop(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``call(*args, **kwargs)`` on a thread of the operations' pool, with a copy of the current context."""
    context = contextvars.copy_context()
    bound = functools.partial(context.run, call, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_OPERATIONS, bound)


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
            opened = await _off_loop(row.open, data, ctx, runtime)
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
        body = await _off_loop(row.answer, data, ctx, runtime)
        call.result(body)
        return JSONResponse(framing.result(body), media_type=row.media_type)
