"""One error hierarchy for the whole kit (A2A specification, section 3.3.2 Error Handling).

Each class carries its transport mapping as data: JSON-RPC code, HTTP status, gRPC status name and
the ``google.rpc.ErrorInfo`` reason. Transports render errors in exactly one place each
(``transport/_render.py``); nothing else turns an exception into a response. Messages are safe to
show to callers: never build one from an unexpected exception's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

__all__ = [
    "ERROR_DOMAIN",
    "A2AError",
    "ContentTypeNotSupportedError",
    "ContentUnavailableError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "FieldViolation",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "MethodNotFoundError",
    "PayloadTooLargeError",
    "PushNotificationNotSupportedError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnsupportedMediaTypeError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
]

ERROR_DOMAIN = "a2a-protocol.org"


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One ``google.rpc.BadRequest.FieldViolation``: a camelCase field path and what is wrong."""

    field: str
    description: str


class A2AError(Exception):
    """Base of every error a caller may see. Subclasses set the mapping class attributes."""

    jsonrpc_code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    grpc_status: ClassVar[str] = "INTERNAL"
    reason: ClassVar[str] = "INTERNAL_ERROR"
    default_message: ClassVar[str] = "Internal error"

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: dict[str, str] | None = None,
        violations: list[FieldViolation] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.metadata = dict(metadata or {})
        self.violations = list(violations or [])
        self.headers = dict(headers or {})
        super().__init__(self.message)


class JSONParseError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32700, 400, "INVALID_ARGUMENT"
    reason, default_message = "INVALID_REQUEST", "Invalid JSON payload"


class InvalidRequestError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32600, 400, "INVALID_ARGUMENT"
    reason, default_message = "INVALID_REQUEST", "Request payload validation error"


class PayloadTooLargeError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32600, 413, "INVALID_ARGUMENT"
    reason, default_message = "PAYLOAD_TOO_LARGE", "Request payload too large"


class MethodNotFoundError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32601, 404, "NOT_FOUND"
    reason, default_message = "METHOD_NOT_FOUND", "Method not found"


class InvalidParamsError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32602, 400, "INVALID_ARGUMENT"
    reason, default_message = "INVALID_PARAMS", "Invalid parameters"

    @classmethod
    def from_validation(cls, exc: ValidationError, *, prefix: str = "") -> InvalidParamsError:
        """Translate pydantic's errors into BadRequest field violations (camelCase paths)."""
        violations = [
            FieldViolation(field=_field_path(prefix, err["loc"]), description=_describe(err))
            for err in exc.errors(include_url=False, include_input=False)
        ]
        return cls(violations=violations)


class InternalError(A2AError):
    """Unexpected failure. The message is always generic; details go to the log only."""


class ContentUnavailableError(A2AError):
    """A part of the task kept in the object store could not be read (an S3 outage): nothing is
    lost, the request can be retried."""

    jsonrpc_code, http_status, grpc_status = -32603, 503, "UNAVAILABLE"
    reason = "CONTENT_UNAVAILABLE"
    default_message = "A stored part of this task cannot be read right now; try again"


class UnauthenticatedError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32600, 401, "UNAUTHENTICATED"
    reason, default_message = "UNAUTHENTICATED", "Authentication required"


class TaskNotFoundError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32001, 404, "NOT_FOUND"
    reason, default_message = "TASK_NOT_FOUND", "Task not found"


class TaskNotCancelableError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32002, 400, "FAILED_PRECONDITION"
    reason, default_message = "TASK_NOT_CANCELABLE", "Task cannot be canceled"


class PushNotificationNotSupportedError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32003, 400, "FAILED_PRECONDITION"
    reason, default_message = "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported"


class UnsupportedOperationError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32004, 400, "FAILED_PRECONDITION"
    reason, default_message = "UNSUPPORTED_OPERATION", "This operation is not supported"


class ContentTypeNotSupportedError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32005, 400, "INVALID_ARGUMENT"
    reason, default_message = "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types"


class UnsupportedMediaTypeError(ContentTypeNotSupportedError):
    """The request body is not declared JSON (its ``Content-Type``): ContentTypeNotSupportedError
    (-32005, CONTENT_TYPE_NOT_SUPPORTED) with HTTP's own status for it, 415 (RFC 9110 section
    15.5.16), where the spec's 400 is for a part's media type the agent does not take."""

    http_status = 415


class InvalidAgentResponseError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32006, 500, "INTERNAL"
    reason, default_message = "INVALID_AGENT_RESPONSE", "Invalid agent response"


class ExtendedAgentCardNotConfiguredError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32007, 400, "FAILED_PRECONDITION"
    reason, default_message = "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Authenticated Extended Card is not configured"


class ExtensionSupportRequiredError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32008, 400, "FAILED_PRECONDITION"
    reason, default_message = "EXTENSION_SUPPORT_REQUIRED", "Extension support required"


class VersionNotSupportedError(A2AError):
    jsonrpc_code, http_status, grpc_status = -32009, 400, "FAILED_PRECONDITION"
    reason, default_message = "VERSION_NOT_SUPPORTED", "Version not supported"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    out = prefix
    for item in loc:
        if isinstance(item, int):
            out += f"[{item}]"
        else:
            out += ("." if out else "") + _camel(str(item))
    return out or "(body)"


def _describe(err: ErrorDetails) -> str:
    return err["msg"].removeprefix("Value error, ")
