"""Checking a push notification on the receiving end: signature, claims, body binding, replays.

A receiver (a client's webhook) installs this package for this module alone, so it depends only on
``joserfc`` and ``httpx`` and, from this package, only on the constants in :mod:`.signing`, the shared
JWT verifier (:mod:`a2a_serverless.jwt`: header, key choice, signature, ``iss``/``aud``/time claims) and
its key cache. This module adds what is the receiver's own: finding the
token in the headers, the body hash, the task-id cross-check, the maximum age and the replay guard.

Typical use in a webhook handler::

    jwks = JwksCache("https://agent.example.com/.well-known/jwks.json")
    replays = ReplayGuard()

    def on_notification(request):
        try:
            note = jwks.verify(request.headers, request.body, issuer="https://agent.example.com",
                               audience="https://me.example.com/a2a/hook", replay_guard=replays)
        except NotificationVerificationError:
            return 401
        ...  # note.task_id, note.event_id

What is checked (see :func:`verify_notification`): the token comes from ``X-A2A-Notification-Signature``
or, failing that, ``Authorization: Bearer``; it must be ES256 (``none`` and HMAC tokens are refused
before any key is consulted), signed by the key its ``kid`` names; ``iss`` and ``aud`` must be the
expected ones; ``exp`` and ``iat`` must be current (within a clock-skew leeway); ``bodySha256`` must be
the digest of the exact body received; ``taskId`` must be the task the body is about; and, with a
:class:`ReplayGuard`, its ``jti`` must not have been seen before.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import heapq
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from ..json_types import Json
from ..jwt import (
    CachedKeySet,
    Check,
    JwtRejected,
    KeyFetchError,
    NotAJsonObject,
    VerifyingKey,
    read_header,
    select_key,
    verify_jwt,
)
from . import SIGNATURE_HEADER, SIGNING_ALGORITHM

__all__ = [
    "JwksCache",
    "NotificationVerificationError",
    "ReplayGuard",
    "VerifiedNotification",
    "verify_notification",
]

# StreamResponse members (JSON names) and where each keeps its task id.
_TASK_ID_PATHS = {
    "task": "id",
    "message": "taskId",
    "statusUpdate": "taskId",
    "artifactUpdate": "taskId",
}


class NotificationVerificationError(Exception):
    """The notification must be rejected. The message says why and is safe to log or return: it never
    quotes the token, the claims or the body."""


@dataclass(frozen=True)
class VerifiedNotification:
    """What a verified token vouches for. ``claims`` holds every claim, for callers that want more."""

    task_id: str
    event_id: str
    jti: str
    issued_at: float
    claims: Json = field(hash=False)


class ReplayGuard:
    """Remembers the ``jti`` of accepted notifications until they expire; thread-safe, in memory.

    In memory means per process: a receiver running several instances needs a shared store for
    complete replay protection (the short token lifetime bounds the window either way).
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, float] = {}
        self._expiry: list[tuple[float, str]] = []  # a heap, so pruning costs only what expired

    def check_and_remember(self, jti: str, expires_at: float, *, now: float | None = None) -> bool:
        """True (and remember ``jti`` until ``expires_at``) if it is new; False if it was seen."""
        with self._lock:
            self._prune(self._clock() if now is None else now)
            if jti in self._seen:
                return False
            self._seen[jti] = expires_at
            heapq.heappush(self._expiry, (expires_at, jti))
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def _prune(self, now: float) -> None:
        while self._expiry and self._expiry[0][0] < now:
            expires_at, jti = heapq.heappop(self._expiry)
            if self._seen.get(jti) == expires_at:
                del self._seen[jti]


