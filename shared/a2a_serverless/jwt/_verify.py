"""Verifying a signed JWT (compact JWS) against a key set: the one place both token checkers share.

Used by the API authorizer (:mod:`.lambda_.authorizer`, OIDC bearer tokens) and by the push receiver
helper (:mod:`.push.verify`, our signed notifications). Pure: depends on ``joserfc`` alone and does no
I/O (fetching and caching key sets is :class:`~a2a_serverless.jwt.CachedKeySet`'s).

What :func:`verify_jwt` guarantees when it returns claims:

* the header declared one of the ``algorithms`` the caller allows (callers allow only asymmetric ones, so
  ``none`` and HMAC are refused before any key is looked up) and named a key (``kid``);
* the signature verifies with the key of that ``kid`` that fits the algorithm (:func:`select_key`);
* ``iss`` equals ``issuer``; ``aud`` is, or contains, ``audience`` (when one is given);
* ``exp`` is present and numeric and not past (refused once ``now > exp + leeway``); ``nbf`` and ``iat``
  are numeric when present (present too when in ``required``) and not in the future, within the leeway.

What the caller must still check: every other claim (``sub``, scopes, ``jti`` replays, a maximum token
age, bindings to the request); :func:`check_oidc_audience` is the audience rule of an OIDC bearer token
(``aud``, or a Cognito access token's ``client_id``). Every rejection is a :class:`JwtRejected` whose
``check`` says which rule failed and whose message is safe to log: it never quotes the token or its claims.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, RSAKey

from ..json_types import Json, JsonValue

__all__ = [
    "Check",
    "JwtHeader",
    "JwtRejected",
    "KeyFinder",
    "VerifyingKey",
    "check_oidc_audience",
    "has_audience",
    "numeric_claim",
    "read_header",
    "select_key",
    "verify_jwt",
]

Check = Literal[
    "malformed",
    "alg",
    "kid",
    "unknown_key",
    "signature",
    "iss",
    "aud",
    "token_use",
    "missing",
    "not_numeric",
    "exp",
    "nbf",
    "iat",
]
"""Which rule a token failed; callers that word rejections their own way translate from this."""

VerifyingKey: TypeAlias = RSAKey | ECKey
KeyFinder: TypeAlias = Callable[[str, str], VerifyingKey | None]
"""``(kid, alg) -> key or None``: a key source that may refetch when the kid is unknown."""

_CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


class JwtRejected(Exception):
    """The token must be refused. ``str()`` is safe to log (it names the rule, never the token or claims);
    ``check`` is the rule, ``claim`` the claim concerned (``missing``/``not_numeric``; else empty)."""

    def __init__(self, check: Check, message: str, *, claim: str = "") -> None:
        super().__init__(message)
        self.check: Check = check
        self.claim = claim


@dataclass(frozen=True)
class JwtHeader:
    alg: str
    kid: str


def read_header(token: str, algorithms: Collection[str]) -> JwtHeader:
    """The header of a compact JWS that declares one of ``algorithms`` and names a key, unverified: for
    choosing the key (and fetching it) before :func:`verify_jwt`."""
    try:
        header = jws.extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise JwtRejected("malformed", "the token is not a well-formed JWT") from None
    # The algorithm is pinned by the caller, never taken on trust from the header: that is what stops
    # "alg: none" and HS256 tokens forged with the public key as the HMAC secret.
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in algorithms:
        raise JwtRejected("alg", "the token must be signed with " + " or ".join(algorithms))
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise JwtRejected("kid", "the token names no key (kid)")
    return JwtHeader(alg, kid)


def select_key(keys: KeySet, kid: str, alg: str) -> VerifyingKey | None:
    """The key of ``keys`` named ``kid`` that may verify ``alg`` (a signing key, of the algorithm's type
    and curve, its own ``alg`` absent or equal), or None."""
    for key in keys:
        if key.kid != kid or key.get("use") not in (None, "sig") or key.get("alg") not in (None, alg):
            continue
        if alg.startswith(("RS", "PS")) and isinstance(key, RSAKey):
            return key
        if isinstance(key, ECKey) and key.get("crv") == _CURVES.get(alg):
            return key
    return None


def verify_jwt(
    token: str,
    keys: KeySet | KeyFinder,
    *,
    algorithms: Collection[str],
    issuer: str,
    audience: str | None = None,
    leeway_seconds: float = 60,
    required: Collection[str] = ("exp",),
    now: float | None = None,
) -> Json:
    """The claims of ``token`` if it passes every check in the module docstring; else :class:`JwtRejected`.

    ``keys`` is a key set, or a :data:`KeyFinder` (for caches that refetch on an unknown kid). ``audience``
    None skips the ``aud`` check (the caller checks it its own way). ``required`` lists the time claims
    that must be present (``exp`` always is). ``now`` is epoch seconds (tests).
    """
    header = read_header(token, algorithms)
    key = select_key(keys, header.kid, header.alg) if isinstance(keys, KeySet) else keys(header.kid, header.alg)
    if key is None:
        raise JwtRejected("unknown_key", "the token was signed by an unknown key (kid)")
    try:
        claims: Json = dict(jwt.decode(token, key, algorithms=[header.alg]).claims)
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise JwtRejected("signature", "the token signature is invalid") from None

    current = time.time() if now is None else now
    if claims.get("iss") != issuer:
        raise JwtRejected("iss", "the token was issued by someone else (iss)")
    if audience is not None and not has_audience(claims, audience):
        raise JwtRejected("aud", "the token is meant for another audience (aud)")
    times = {name: numeric_claim(claims, name) for name in ("exp", "nbf", "iat")}
    for name in ("exp", *required):
        if times.get(name) is None:
            what = "expiry (exp)" if name == "exp" else name
            raise JwtRejected("missing", f"the token has no {what}", claim=name)
    expires_at, not_before, issued_at = times["exp"], times["nbf"], times["iat"]
    if expires_at is not None and current > expires_at + leeway_seconds:
        raise JwtRejected("exp", "the token has expired (exp)")
    if not_before is not None and not_before > current + leeway_seconds:
        raise JwtRejected("nbf", "the token is not valid yet (nbf)")
    if issued_at is not None and issued_at > current + leeway_seconds:
        raise JwtRejected("iat", "the token is issued in the future (iat)")
    return claims


def has_audience(claims: Mapping[str, JsonValue], audience: str) -> bool:
    """``aud`` is ``audience`` or a list containing it."""
    aud = claims.get("aud")
    return aud == audience or (isinstance(aud, list) and audience in aud)


ACCESS_TOKEN = "access"  # noqa: S105 - Cognito's token_use of an access token, not a secret
COGNITO_TOKEN_USES = frozenset({ACCESS_TOKEN, "id"})
"""The ``token_use`` values of Amazon Cognito's JWTs (its refresh tokens are not JWTs)."""


