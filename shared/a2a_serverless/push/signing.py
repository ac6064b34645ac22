"""The agent's push-notification signing keys (ES256), the JWT each notification carries, and the JWKS.

Every notification the agent POSTs to a webhook carries a compact JWT in :data:`SIGNATURE_HEADER`. Its
claims are ``iss`` (the agent), ``aud`` (the webhook URL), ``iat``/``exp`` (a short lifetime), ``jti``
(unique per delivery attempt, for replay protection), ``taskId``, ``eventId``, and ``bodySha256``, which
binds the token to the exact bytes of the body so a captured token cannot vouch for another body. The
header's ``kid`` names the key; receivers find it in the JWKS the agent publishes at :data:`JWKS_PATH`
and check everything with :func:`a2a_serverless.push.verify.verify_notification`.

Where the keys live. The key set is one JSON text, ``{"keys": [<private EC JWK>, ...]}``, newest first,
kept in an SSM Parameter Store *SecureString* (:class:`SsmKeySource`). That is deliberate:

* a standard parameter has no monthly charge, and with the AWS-managed ``aws/ssm`` key it is encrypted
  at rest by KMS at no key cost (Secrets Manager would bill per secret per month);
* the key is generated *in the account, on first use*, by whichever function signs first
  (:meth:`KeySource.create` is store-if-absent, so concurrent bootstrappers converge on one key); no
  private key ever exists in a template, a build artefact or a developer's machine;
* reads are rare: :class:`NotificationSigner` caches the parsed keys and re-reads at most every
  ``refresh_seconds``, so a warm Lambda does not call SSM per notification.

Rotation. :func:`rotate_keys` prepends a fresh key and keeps the newest ``keep`` (default 2). The newest
key signs; *every* stored key is published in the JWKS, so a receiver holding a token (or a cached JWKS)
from before the rotation keeps verifying until the old key drops off the end. Signers pick the new key
up within ``refresh_seconds``.

Key material is never logged, and error messages about a malformed key set never quote it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from joserfc import jwt
from joserfc.jwk import ECKey

from ..json_types import Json
from . import JWKS_PATH, SIGNATURE_HEADER, SIGNING_ALGORITHM

if TYPE_CHECKING:
    from botocore.exceptions import ClientError
    from mypy_boto3_ssm import SSMClient

__all__ = [
    "JWKS_PATH",
    "SIGNATURE_HEADER",
    "SIGNING_ALGORITHM",
    "KeySource",
    "MemoryKeySource",
    "NotificationSigner",
    "SsmKeySource",
    "generate_key_set_text",
    "rotate_keys",
]

logger = logging.getLogger(__name__)


_CURVE = "P-256"
# What a published JWK may contain: the public point and its labels. Everything else (the private
# ``d``, our ``created`` bookkeeping) stays home.
_PUBLIC_FIELDS = ("kty", "crv", "x", "y", "kid", "alg", "use")


def _body_sha256(body: bytes) -> str:
    """The ``bodySha256`` claim for ``body``: base64url (no padding) of its SHA-256 digest."""
    return base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode("ascii")


# ---------------------------------------------------------------------------------------- key sources


class KeySource(Protocol):
    """Where the key set text is stored. Implementations must make :meth:`create` atomic."""

    def load(self) -> str | None:
        """The stored key set text, or None when nothing is stored yet."""
        ...

    def create(self, text: str) -> str:
        """Store ``text`` only if nothing is stored; return what is stored afterwards.

        When another writer got there first, that writer's text is returned, so every bootstrapper
        ends up signing with the same key.
        """
        ...

    def replace(self, text: str) -> None:
        """Overwrite the stored text (rotation)."""
        ...


class MemoryKeySource:
    """An in-process, thread-safe :class:`KeySource` for tests and local development."""

    def __init__(self, text: str | None = None) -> None:
        self._text = text
        self._lock = threading.Lock()

    def load(self) -> str | None:
        with self._lock:
            return self._text

    def create(self, text: str) -> str:
        with self._lock:
            if self._text is None:
                self._text = text
            return self._text

    def replace(self, text: str) -> None:
        with self._lock:
            self._text = text


class SsmKeySource:
    """The key set in an SSM Parameter Store SecureString parameter (see the module docstring for why).

    ``client`` is a boto3 SSM client; by default one is created on first use, so constructing this
    (at import time of a handler, say) does no I/O. Standard parameters hold up to 4 KB: plenty for a
    few EC keys (about 300 bytes each).
    """

    def __init__(self, name: str, *, client: SSMClient | None = None) -> None:
        self._name = name
        self._client = client
        self._client_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def client(self) -> SSMClient:
        with self._client_lock:
            if self._client is None:
                # lazily: receivers import this module for its constants and never need boto3
                from ..aws import ssm_client

                self._client = ssm_client()
            return self._client

    def load(self) -> str | None:
        from botocore.exceptions import ClientError

        try:
            response = self.client.get_parameter(Name=self._name, WithDecryption=True)
        except ClientError as exc:
            if _error_code(exc) == "ParameterNotFound":
                return None
            raise
        value: str = response["Parameter"]["Value"]
        return value

    def create(self, text: str) -> str:
        from botocore.exceptions import ClientError

        try:
            self._put(text, overwrite=False)
        except ClientError as exc:
            if _error_code(exc) != "ParameterAlreadyExists":
                raise
            # Another function bootstrapped first: adopt its key set.
            stored = self.load()
            if stored is None:  # created and deleted in between: nothing sensible to adopt
                raise RuntimeError(f"SSM parameter {self._name} vanished while being created") from None
            return stored
        return text

    def replace(self, text: str) -> None:
        self._put(text, overwrite=True)

    def _put(self, text: str, *, overwrite: bool) -> None:
        self.client.put_parameter(
            Name=self._name,
            Description="A2A push notification signing keys (private ES256 JWK set, newest first)",
            Value=text,
            Type="SecureString",
            Overwrite=overwrite,
        )


def _error_code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


# ---------------------------------------------------------------------------------------- key sets


def _new_key_entry() -> Json:
    key = ECKey.generate_key(_CURVE, parameters={"alg": SIGNING_ALGORITHM, "use": "sig"}, private=True, auto_kid=False)
    entry: Json = dict(key.as_dict(private=True))
    # RFC 7638 thumbprint: derived from the public key alone, so any holder of the JWKS can recompute it.
    entry["kid"] = key.thumbprint()
    entry["created"] = int(time.time())
    return entry


def _dump(entries: list[Json]) -> str:
    return json.dumps({"keys": entries}, separators=(",", ":"))


def _entries(text: str) -> list[Json]:
    """The stored key entries, validated; the error never quotes the text (it holds private keys)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError("the stored signing key set is not JSON") from None
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ValueError('the stored signing key set must be {"keys": [<private EC JWK>, ...]} with at least one key')
    return entries


