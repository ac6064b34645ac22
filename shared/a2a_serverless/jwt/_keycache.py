"""A JSON Web Key Set fetched over HTTP(S) and cached, refreshed when stale or when a token names a
key it lacks: the caching policy shared by the push receiver helper (:class:`~a2a_serverless.push.verify.JwksCache`)
and the API authorizer (:class:`~a2a_serverless.lambda_.oidc.OidcKeys`). Verifying a token with
the keys is :mod:`._verify`'s; the two are kept in separate modules because this one is the I/O
(httpx) half and that one is pure.

A refresh for a missing key happens at most once per ``min_refresh_seconds``, so tokens with made-up
key ids cannot make every request hit the key's publisher; the set is also refetched once older than
``max_cache_seconds``, so retired keys stop being trusted. If the first fetch fails, :meth:`key_set`
raises :class:`KeyFetchError`, and keeps raising it without fetching for ``failure_backoff_seconds``
(while the publisher is down, requests fail at once instead of each waiting up to ``timeout_seconds``
for it); if a later fetch fails, the cached keys stay in use, and the refresh is tried again
``min_refresh_seconds`` later (not ``max_cache_seconds``: a key retired while the publisher was down
stops being trusted soon after it is back). Thread-safe.
"""

from __future__ import annotations

import abc
import contextlib
import threading
import time
from collections.abc import Callable

import httpx
from joserfc.jwk import KeySet

from ..json_types import Json

__all__ = ["CachedKeySet", "KeyFetchError", "NotAJsonObject"]


class KeyFetchError(Exception):
    """The keys could not be fetched or are not a usable key set (safe to show: no secrets)."""


class NotAJsonObject(KeyFetchError):
    """The document fetched is not a JSON object."""


class CachedKeySet(abc.ABC):
    def __init__(
        self,
        *,
        client: httpx.Client | None = None,
        timeout_seconds: float = 5.0,
        min_refresh_seconds: float = 60.0,
        max_cache_seconds: float = 3600.0,
        failure_backoff_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._owns_client = client is None
        self._timeout = timeout_seconds
        self._min_refresh = min_refresh_seconds
        self._max_cache = max_cache_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._failure_backoff = failure_backoff_seconds
        self._keys: KeySet | None = None
        self._fetched_at = 0.0
        """When the cached keys were fetched."""
        self._tried_at = 0.0
        """When the cached keys were last asked for again, successfully or not."""
        self._failure: tuple[float, str] | None = None
        """When the last fetch without cached keys failed, and why."""

    @abc.abstractmethod
    def _fetch(self) -> KeySet:
        """Fetch the key set now; raise :class:`KeyFetchError` on any failure."""

    def key_set(self, *, lacks: Callable[[KeySet], bool] | None = None) -> KeySet:
        """The cached keys, fetched first if there are none, they are stale, or ``lacks(keys)`` says
        the key a token needs is missing (then at most once per ``min_refresh_seconds``)."""
        with self._lock:
            now = self._clock()
            if self._keys is None:
                self._keys = self._first_fetch(now)
                self._fetched_at = self._tried_at = now
            elif now - self._tried_at >= self._min_refresh and (
                now - self._fetched_at >= self._max_cache or (lacks is not None and lacks(self._keys))
            ):
                # A failed refetch keeps the cached keys in use; the next try waits min_refresh_seconds.
                self._tried_at = now
                with contextlib.suppress(KeyFetchError):
                    self._keys = self._fetch()
                    self._fetched_at = now
            return self._keys

    def _first_fetch(self, now: float) -> KeySet:
        """Fetch keys there are none of, unless the last try failed less than ``failure_backoff_seconds``
        ago: then fail again at once, for the same reason."""
        if self._failure is not None and now - self._failure[0] < self._failure_backoff:
            raise KeyFetchError(self._failure[1])
        try:
            keys = self._fetch()
        except KeyFetchError as exc:
            self._failure = (self._clock(), str(exc))  # from the end of a fetch that may have waited
            raise
        self._failure = None
        return keys

    def _get_json(self, url: str) -> Json:
        if self._client is None:
            self._client = httpx.Client(timeout=self._timeout, follow_redirects=False)
        try:
            response = self._client.get(url, headers={"Accept": "application/json"})
            response.raise_for_status()
            document = response.json()
        except (httpx.HTTPError, ValueError):
            raise KeyFetchError(f"fetching {url} failed") from None
        if not isinstance(document, dict):
            raise NotAJsonObject(f"{url} is not a JSON object")
        return document

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> CachedKeySet:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