def check_oidc_audience(claims: Mapping[str, JsonValue], audience: str) -> None:
    """Refuse (:class:`JwtRejected`) a bearer token that is not meant for ``audience``.

    * With an ``aud`` claim, ``aud`` must be or contain ``audience``. Nothing else counts: a token
      whose ``aud`` names another API is not ours because its ``client_id`` happens to match.
    * Without one, only an Amazon Cognito access token counts, by its ``client_id`` (Cognito's
      access tokens name the app client there and carry no ``aud``): ``token_use`` must be
      ``access``. Any other token without ``aud`` is refused.
    * ``token_use``, where present (Cognito's claim), must be ``access`` or ``id``. An ID token
      (``id``) counts by its ``aud``, which Cognito sets to the app client id: it is the client's
      proof of who signed in, and API Gateway's own Cognito authorizer takes it as a bearer token
      too. So with ``audience`` set to an app client id, both tokens of that client are accepted,
      and no token of another client.
    """
    token_use = claims.get("token_use")
    if token_use is not None and (not isinstance(token_use, str) or token_use not in COGNITO_TOKEN_USES):
        raise JwtRejected("token_use", "the token is not an access or ID token (token_use)")
    if "aud" in claims:
        if not has_audience(claims, audience):
            raise JwtRejected("aud", "the token is meant for another audience (aud)")
        return
    if token_use != ACCESS_TOKEN:
        raise JwtRejected("aud", "the token names no audience (aud) and is no Cognito access token (token_use)")
    if claims.get("client_id") != audience:
        raise JwtRejected("aud", "the token is meant for another audience (client_id)")


def numeric_claim(claims: Mapping[str, JsonValue], name: str) -> float | None:
    """A NumericDate claim as a float, None if absent; :class:`JwtRejected` if present but not a number."""
    if name not in claims:
        return None
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JwtRejected("not_numeric", f"the token's {name} is not a number", claim=name)
    return float(value)