def verify_notification(
    headers: Mapping[str, str],
    body: bytes,
    *,
    keys: Json | KeySet,
    issuer: str,
    audience: str,
    max_age_seconds: int = 300,
    leeway_seconds: int = 30,
    now: float | None = None,
    replay_guard: ReplayGuard | None = None,
) -> VerifiedNotification:
    """Check one notification; return what it vouches for or raise :class:`NotificationVerificationError`.

    ``headers`` are the request headers (looked up case-insensitively); ``body`` the exact bytes
    received. ``keys`` is the agent's JWKS (a dict as served at its ``/.well-known/jwks.json``, or a
    joserfc ``KeySet``). ``audience`` is this webhook's URL as registered in the push config. A token
    older than ``max_age_seconds`` is refused even if its ``exp`` is later; ``leeway_seconds`` absorbs
    clock skew. The replay guard is consulted last, so a token failing any other check does not use up
    its ``jti``.
    """
    token = _token_from(headers)

    def find_key(kid: str, alg: str) -> VerifyingKey | None:
        # Called only once the header has passed: a bad token is refused before the key set is read.
        return select_key(_as_key_set(keys), kid, alg)

    with _as_notification_error():
        claims = verify_jwt(
            token,
            find_key,
            algorithms=(SIGNING_ALGORITHM,),
            issuer=issuer,
            audience=audience,
            leeway_seconds=leeway_seconds,
            required=("exp", "iat"),
            now=now,
        )
    current = time.time() if now is None else now
    # Both present and numeric: verify_jwt was told they are required.
    expires_at = float(claims["exp"])
    issued_at = float(claims["iat"])
    if current - issued_at > max_age_seconds + leeway_seconds:
        raise NotificationVerificationError("the notification signature is too old (iat)")

    digest = claims.get("bodySha256")
    if not isinstance(digest, str) or not hmac.compare_digest(digest, _body_sha256(body)):
        raise NotificationVerificationError("the body is not the one that was signed (bodySha256)")
    task_id = _string(claims, "taskId")
    if _task_id_in(body) != task_id:
        raise NotificationVerificationError("the body is about another task than the signature (taskId)")
    event_id = _string(claims, "eventId")
    jti = _string(claims, "jti")

    # Remember it for as long as it could still be accepted (exp plus the skew we tolerate).
    if replay_guard is not None and not replay_guard.check_and_remember(jti, expires_at + leeway_seconds, now=current):
        raise NotificationVerificationError("the notification was already received (jti replayed)")
    return VerifiedNotification(task_id=task_id, event_id=event_id, jti=jti, issued_at=issued_at, claims=dict(claims))


class JwksCache(CachedKeySet):
    """The agent's JWKS fetched over HTTPS, cached, and refetched when a token names an unknown key
    (the agent rotated) or the copy is old (policy: :class:`~a2a_serverless.jwt.CachedKeySet`).
    Pass ``client`` to control TLS, proxies or timeouts; otherwise one is created (and closed by
    :meth:`close`). If the very first fetch fails, verification fails (without fetching again for
    ``failure_backoff_seconds``); if a later refetch fails, the cached keys stay in use. Thread-safe.
    """

    def __init__(
        self,
        url: str,
        *,
        client: httpx.Client | None = None,
        timeout_seconds: float = 5.0,
        min_refresh_seconds: float = 60.0,
        max_cache_seconds: float = 3600.0,
        failure_backoff_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            client=client,
            timeout_seconds=timeout_seconds,
            min_refresh_seconds=min_refresh_seconds,
            max_cache_seconds=max_cache_seconds,
            failure_backoff_seconds=failure_backoff_seconds,
            clock=clock,
        )
        self._url = url

    def key_set(self, *, kid: str | None = None, lacks: Callable[[KeySet], bool] | None = None) -> KeySet:
        """The cached keys, fetched first if there are none, they are stale, or ``kid`` is unknown."""
        if kid is not None:
            lacks = lambda keys: not _has_kid(keys, kid)  # noqa: E731
        try:
            return super().key_set(lacks=lacks)
        except KeyFetchError as exc:
            raise NotificationVerificationError(str(exc)) from None

    def verify(
        self,
        headers: Mapping[str, str],
        body: bytes,
        *,
        issuer: str,
        audience: str,
        max_age_seconds: int = 300,
        leeway_seconds: int = 30,
        now: float | None = None,
        replay_guard: ReplayGuard | None = None,
    ) -> VerifiedNotification:
        """:func:`verify_notification` against this JWKS (refetched first if the token's kid is unknown)."""
        with _as_notification_error():
            kid = read_header(_token_from(headers), (SIGNING_ALGORITHM,)).kid
        return verify_notification(
            headers,
            body,
            keys=self.key_set(kid=kid),
            issuer=issuer,
            audience=audience,
            max_age_seconds=max_age_seconds,
            leeway_seconds=leeway_seconds,
            now=now,
            replay_guard=replay_guard,
        )

    def __enter__(self) -> JwksCache:
        return self

    def _fetch(self) -> KeySet:
        try:
            document = self._get_json(self._url)
        except NotAJsonObject:
            raise KeyFetchError("the agent's key set is not a JWKS") from None
        except KeyFetchError:
            raise KeyFetchError("the agent's key set could not be fetched") from None
        try:
            return _as_key_set(document)
        except NotificationVerificationError as exc:
            raise KeyFetchError(str(exc)) from None


