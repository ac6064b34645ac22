"""The call context every operation receives, and scope resolution."""

from __future__ import annotations

from dataclasses import dataclass

from ..auth import Principal
from ..errors import FieldViolation, InvalidParamsError, TaskNotFoundError
from ..ports import Scope
from ..runtime import Runtime
from ..versions import CURRENT, ProtocolVersion

__all__ = [
    "IDEMPOTENCY_KEY_HEADER",
    "MAX_ID_LENGTH",
    "RESERVED_TENANT",
    "CallContext",
    "check_id_length",
    "check_task_id",
    "id_too_long",
    "resolve_scope",
]

MAX_ID_LENGTH = 256
"""Ids (task, context, message, config, tenant) longer than this many bytes (UTF-8) are refused:
they are parts of DynamoDB keys, which are limited in bytes (partition keys 2048, sort keys 1024),
and go in percent-encoded, up to three times as long; no id this server issues comes close. Bytes,
not characters: 256 emoji would be a 3 KB key."""


def id_too_long(value: str) -> bool:
    return len(value.encode("utf-8", "surrogatepass")) > MAX_ID_LENGTH


def check_id_length(field: str, value: str) -> None:
    """InvalidParams naming ``field`` when ``value`` is longer than an id may be."""
    if id_too_long(value):
        raise InvalidParamsError(violations=[FieldViolation(field, f"must be at most {MAX_ID_LENGTH} bytes (UTF-8)")])


IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
"""The request header that keys a SendMessage instead of its messageId (:mod:`.send_message`, its send keys): 1 to
:data:`MAX_ID_LENGTH` printable ASCII characters, since it is part of a DynamoDB key as an id is."""


RESERVED_TENANT = "v1"
"""Not a tenant: ``/v1/...`` is the v0.3 REST binding, so ``/v1/message:send`` must never be read
as SendMessage for a tenant called ``v1``."""


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who calls, for which tenant, with which protocol version, seen from which base URL, resuming
    which stream, under which idempotency key."""

    principal: Principal
    tenant: str = ""
    version: ProtocolVersion = CURRENT
    extensions: tuple[str, ...] = ()
    base_url: str = ""
    """The agent's public base URL, as its cards name it; empty when the cards are signed and no
    URL is known that the request's ``Host`` did not choose (:func:`..transport._http.base_url`)."""
    last_event_id: int | None = None
    """A stream's ``Last-Event-ID``: the sequence number of the last event the caller received,
    when it resumes a stream (only streaming methods read it)."""
    idempotency_key: str | None = None
    """The ``Idempotency-Key`` request header as sent, None without one (only SendMessage and
    SendStreamingMessage read it)."""


def resolve_scope(ctx: CallContext, runtime: Runtime, *, creating: bool = False, task_id: str = "") -> Scope:
    """The store scope of this call. An unknown tenant looks like a missing task (A2A specification, section 13.1 Data
    Access and Authorization Scoping), or is invalid params when the call would create one."""
    tenant = ctx.tenant
    allowed = runtime.settings.tenants
    if "/" in tenant or id_too_long(tenant) or tenant == RESERVED_TENANT or (allowed and tenant not in allowed):
        if creating:
            raise InvalidParamsError("Unknown tenant")
        raise TaskNotFoundError()
    check_task_id(task_id)
    return Scope(tenant=tenant, owner=ctx.principal.name)


def check_task_id(task_id: str) -> None:
    """An id longer than any we issue names no task."""
    if id_too_long(task_id):
        raise TaskNotFoundError()