def _import_signing_keys(text: str) -> list[ECKey]:
    keys: list[ECKey] = []
    for entry in _entries(text):
        try:
            key = ECKey.import_key(entry)
        except Exception:  # joserfc raises assorted errors; none of their messages may leak key material
            raise ValueError("the stored signing key set holds an unreadable key") from None
        if not key.is_private or entry.get("crv") != _CURVE:
            raise ValueError(f"every stored signing key must be a private EC {_CURVE} key")
        if entry.get("alg", SIGNING_ALGORITHM) != SIGNING_ALGORITHM:
            raise ValueError(f"every stored signing key must be for {SIGNING_ALGORITHM}")
        key.ensure_kid()  # a hand-made entry without a kid gets its thumbprint
        keys.append(key)
    return keys


def generate_key_set_text() -> str:
    """A fresh key set text holding one new ES256 key (what a bootstrapping signer stores)."""
    return _dump([_new_key_entry()])


def rotate_keys(source: KeySource, *, keep: int = 2) -> str:
    """Put a fresh key in front of the stored ones, keep the newest ``keep``, store; return the new kid.

    Keeping the previous key (``keep`` >= 2) keeps it in the JWKS, so tokens already in flight and
    receivers' cached key sets stay valid across the rotation. Not atomic against a concurrent rotation
    (run it from one place: a scheduled job or an operator).
    """
    if keep < 1:
        raise ValueError("keep must be at least 1 (the new key)")
    current = source.load()
    existing = _entries(current) if current is not None else []
    fresh = _new_key_entry()
    source.replace(_dump([fresh, *existing][:keep]))
    kid: str = fresh["kid"]
    logger.info("rotated the notification signing keys", extra={"kid": kid, "kept": min(keep, len(existing) + 1)})
    return kid


