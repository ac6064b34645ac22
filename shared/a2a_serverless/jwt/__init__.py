"""JSON Web Token verification, shared by the API authorizer (:mod:`a2a_serverless.lambda_.authorizer`)
and by receivers of push notifications (:mod:`a2a_serverless.push.verify`).

Two halves, one concept: :func:`verify_jwt` (pure, ``joserfc`` only: the header's algorithm and key id,
the key chosen from a key set, the signature, and the registered claims ``iss``/``aud``/``exp``/``nbf``/
``iat`` with leeway; every refusal a :class:`JwtRejected` with a safe message and the rule it names), and
:class:`CachedKeySet` (the I/O half: a JWKS fetched over HTTP(S), cached, refreshed on an unknown key id,
with a back-off while its publisher is down). Each caller keeps what is its own: where the token comes
from, where the keys are published, and the claims only it understands (subject and scopes; body hash,
task id and replays).
"""

from ._keycache import CachedKeySet, KeyFetchError, NotAJsonObject
from ._verify import (
    Check,
    JwtHeader,
    JwtRejected,
    KeyFinder,
    VerifyingKey,
    check_oidc_audience,
    has_audience,
    numeric_claim,
    read_header,
    select_key,
    verify_jwt,
)

__all__ = [
    "CachedKeySet",
    "Check",
    "JwtHeader",
    "JwtRejected",
    "KeyFetchError",
    "KeyFinder",
    "NotAJsonObject",
    "VerifyingKey",
    "check_oidc_audience",
    "has_audience",
    "numeric_claim",
    "read_header",
    "select_key",
    "verify_jwt",
]
