"""The API's Lambda REQUEST authorizer: who may call, and as which principal.

API Gateway (REST API) calls this function before every method it guards and caches nothing by default
(``ReauthorizeEvery: 0``). The app then reads the principal from ``requestContext.authorizer.principalId``
(``A2A_AUTH_MODE=apigateway``, see :mod:`a2a_serverless.auth`). Two modes (``A2A_AUTHORIZER_MODE``):

* ``none`` (default, development): every request is allowed as the principal ``anonymous``;
* ``jwt``: ``Authorization: Bearer <JWT>`` is required, signed with RS256 or ES256 by a key of the OIDC
  issuer ``A2A_JWT_ISSUER`` (found through its discovery document, or ``A2A_JWT_JWKS_URL``), with ``iss``
  equal to the issuer, ``exp``/``nbf``/``iat`` current within :data:`LEEWAY_SECONDS`, and ``aud``
  containing ``A2A_JWT_AUDIENCE`` or, in a Cognito access token (``token_use`` ``access``, which carries
  no ``aud``), ``client_id`` equal to it; a Cognito ID token counts by its ``aud``
  (:func:`~a2a_serverless.jwt.check_oidc_audience`; the setting is required in this mode). The
  principal is ``<iss>|<sub>`` (:func:`~a2a_serverless.auth.token_principal`): a ``sub`` is unique only
  within its issuer, and a token whose ``sub`` is ``anonymous`` must not act as the unauthenticated
  ``anonymous`` caller.

An allowed request gets an ``execute-api:Invoke`` Allow on the whole stage (so a cached policy, should
caching be turned on, covers every route) and a ``context`` of ``iss``, ``sub`` and ``scope`` (strings). A
denied one raises :class:`Unauthorized`, an exception whose message is exactly ``Unauthorized``: that
message is what makes API Gateway answer 401. Any other exception (the issuer's keys cannot be fetched, a
broken event) makes it answer 500. While the issuer's keys cannot be fetched, the failure is remembered
for ``failure_backoff_seconds`` (:class:`~.oidc.OidcKeys`), so requests are answered at once instead of each
waiting for the issuer. The token is never logged, nor quoted in any exception.

The JWT stack (joserfc, cryptography) and the HTTP client that fetches the keys (httpx) are loaded in
``jwt`` mode only, when its first request builds the services (:mod:`.oidc`): an authorizer in ``none``
mode never loads them, and one in ``jwt`` mode pays for them on its first request instead of at import.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools.utilities.typing import LambdaContext

from ..auth import ANONYMOUS, token_principal
from ..config import ConfigError, Settings
from ..json_types import Json
from . import _metrics as m
from ._observability import logger, metrics

if TYPE_CHECKING:
    from .oidc import OidcKeys

__all__ = [
    "ALGORITHMS",
    "LEEWAY_SECONDS",
    "AuthorizerServices",
    "Unauthorized",
    "authorize",
    "authorizer_handler",
    "authorizer_services",
    "reset_authorizer_services",
    "stage_arn",
    "verify_token",
]

ALGORITHMS = ("RS256", "ES256")
"""The only signature algorithms accepted; ``none`` and HMAC (``HS*``) tokens are refused before any key
is looked up (an HS256 token "signed" with the issuer's public key is the classic forgery)."""
LEEWAY_SECONDS = 60
"""Clock skew tolerated on ``exp``, ``nbf`` and ``iat``."""


class Unauthorized(Exception):
    """The request is denied: API Gateway answers 401.

    ``str()`` is always ``Unauthorized`` (API Gateway matches the Lambda error message exactly); why is in
    ``reason``, safe to log: it never quotes the token or its claims.
    """

    def __init__(self, reason: str) -> None:
        super().__init__("Unauthorized")
        self.reason = reason


# ------------------------------------------------------------------------------------------- core


def authorize(event: Json, settings: Settings, keys: OidcKeys | None, *, now: float | None = None) -> Json:
    """The authorizer's answer to one REQUEST event: an Allow policy for the stage, or :class:`Unauthorized`.

    ``keys`` is required in ``jwt`` mode (ignored in ``none`` mode); ``now`` (epoch seconds) is for tests.
    """
    resource = stage_arn(str(event.get("methodArn") or ""))
    if settings.authorizer_mode == "none":
        return _allow(ANONYMOUS, resource, {"sub": ANONYMOUS, "scope": ""})
    if keys is None:
        raise ConfigError("A2A_AUTHORIZER_MODE=jwt needs the issuer's keys")
    token = _bearer_token(event)
    claims = verify_token(token, keys, issuer=settings.jwt_issuer, audience=settings.jwt_audience, now=now)
    subject: str = claims["sub"]
    principal = token_principal(settings.jwt_issuer, subject)  # the issuer is the token's (checked)
    return _allow(principal, resource, {"iss": settings.jwt_issuer, "sub": subject, "scope": _scope(claims)})


def verify_token(token: str, keys: OidcKeys, *, issuer: str, audience: str = "", now: float | None = None) -> Json:
    """The claims of a valid token, or :class:`Unauthorized`. See the module docstring for what is checked.
    An empty ``audience`` skips the audience check. Claims ``sub`` is guaranteed a non-empty string.

    Signature, algorithm, ``iss`` and the time claims are :func:`~a2a_serverless.jwt.verify_jwt`'s; the
    audience (:func:`~a2a_serverless.jwt.check_oidc_audience`: Cognito's ``client_id`` counts only in an
    access token without ``aud``) and the subject are checked here."""
    # The JWT stack (joserfc, cryptography) is loaded by jwt mode only: by its first request.
    from ..jwt import JwtRejected, check_oidc_audience, verify_jwt

    try:
        claims = verify_jwt(
            token, keys.key_for, algorithms=ALGORITHMS, issuer=issuer, leeway_seconds=LEEWAY_SECONDS, now=now
        )
        if audience:
            check_oidc_audience(claims, audience)
    except JwtRejected as rejected:
        raise Unauthorized(str(rejected)) from None
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise Unauthorized("the token names no subject (sub)")
    return claims


def stage_arn(method_arn: str) -> str:
    """``arn:aws:execute-api:region:account:apiId/stage/VERB/path...`` generalised to the whole stage:
    ``arn:aws:execute-api:region:account:apiId/stage/*/*``."""
    api, sep, rest = method_arn.partition("/")
    stage = rest.partition("/")[0]
    if not sep or not stage or api.count(":") != 5 or not api.startswith("arn:") or ":execute-api:" not in api:
        raise ValueError("the event's methodArn is not an execute-api method ARN")
    return f"{api}/{stage}/*/*"


def _allow(principal: str, resource: str, context: dict[str, str]) -> Json:
    return {
        "principalId": principal,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": resource}],
        },
        "context": context,
    }


