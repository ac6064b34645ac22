"""The push receiver of durable delegation: where a remote agent's push notifications wake the
task that delegated to it (``POST /_a2a/delegations/{ref}``).

In durable mode :func:`~a2a_serverless.delegation.delegate` sends its message with a push config
(A2A specification, section 4.3.3: ``TaskPushNotificationConfig``) whose URL ends in a fresh
reference (:func:`new_ref`: 256 random bits, base64url) and whose token is a fresh secret. The
reference is opaque: it says nothing of our tenant, owner or task. The store keeps what it stands
for (:class:`~a2a_serverless.ports.DelegationRef`: the task, its scope and the token's SHA-256) until
the delegation ends (or its TTL); the task's head keeps the token's digest too (``waiting_token``)
beside the callback its durable execution waits on.

A push is verified by its token (the ``X-A2A-Notification-Token`` header, section 4.3.3, or
``Authorization: Bearer``), compared in constant time with the digest the reference stands for.
The answers tell a caller without the token nothing: an unknown reference, a missing token and a
wrong one are all ``404 no such delegation`` (a reference not of the shape :func:`new_ref` makes is
refused before any read, with one INFO line; a wrong token on a known reference logs one WARNING).
Only a push with the token is answered 200: ``noted`` or ``woken``.

A verified push is only a doorbell: it resumes the wait, and the execution then reads the remote's
task itself (GetTask, with our credentials) before it believes anything. So a push that says the
task still works (an artifact chunk, a SUBMITTED or WORKING update) is noted and wakes nothing: a
delegation waits only while the remote task works, so only another state is news. Any other push
announces a state (:func:`announced_state`: one that ended, or ``unreadable`` for a body we cannot
read, over :data:`MAX_PEEK_BYTES`, or of no known shape), and wakes the wait only if no push
announcing that state woke this delegation before: the head records the states that woke it
(``push_woken``), and the wake is the conditional write that adds one
(:func:`~a2a_serverless.transitions.wake_by_push`), so replays of a push, or pushes announcing what
already woke it, are noted (one read of the head) and cost no invocation. A delegation is woken by
pushes at most once per distinct state (seven: the six states a delegation ends on, and
``unreadable``); what a push announced and the read did not confirm is read again at the next poll
(``PUSH_RECHECK_SECONDS``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..auth import bearer_token
from ..errors import TaskNotFoundError
from ..json_types import JsonValue
from ..models import TaskState
from ..mutation import mutate
from ..push import TOKEN_HEADER
from ..transitions import push_wakes, wake_by_push
from ..v03.json_shapes import v1_state

if TYPE_CHECKING:
    from ..ports import DelegationRef
    from ..runtime import Runtime

__all__ = [
    "HOOK_PATH",
    "MAX_PEEK_BYTES",
    "UNREADABLE",
    "HookAnswer",
    "announced_state",
    "hook_url",
    "new_ref",
    "token_digest",
    "wake",
]

logger = logging.getLogger(__name__)

HOOK_PATH = "/_a2a/delegations/{ref}"
MAX_PEEK_BYTES = 1 << 20
"""A push body larger than this is not read: it announces :data:`UNREADABLE`."""
UNREADABLE = "unreadable"
"""What a push announces whose body we cannot read (too large, not JSON, of no known shape)."""

_REF = re.compile(r"[A-Za-z0-9_-]{43}")
"""The shape :func:`new_ref` makes (32 bytes, base64url without padding)."""
_NO_DIGEST = hashlib.sha256(b"no delegation").hexdigest()
"""Compared with when the reference is unknown, so that answer takes the time a wrong token does."""

_V1_STATES = frozenset(state.value for state in TaskState) - {TaskState.TASK_STATE_UNSPECIFIED.value}
_STILL_WORKING = frozenset({"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"})


@dataclass(frozen=True, slots=True)
class HookAnswer:
    status: int
    reason: str
    """Fixed words for the answer's body (never a stored value)."""


_NOT_FOUND = HookAnswer(404, "no such delegation")


def new_ref() -> str:
    """A fresh reference for a delegation's push receiver: random, naming nothing."""
    return secrets.token_urlsafe(32)


def hook_url(base: str, ref: str) -> str:
    """The URL a remote's pushes for the delegation ``ref`` go to, below our public ``base``."""
    return base.rstrip("/") + HOOK_PATH.format(ref=ref)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def wake(runtime: Runtime, ref: str, headers: Mapping[str, str], body: bytes) -> HookAnswer:
    """Resume the delegation wait ``ref`` stands for, if ``headers`` carry its token and ``body``
    announces a state that has not woken it yet. ``headers`` must be case-insensitive (Starlette's are)."""
    if runtime.durable is None or not _REF.fullmatch(ref):
        logger.info("a push to a delegation named no valid reference (%d characters); not found", len(ref))
        return _NOT_FOUND
    token = headers.get(TOKEN_HEADER) or bearer_token(headers) or ""
    found = runtime.store.find_delegation_ref(ref)
    verified = hmac.compare_digest(token_digest(token), found.token_digest if found else _NO_DIGEST)
    if found is None:
        logger.info("a push named a delegation reference that stands for nothing (ended, or never made)")
        return _NOT_FOUND
    if not (token and verified):
        logger.warning("a push to a delegation carried a wrong token or none", extra={"task_id": found.task_id})
        return _NOT_FOUND
    state = announced_state(body)
    if state is None:
        return HookAnswer(200, "noted")
    callback = _woken(runtime, found, state)
    if not callback:
        # No wait open (not yet: the read after the wait opens sees what the push announced; or no
        # more: our run is over), or a push announcing this state woke it already.
        return HookAnswer(200, "noted")
    runtime.durable.resume(callback, json.dumps({"push": True}))
    return HookAnswer(200, "woken")


def _woken(runtime: Runtime, found: DelegationRef, state: str) -> str:
    """The callback a push announcing ``state`` resumes, its state recorded on the head in the same
    conditional write ('' if none: :func:`~a2a_serverless.transitions.wake_by_push`). The head alone
    is read first: a push that wakes nothing (a replay) reads one small item and writes nothing."""
    head = runtime.store.get_head(found.scope, found.task_id)
    if head is None or not push_wakes(head, token_digest=found.token_digest, state=state):
        return ""
    rule = partial(wake_by_push, token_digest=found.token_digest, state=state)
    try:
        return mutate(runtime.store, found.scope, found.task_id, rule).result
    except TaskNotFoundError:  # gone meanwhile (its TTL)
        return ""


def announced_state(body: bytes) -> str | None:
    """The remote task's state a push announces (v1.0 StreamResponse or Task, or v0.3 Task or
    event), as a v1.0 state name; None when it says the task still works; :data:`UNREADABLE` when
    it cannot be read. Never raises."""
    if len(body) > MAX_PEEK_BYTES:
        return UNREADABLE
    try:
        data: JsonValue = json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return UNREADABLE
    if not isinstance(data, dict):
        return UNREADABLE
    if "artifactUpdate" in data or data.get("kind") == "artifact-update":
        return None
    for holder in (data.get("task"), data.get("statusUpdate"), data):
        if isinstance(holder, dict) and isinstance(holder.get("status"), dict):
            said = holder["status"].get("state")
            state = (said if said in _V1_STATES else v1_state(said)) if isinstance(said, str) else None
            if state in _STILL_WORKING:
                return None
            return state or UNREADABLE
    return UNREADABLE
