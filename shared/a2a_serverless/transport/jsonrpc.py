"""The JSON-RPC 2.0 binding: ``POST /`` (spec 9, digest 1.2), for v1.0 and v0.3 method names
(digest 7.3: the names are disjoint, so the name picks the version; :mod:`.v03` maps them).

Errors are JSON-RPC error objects with HTTP 200, except authentication failures, which are
refused at the HTTP layer with 401. Unexpected failures are logged with the request id and answered
with a generic -32603: no exception text ever reaches the caller.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Collection
from functools import partial
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    UnauthenticatedError,
)
from ..methods import METHODS_BY_NAME
from ..models import ProtoModel
from ..runtime import Runtime
from . import v03 as v03_methods
from ._http import (
    V03,
    V1,
    asks_for_v1,
    call_context,
    is_legacy_request,
    negotiate_version,
    read_json,
    request_id,
    states_version,
)
from ._render import jsonrpc_error
from .sse import last_event_id, sse_error_response, sse_response

__all__ = ["error_response", "handle_jsonrpc"]

logger = logging.getLogger(__name__)


async def handle_jsonrpc(request: Request, runtime: Runtime, allowed: Collection[str] | None = None) -> Response:
    """Serve one JSON-RPC request, v1.0 or v0.3 by its method name. ``allowed`` limits the
    (v1.0) methods served (per-method Lambda functions)."""
    rpc_id: str | int | None = None
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
        v03 = v03_methods.JSONRPC_METHODS.get(name)
        if v03 is not None and asks_for_v1(request):  # v1.0 has no method of that name
            legacy = False
            raise MethodNotFoundError(f"Method not found: {name} (a v0.3 method; in A2A 1.0 it is {v03.target})")
        legacy = v03 is not None or (legacy and name not in METHODS_BY_NAME)
        method = METHODS_BY_NAME.get(v03.target if v03 is not None else name)
        if method is None or (allowed is not None and method.name not in allowed):
            raise MethodNotFoundError(f"Method not found: {name[:64]}")
        # A 0.3-era client (no A2A-Version, as the reference 0.3 server expects) types a stream's
        # errors only as its events; 1.0-era clients, their 0.3 modes included (A2A-Version: 0.3,
        # e.g. @a2a-js/sdk), type the plain JSON answer of digest 4.1 and not an error event.
        errors_as_events = v03 is not None and method.streaming and not states_version(request)
        version = negotiate_version(
            request,
            V03 if v03 is not None else V1,
            what=f"The method {name}",
            lenient_missing=runtime.settings.lenient_missing_version,
        )
        params = payload.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise InvalidParamsError("params must be a JSON object")
        data = v03.params_in(params) if v03 is not None else params
        try:
            parsed = method.request.model_validate(data)
        except ValidationError as exc:
            raise InvalidParamsError.from_validation(exc) from None
        tenant = str(data.get("tenant") or "")
        ctx = call_context(request, runtime, tenant=tenant, version=version)
        render: Callable[[Any], Any] = v03.result_out if v03 is not None else _to_wire
        if method.streaming:
            stream = await run_in_threadpool(
                partial(method.operation, parsed, ctx, runtime, last_event_id=last_event_id(request))
            )
            answer_id, as_legacy = rpc_id, legacy
            return sse_response(
                stream,
                lambda event: {"jsonrpc": "2.0", "id": answer_id, "result": render(event)},
                lambda error: jsonrpc_error(error, answer_id, legacy=as_legacy),
                ping_seconds=runtime.settings.stream_ping_seconds,
                request_id=request_id(request),
            )
        operation = v03.operation if v03 is not None and v03.operation is not None else method.operation
        result = await run_in_threadpool(operation, parsed, ctx, runtime)
        return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "result": render(result)})
    except A2AError as exc:
        if errors_as_events and not isinstance(exc, UnauthenticatedError):
            with contextlib.suppress(Exception):  # not encodable: the plain answer's fallbacks
                return sse_error_response(jsonrpc_error(exc, rpc_id, legacy=True))
        return error_response(request, exc, rpc_id, legacy=legacy)
    except Exception:
        rid = request_id(request)
        logger.exception("unexpected error in JSON-RPC handler", extra={"request_id": rid})
        return error_response(
            request, InternalError(metadata={"requestId": rid} if rid else None), rpc_id, legacy=legacy
        )


def _to_wire(result: ProtoModel | None) -> Any:
    return None if result is None else result.to_wire()


def error_response(request: Request, error: A2AError, rpc_id: str | int | None, *, legacy: bool = False) -> Response:
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
        rid = request_id(request)
        logger.exception("could not render a JSON-RPC error", extra={"request_id": rid})
        try:
            return JSONResponse(jsonrpc_error(InternalError(metadata={"requestId": rid} if rid else None), rpc_id))
        except Exception:  # the id itself is not encodable
            return JSONResponse(jsonrpc_error(InternalError(), None))
