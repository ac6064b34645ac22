"""The push receiver of durable delegation: where a remote agent's push notifications wake the
task that delegated to it (``POST /_a2a/delegations/{ref}``).

In durable mode :func:`~a2a_serverless.delegation.delegate` sends its message with a push config
(A2A specification, section 4.3.3: ``TaskPushNotificationConfig``) whose URL names our task
(:func:`hook_url`) and whose token is a fresh secret. The task's head keeps only that token's
SHA-256 (``waiting_token``) beside the callback its durable execution waits on. A push is
verified by its token (the ``X-A2A-Notification-Token`` header, section 4.3.3, or ``Authorization:
Bearer``), compared in constant time with the digest: a push without the token wakes nothing.

A verified push is only a doorbell: it resumes the wait, and the execution then reads the remote's
task itself (GetTask, with our credentials) before it believes anything. So a push that says the
task ended wakes the wait; one that says it still works (an artifact chunk, a WORKING update) is
acknowledged and wakes nothing; one we cannot read wakes it (the read decides).

The reference names the task's scope (tenant and owner: the store is keyed by them) and id, in
base64url. It is given only to the agent delegated to, with the message it is asked to work on.
The route is public (no authorizer), so a reference is read as hostile input: one longer than
:data:`MAX_REF_CHARS`, not base64url, not UTF-8 JSON, nested, of another shape, or naming what the
store cannot hold is answered 404 with one INFO line, never an error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..auth import bearer_token
from ..json_types import JsonValue
from ..ports import Scope
from ..push import TOKEN_HEADER

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["HOOK_PATH", "MAX_PEEK_BYTES", "MAX_REF_CHARS", "HookAnswer", "hook_url", "token_digest", "wake"]

logger = logging.getLogger(__name__)

HOOK_PATH = "/_a2a/delegations/{ref}"
MAX_PEEK_BYTES = 1 << 20
"""A push body larger than this is not read: it wakes the wait (the execution reads the task)."""
MAX_REF_CHARS = 2048
"""The longest reference read. Its fields become the task's key (``TASK#<tenant>#<owner>#<taskId>``,
at most 2,048 bytes in DynamoDB): a reference this long decodes to at most 1,536 bytes."""

_STILL_WORKING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "submitted", "working"})


@dataclass(frozen=True, slots=True)
class HookAnswer:
    status: int
    reason: str
    """Fixed words for the answer's body (never a stored value)."""


def hook_url(base: str, scope: Scope, task_id: str) -> str:
    """The URL a remote's pushes about our task ``task_id`` go to, below our public ``base``."""
    raw = json.dumps([scope.tenant, scope.owner, task_id], separators=(",", ":")).encode()
    ref = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return base.rstrip("/") + HOOK_PATH.format(ref=ref)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def wake(runtime: Runtime, ref: str, headers: Mapping[str, str], body: bytes) -> HookAnswer:
    """Resume the delegation wait ``ref`` names, if ``headers`` carry its token and ``body`` may say
    its remote task ended. ``headers`` must be case-insensitive (Starlette's are)."""
    token = headers.get(TOKEN_HEADER) or bearer_token(headers)
    located = _scope_of(ref)
    if located is None:
        return HookAnswer(404, "no such delegation")
    scope, task_id = located
    head = runtime.store.get_head(scope, task_id)
    if head is None or not head.waiting_token or runtime.durable is None:
        return HookAnswer(404, "no delegation of this task waits")
    if not token or not hmac.compare_digest(token_digest(token), head.waiting_token):
        logger.warning("a push to a delegation carried a wrong token", extra={"task_id": task_id})
        return HookAnswer(401, "the push does not carry the token it was given")
    if _still_working(body) or not head.waiting_callback:
        # Nothing to wake: the task still works, or no wait is open (not yet: the read after the
        # wait opens sees what the push announced; or no more: our run is over).
        return HookAnswer(200, "noted")
    runtime.durable.resume(head.waiting_callback, json.dumps({"push": True}))
    return HookAnswer(200, "woken")


def _scope_of(ref: str) -> tuple[Scope, str] | None:
    """The scope and task id ``ref`` names, or None (logged once, at INFO) if it names none: it is
    read whatever it holds, without raising."""
    fields = _decoded(ref)
    if not (
        isinstance(fields, list)
        and len(fields) == 3
        and all(isinstance(f, str) and _storable(f) for f in fields)
        and fields[1]
        and fields[2]
    ):
        logger.info("a push to a delegation named no valid reference (%d characters); not found", len(ref))
        return None
    tenant, owner, task_id = fields
    return Scope(tenant, owner), task_id


def _decoded(ref: str) -> JsonValue:
    """The JSON ``ref`` encodes in base64url, or None. Only a JSON array of strings can be a
    reference, so anything else is refused before it is parsed (a deeply nested array would exhaust
    the parser's recursion), and whatever the parse still raises is caught."""
    if len(ref) > MAX_REF_CHARS or not ref.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(ref + "=" * (-len(ref) % 4))
        if not raw.startswith(b'["'):
            return None
        value: JsonValue = json.loads(raw.decode("utf-8"))
    except (ValueError, TypeError, RecursionError, binascii.Error):  # UnicodeDecodeError is a ValueError
        return None
    return value


def _storable(field: str) -> bool:
    """``field`` can be part of a store key: UTF-8 (JSON's escapes can name lone surrogates)."""
    try:
        field.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _still_working(body: bytes) -> bool:
    """The push says its task still works (v1.0 StreamResponse or Task, or v0.3 Task or event)."""
    if len(body) > MAX_PEEK_BYTES:
        return False
    try:
        data: JsonValue = json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return False
    if not isinstance(data, dict):
        return False
    if "artifactUpdate" in data or data.get("kind") == "artifact-update":
        return True
    for holder in (data.get("task"), data.get("statusUpdate"), data):
        if isinstance(holder, dict) and isinstance(holder.get("status"), dict):
            return holder["status"].get("state") in _STILL_WORKING
    return False