def _bearer_token(event: Json) -> str:
    headers = event.get("headers") or {}
    values = [value for name, value in headers.items() if name.lower() == "authorization"]
    multi = event.get("multiValueHeaders") or {}
    for name, listed in multi.items():
        if name.lower() == "authorization" and isinstance(listed, list) and len(listed) > 1:
            values.extend(listed)
    if not values:
        raise Unauthorized("the request has no Authorization header")
    if len({str(value) for value in values}) > 1:
        raise Unauthorized("the request has several Authorization headers")
    scheme, _, credentials = str(values[0]).strip().partition(" ")
    token = credentials.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("the Authorization header is not 'Bearer <token>'")
    return token


def _scope(claims: Json) -> str:
    """Space-separated scopes: ``scope`` (RFC 8693, Cognito), or ``scp`` as some issuers spell it."""
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return " ".join(item for item in value if isinstance(item, str))
    return ""


# ------------------------------------------------------------------------------------- handler


@dataclass(frozen=True)
class AuthorizerServices:
    """What the authorizer function uses, built once per cold start (tests build their own)."""

    settings: Settings
    keys: OidcKeys | None

    @classmethod
    def from_settings(cls, settings: Settings) -> AuthorizerServices:
        if settings.authorizer_mode != "jwt":
            return cls(settings, None)
        from .oidc import OidcKeys  # jwt mode only: the JWT stack and the HTTP client (module docstring)

        return cls(settings, OidcKeys(settings.jwt_issuer, jwks_url=settings.jwt_jwks_url))


_services: AuthorizerServices | None = None
_services_lock = threading.Lock()


def authorizer_services() -> AuthorizerServices:
    """The process's services, from ``Settings.from_env()`` on first use (no store or queue is built)."""
    global _services
    with _services_lock:
        if _services is None:
            _services = AuthorizerServices.from_settings(Settings.from_env())
        return _services


def reset_authorizer_services(services: AuthorizerServices | None = None) -> None:
    """Forget the cached services (closing their HTTP client), or install ``services`` (tests)."""
    global _services
    with _services_lock:
        if _services is not None and _services is not services and _services.keys is not None:
            _services.keys.close()
        _services = services


@logger.inject_lambda_context(clear_state=True, log_event=False)  # never log the event: it holds the token
@metrics.log_metrics
def authorizer_handler(event: Json, context: LambdaContext) -> Json:
    """Lambda entry point (REQUEST authorizer of a REST API). Returns the policy or raises
    :class:`Unauthorized`; logs the outcome and, on denial, the reason (never the token)."""
    logger.append_keys(method_arn=event.get("methodArn"))
    try:
        services = authorizer_services()
        logger.append_keys(authorizer_mode=services.settings.authorizer_mode)
        response = authorize(event, services.settings, services.keys)
    except Unauthorized as denied:
        m.AUTHORIZER_DENIED.add(1)
        logger.info("request denied", extra={"reason": denied.reason})
        raise
    except Exception as exc:
        # Not the caller's fault (configuration, the issuer's keys, a broken event): API Gateway answers 500.
        # Our own messages never quote the token; library errors on it were replaced on the way.
        m.AUTHORIZER_ERRORS.add(1)
        logger.error("the authorizer failed", extra={"error": f"{type(exc).__name__}: {exc}"})
        raise
    m.AUTHORIZER_ALLOWED.add(1)
    logger.info("request allowed", extra={"principal": response["principalId"]})
    return response
