"""The one place each binding turns an ``A2AError`` into a response body (A2A specification, sections 9.5 and 11.6
Error Handling)."""

from __future__ import annotations

import logging
import uuid

from ..errors import (
    ERROR_DOMAIN,
    A2AError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..json_types import Json, JsonValue
from ..models import format_timestamp, utc_now

__all__ = [
    "V03_REST_STATUS",
    "error_details",
    "internal_error",
    "jsonrpc_error",
    "rest_error",
    "v03_rest_error",
    "v03_rest_status",
]

logger = logging.getLogger(__name__)

JSONRPC_ID = str | int | None


def internal_error(request_id: str, what: str, *, method: str = "", traceback: bool = True) -> InternalError:
    """The answer to a failure that is not an A2A error: ``what`` happened is logged with the
    request id and method (and the traceback of the exception being handled, unless ``what``
    already says all there is), and the caller gets a generic internal error carrying only the
    request id, never the exception's text. Every binding, the SSE framing and the app's last
    resort build it here. A request that came with no id (none from API Gateway, no
    ``X-Request-Id``: the local stack, a test) gets one here, so the caller's error and the log
    line can still be matched."""
    request_id = request_id or str(uuid.uuid4())
    extra = {"request_id": request_id, **({"method": method} if method else {})}
    logger.error(what, exc_info=True if traceback else None, extra=extra)
    return InternalError(metadata={"requestId": request_id})


def error_details(error: A2AError) -> list[Json]:
    """``google.rpc.ErrorInfo`` first (string metadata only), then ``BadRequest`` if any."""
    metadata = {k: str(v) for k, v in error.metadata.items()}
    metadata.setdefault("timestamp", format_timestamp(utc_now()))
    details: list[Json] = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": error.reason,
            "domain": ERROR_DOMAIN,
            "metadata": metadata,
        }
    ]
    if error.violations:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": v.field, "description": v.description} for v in error.violations],
            }
        )
    return details


def jsonrpc_error(error: A2AError, request_id: JSONRPC_ID, *, legacy: bool = False) -> Json:
    """The JSON-RPC error response. v1.0 puts the typed details in ``data``; v0.3 (``legacy``) left
    ``data`` free-form, so it gets one plain object with the same facts (reason, metadata, field
    violations). The codes are the same in both versions (-32001..-32007 kept their meaning; 1.0
    added -32008 and -32009, which a 0.3 client reads as just an error code)."""
    data: JsonValue = _legacy_data(error) if legacy else error_details(error)
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": error.jsonrpc_code, "message": error.message, "data": data},
    }


def _legacy_data(error: A2AError) -> Json:
    data: Json = {"reason": error.reason, "domain": ERROR_DOMAIN}
    if error.metadata:
        data["metadata"] = {k: str(v) for k, v in error.metadata.items()}
    if error.violations:
        data["fieldViolations"] = [{"field": v.field, "description": v.description} for v in error.violations]
    return data


def rest_error(error: A2AError) -> Json:
    return {
        "error": {
            "code": error.http_status,
            "status": error.grpc_status,
            "message": error.message,
            "details": error_details(error),
        }
    }


# --------------------------------------------------------------------------- v0.3 REST (/v1)

V03_REST_STATUS: dict[type[A2AError], int] = {
    JSONParseError: 400,
    InvalidRequestError: 400,
    MethodNotFoundError: 404,
    InvalidParamsError: 422,
    InternalError: 500,
    TaskNotFoundError: 404,
    TaskNotCancelableError: 409,
    PushNotificationNotSupportedError: 501,
    UnsupportedOperationError: 501,
    ContentTypeNotSupportedError: 415,
    InvalidAgentResponseError: 502,
    ExtendedAgentCardNotConfiguredError: 404,
}
"""The HTTP status of each error on the v0.3 REST binding: the reference 0.3 server's table
(a2a-sdk 0.3.26, ``a2a.utils.error_handlers.A2AErrorToHttpStatus``). The 0.3 Python REST client
types an error by this status alone. Errors that table does not know (413, 401, 503, and the
codes 1.0 added) keep their own status."""


def v03_rest_status(error: A2AError) -> int:
    return V03_REST_STATUS.get(type(error), error.http_status)


def v03_rest_error(error: A2AError) -> Json:
    """The error body of the v0.3 REST binding: ``{code, message, data}``, the JSON-RPC error
    object at the top level. ``@a2a-js/sdk``'s v0.3 REST client types an error by ``code`` (the
    JSON-RPC code: -32001 is TaskNotFoundError...) when ``code`` is a number and ``message`` a
    string, in a response body and in an SSE ``error`` event; the reference 0.3 server sends
    ``{message}`` and its Python client reads only the status. ``data`` is the v0.3 JSON-RPC
    ``data`` (reason, domain, metadata, field violations)."""
    return {"code": error.jsonrpc_code, "message": error.message, "data": _legacy_data(error)}
