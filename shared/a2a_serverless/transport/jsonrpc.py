"""The JSON-RPC 2.0 binding: ``POST /`` (A2A specification, section 9 JSON-RPC Protocol Binding), for v1.0 and v0.3
method names (the v0.3 and v1.0 names are disjoint, so the name picks the version; :mod:`.v03` maps them). The
body must be declared JSON (``_http.read_json_body``), whatever the version.

Errors are JSON-RPC error objects with HTTP 200, except authentication failures, which are
refused at the HTTP layer with 401. Unexpected failures are logged with the request id and answered
with a generic -32603: no exception text ever reaches the caller.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import (
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    UnauthenticatedError,
)
from ..json_types import Json
from ..runtime import Runtime
from ..versions import ProtocolVersion
from ._http import read_json, request_id
from ._render import internal_error, jsonrpc_error
from .rows import V1_JSONRPC_ROWS, Endpoint, Framing, asks_for_v1, invoke, is_legacy_request, states_version
from .sse import sse_error_response
from .v03 import JSONRPC_ROWS as V03_JSONRPC_ROWS

__all__ = ["JSONRPC_ROWS", "error_response", "handle_jsonrpc"]

JSONRPC_ROWS: dict[str, Endpoint] = {row.name: row for row in (*V1_JSONRPC_ROWS, *V03_JSONRPC_ROWS)}
"""Every JSON-RPC method by name: v1.0 (``SendMessage``) and v0.3 (``message/send``) names are
disjoint, so the name picks the row and with it the version."""

RpcId = str | int | None


async def handle_jsonrpc(request: Request, runtime: Runtime, allowed: Collection[str] | None = None) -> Response:
    """Serve one JSON-RPC request, v1.0 or v0.3 by its method name. ``allowed`` limits the
    (v1.0) methods served (per-method Lambda functions)."""
    rpc_id: RpcId = None
    legacy = is_legacy_request(request)  # the error format until the method is known
    errors_as_events = False  # a v0.3 streaming method: its errors are answered as a stream's event
    try:
        payload = await read_json(request, runtime.settings.max_body_bytes)
        if isinstance(payload, list):
            raise InvalidRequestError("Batch requests are not supported")
        if not isinstance(payload, dict):
            raise InvalidRequestError("The request must be a JSON object")
        raw_id = payload.get("id")
        if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool):
            rpc_id = raw_id
        elif raw_id is not None or "id" not in payload:
            raise InvalidRequestError("id must be a string or an integer")
        if payload.get("jsonrpc") != "2.0":
            raise InvalidRequestError('jsonrpc must be exactly "2.0"')
        name = payload.get("method")
        if not isinstance(name, str):
            raise InvalidRequestError("method must be a string")
        row = JSONRPC_ROWS.get(name)
        is_v03 = row is not None and row.version == ProtocolVersion.V0_3
        if row is not None and is_v03 and asks_for_v1(request):  # v1.0 has no method of that name
            legacy = False
            raise MethodNotFoundError(f"Method not found: {name} (a v0.3 method; in A2A 1.0 it is {row.method.name})")
        legacy = is_v03 or (legacy and row is None)
        if row is None or (allowed is not None and row.method.name not in allowed):
            raise MethodNotFoundError(f"Method not found: {name[:64]}")
        # A 0.3-era client (no A2A-Version, as the reference 0.3 server expects) types a stream's
        # errors only as its events; 1.0-era clients, their 0.3 modes included (A2A-Version: 0.3,
        # e.g. @a2a-js/sdk), type an error found before the first event as a plain JSON answer, not an event.
        errors_as_events = is_v03 and row.streaming and not states_version(request)
        params = payload.get("params", {})

        async def fields() -> Json:
            if params is None:
                return {}
            if not isinstance(params, dict):
                raise InvalidParamsError("params must be a JSON object")
            return params

        answer_id, as_legacy = rpc_id, legacy
        framing = Framing(
            result=lambda result: {"jsonrpc": "2.0", "id": answer_id, "result": result},
            stream_error=lambda error: jsonrpc_error(error, answer_id, legacy=as_legacy),
        )
        return await invoke(
            row, request, runtime, what=f"The method {name}", fields=fields, path={}, tenant=None, framing=framing
        )
    except A2AError as exc:
        if errors_as_events and not isinstance(exc, UnauthenticatedError):
            with contextlib.suppress(Exception):  # not encodable: the plain answer's fallbacks
                return sse_error_response(jsonrpc_error(exc, rpc_id, legacy=True))
        return error_response(request, exc, rpc_id, legacy=legacy)
    except Exception:
        error = internal_error(request_id(request), "unexpected error in JSON-RPC handler")
        return error_response(request, error, rpc_id, legacy=legacy)


def error_response(request: Request, error: A2AError, rpc_id: RpcId, *, legacy: bool = False) -> Response:
    """A JSON-RPC error response: HTTP 200, except authentication failures (401 with
    ``WWW-Authenticate``).

    It never raises: if the error cannot be rendered (a message, metadata value or id that is not
    encodable as UTF-8), the answer is a generic -32603, with the id when it can be echoed and null
    otherwise. An exception escaping from here would reach the app's last-resort handler instead,
    and a JSON-RPC caller must always get a JSON-RPC error.
    """
    status = error.http_status if isinstance(error, UnauthenticatedError) else 200
    try:
        return JSONResponse(
            jsonrpc_error(error, rpc_id, legacy=legacy), status_code=status, headers=error.headers or None
        )
    except Exception:
        internal = internal_error(request_id(request), "could not render a JSON-RPC error")
        try:
            return JSONResponse(jsonrpc_error(internal, rpc_id))
        except Exception:  # the id itself is not encodable
            return JSONResponse(jsonrpc_error(internal, None))