# ---------------------------------------------------------------------------------------- the signer


class NotificationSigner:
    """Signs notifications with the newest stored key and publishes all stored keys as a JWKS.

    Keys are loaded on first use and cached; they are re-read at most every ``refresh_seconds`` so a
    rotation takes effect without a deploy. If nothing is stored yet, a key set is generated and
    created (store-if-absent), so the first function to sign bootstraps the key. If a refresh fails
    while keys are cached, the cached keys keep signing (and the failure is logged) until the next
    refresh is due. Thread-safe.
    """

    def __init__(
        self,
        source: KeySource,
        *,
        issuer: str,
        ttl_seconds: int = 300,
        refresh_seconds: float = 300,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        if refresh_seconds < 0:
            raise ValueError("refresh_seconds must not be negative")
        self._source = source
        self._issuer = issuer
        self._ttl = ttl_seconds
        self._refresh = refresh_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: list[ECKey] | None = None
        self._loaded_at = 0.0

    @property
    def issuer(self) -> str:
        return self._issuer

    def sign(self, *, audience: str, task_id: str, event_id: str, body: bytes) -> str:
        """A compact JWT for one POST of ``body`` to ``audience`` (the webhook URL).

        ``jti`` is fresh on every call, so sign once per delivery attempt: receivers with replay
        protection reject a ``jti`` they have seen.
        """
        key = self._current_keys()[0]
        issued_at = int(self._clock())
        header = {"alg": SIGNING_ALGORITHM, "typ": "JWT", "kid": key.kid}
        claims: Json = {
            "iss": self._issuer,
            "aud": audience,
            "iat": issued_at,
            "exp": issued_at + self._ttl,
            "jti": uuid.uuid4().hex,
            "taskId": task_id,
            "eventId": event_id,
            "bodySha256": _body_sha256(body),
        }
        return jwt.encode(header, claims, key, algorithms=[SIGNING_ALGORITHM])

    def jwks(self) -> Json:
        """The public JWKS to serve at :data:`JWKS_PATH`: every stored key, newest first, no private parts."""
        published = []
        for key in self._current_keys():
            public = key.as_dict(private=False)
            published.append({name: public[name] for name in _PUBLIC_FIELDS if name in public})
        return {"keys": published}

    def _current_keys(self) -> list[ECKey]:
        # One lock around the (rare) reload: concurrent signers in a warm process wait for one SSM read
        # instead of all issuing their own.
        with self._lock:
            now = self._clock()
            if self._keys is not None and now - self._loaded_at < self._refresh:
                return self._keys
            try:
                keys = _import_signing_keys(self._read_or_bootstrap())
            except Exception as exc:
                if self._keys is None:
                    raise
                logger.warning(
                    "could not refresh the notification signing keys; still signing with the cached ones",
                    extra={"error": type(exc).__name__},
                )
                self._loaded_at = now
                return self._keys
            self._keys = keys
            self._loaded_at = now
            return keys

    def _read_or_bootstrap(self) -> str:
        text = self._source.load()
        if text is None:
            text = self._source.create(generate_key_set_text())
            logger.info("bootstrapped the notification signing key set")
        return text
