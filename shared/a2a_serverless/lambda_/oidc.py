"""The OIDC issuer's signing keys, for the API authorizer in ``jwt`` mode (:mod:`.authorizer`).

Imported by the authorizer only in that mode, when it builds its services on its first request: this
is what loads the JWT stack (joserfc, cryptography) and the HTTP client (httpx), so an authorizer in
``none`` mode never pays for them at its cold start.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from ..jwt import CachedKeySet, KeyFetchError, VerifyingKey, select_key

__all__ = ["KeysUnavailable", "OidcKeys"]


class KeysUnavailable(RuntimeError):
    """The issuer's keys could not be fetched and none are cached: API Gateway answers 500 (the caller's
    token is not at fault, and a retry may succeed). Raised at once, without asking the issuer again,
    for ``failure_backoff_seconds`` after a failed fetch."""


class OidcKeys(CachedKeySet):
    """The issuer's signing keys: found through OIDC discovery (or a configured JWKS URL), fetched on first
    use, cached for the warm container, and refetched when a token names an unknown ``kid``.

    An unknown ``kid`` (the issuer rotated) triggers a refetch at most once per ``min_refresh_seconds``,
    so forged tokens with made-up kids cannot make every request hit the issuer. The cached set is also
    refetched once older than ``max_cache_seconds``, so retired keys stop being trusted. A failed refetch
    keeps the cached keys in use and is tried again after ``min_refresh_seconds``; with none cached,
    :meth:`key_for` raises :class:`KeysUnavailable`, and keeps raising it without asking the issuer for
    ``failure_backoff_seconds`` (a down issuer costs one request a ``timeout_seconds`` wait, not every
    request). Pass ``client`` to control TLS or proxies; otherwise one is created with
    ``timeout_seconds``. Thread-safe.
    """

    def __init__(
        self,
        issuer: str,
        *,
        jwks_url: str = "",
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
        self.issuer = issuer
        self._jwks_url = jwks_url

    def key_for(self, kid: str, alg: str) -> VerifyingKey | None:
        """The key named ``kid`` that can verify ``alg`` (refetching first if need be), or None."""
        try:
            keys = self.key_set(lacks=lambda keys: select_key(keys, kid, alg) is None)
        except KeyFetchError as exc:
            raise KeysUnavailable(str(exc)) from None
        return select_key(keys, kid, alg)

    def _fetch(self) -> KeySet:
        if not self._jwks_url:
            discovery = self._get_json(self.issuer.rstrip("/") + "/.well-known/openid-configuration")
            jwks_uri = discovery.get("jwks_uri")
            # OIDC Discovery 1.0, section 4.3: the document must name the issuer it was fetched for.
            if discovery.get("issuer") != self.issuer or not isinstance(jwks_uri, str) or not self._fits(jwks_uri):
                raise KeyFetchError("the issuer's discovery document does not match it (issuer, jwks_uri)")
            self._jwks_url = jwks_uri
        document = self._get_json(self._jwks_url)
        try:
            return KeySet.import_key_set({"keys": list(document["keys"])})
        except (JoseError, KeyError, ValueError, TypeError):
            raise KeyFetchError("the issuer's key set is not a usable JWKS") from None

    def _fits(self, url: str) -> bool:
        """A discovered URL must be https, unless the configured issuer itself is not (local tests)."""
        try:
            scheme = urlsplit(url).scheme
        except ValueError:
            return False
        return scheme == "https" or scheme == urlsplit(self.issuer).scheme
