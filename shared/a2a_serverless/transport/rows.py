"""The binding table: one row per way of calling a method (a JSON-RPC method name, or a REST
route), in either protocol version.

A row says which method of :mod:`a2a_serverless.methods` it calls and how its wire shapes
convert: ``request_in`` turns what the caller sent into the v1.0 request message's ProtoJSON, the
method's operation runs (or, where v0.3 semantics differ, the row's own), and ``result_out`` turns
the result, or each streamed event, into the caller's JSON. The v1.0 rows are derived from the
method table here; the v0.3 rows (:mod:`.v03`) are the same kind of row with their own names,
converters and renderers. :func:`.invoke.invoke` runs any row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from ..errors import InvalidParamsError
from ..json_types import Json, JsonValue
from ..methods import METHODS, Method, MethodInfo, Operation, RestRoute
from ..models import ProtoModel, StreamResponse
from ..operations import CallContext, EventStream
from ..runtime import Runtime
from ..versions import ProtocolVersion

__all__ = [
    "JSON_MEDIA_TYPE",
    "REST_MEDIA_TYPE",
    "V1_JSONRPC_ROWS",
    "V1_REST_ROWS",
    "Endpoint",
    "OpenedStream",
    "RequestIn",
    "Row",
    "StreamRow",
]

Req = TypeVar("Req", bound=ProtoModel)
Res = TypeVar("Res")
W = TypeVar("W", bound=ProtoModel | None)

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