# ---------------------------------------------------------------------------------------- helpers


def _body_sha256(body: bytes) -> str:
    # Same definition as the signer's (kept here so this module needs nothing else from the package).
    return base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode("ascii")


def _token_from(headers: Mapping[str, str]) -> str:
    # Our own header wins: ``Authorization`` may carry the credentials the client configured for its
    # webhook (push config authentication) rather than our token.
    lowered = {name.lower(): value for name, value in headers.items()}
    token = lowered.get(SIGNATURE_HEADER.lower(), "").strip()
    if not token:
        scheme, _, credentials = lowered.get("authorization", "").strip().partition(" ")
        if scheme.lower() == "bearer":
            token = credentials.strip()
    if not token:
        raise NotificationVerificationError(f"the notification carries no signature ({SIGNATURE_HEADER})")
    return token


_MESSAGES: dict[Check, str] = {
    "malformed": "the notification signature is not a well-formed JWT",
    "alg": f"the notification signature must use {SIGNING_ALGORITHM}",
    "kid": "the notification signature names no key (kid)",
    "unknown_key": "the notification was signed by an unknown key (kid)",
    "signature": "the notification signature is invalid",
    "iss": "the notification was issued by someone else (iss)",
    "aud": "the notification is meant for another receiver (aud)",
    "exp": "the notification signature has expired (exp)",
    "nbf": "the notification signature is not valid yet (nbf)",
    "iat": "the notification signature is issued in the future (iat)",
}
"""The receiver's wording of :class:`~a2a_serverless.jwt.JwtRejected` checks (missing or non-numeric
claims are worded below, with the claim's name)."""


@contextlib.contextmanager
def _as_notification_error() -> Iterator[None]:
    """Reword the shared verifier's rejections as :class:`NotificationVerificationError`."""
    try:
        yield
    except JwtRejected as rejected:
        if rejected.check in ("missing", "not_numeric"):
            message = f"the notification signature lacks a numeric {rejected.claim}"
        else:
            message = _MESSAGES[rejected.check]
        raise NotificationVerificationError(message) from None


def _as_key_set(keys: Json | KeySet) -> KeySet:
    if isinstance(keys, KeySet):
        return keys
    try:
        return KeySet.import_key_set({"keys": list(keys["keys"])})
    except (JoseError, KeyError, ValueError, TypeError):
        raise NotificationVerificationError("the agent's key set is not a usable JWKS") from None


def _has_kid(keys: KeySet, kid: str) -> bool:
    return select_key(keys, kid, SIGNING_ALGORITHM) is not None


def _string(claims: Json, name: str) -> str:
    value = claims.get(name)
    if not isinstance(value, str) or not value:
        raise NotificationVerificationError(f"the notification signature lacks {name}")
    return value


def _task_id_in(body: bytes) -> str | None:
    """The task a StreamResponse body is about (None when the body is not one)."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    present = [name for name in _TASK_ID_PATHS if document.get(name) is not None]
    if len(present) != 1:
        return None
    payload = document[present[0]]
    task_id = payload.get(_TASK_ID_PATHS[present[0]]) if isinstance(payload, dict) else None
    return task_id if isinstance(task_id, str) else None
