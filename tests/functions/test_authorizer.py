"""The REQUEST authorizer (``functions/authorizer.py``) against a fake OIDC issuer served over real HTTP on
127.0.0.1: discovery document and JWKS, keys generated with joserfc, rotated and counted by the tests. The
events are the recorded REST API REQUEST authorizer event with the ``Authorization`` header swapped."""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import hmac
import io
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, RSAKey
from lambda_events import EVENTS, LambdaContext

from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.lambda_._observability import logger as powertools_logger
from a2a_serverless.lambda_.authorizer import (
    AuthorizerServices,
    Unauthorized,
    authorize,
    authorizer_services,
    reset_authorizer_services,
    stage_arn,
)
from a2a_serverless.lambda_.oidc import KeysUnavailable, OidcKeys

STAGE_ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123defg/v1/*/*"
CLIENT_ID = "3n4b5urk1ft4fl3mg5e62d9ado"
POOL_PATH = "/us-east-1_TestPool1"


# ------------------------------------------------------------------------------- a fake issuer


@dataclass
class FakeIssuer:
    """An OIDC issuer on 127.0.0.1 (Cognito-like URL with the pool id as its path)."""

    base: str
    keys: list[RSAKey | ECKey] = field(default_factory=list)
    discovery_hits: int = 0
    jwks_hits: int = 0
    requests: int = 0
    """Every request, answered or not (``down``)."""
    down: bool = False
    stall_seconds: float = 0.0
    """How long each request hangs before it is answered (an issuer too slow for the client's timeout);
    the fixture lets the hanging ones go when the test ends."""
    unstalled: threading.Event = field(default_factory=threading.Event)
    discovery_issuer: str | None = None
    """Overrides the ``issuer`` the discovery document names (a mismatching document)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return self.base + POOL_PATH

    @property
    def jwks_url(self) -> str:
        return self.url + "/.well-known/jwks.json"

    def publish(self, *keys: RSAKey | ECKey) -> None:
        with self._lock:
            self.keys = list(keys)

    def respond(self, path: str) -> tuple[int, Any]:
        with self._lock:
            self.requests += 1
            stall = self.stall_seconds
        if stall:
            self.unstalled.wait(stall)
        with self._lock:
            if self.down:
                return 503, {"message": "down"}
            if path == POOL_PATH + "/.well-known/openid-configuration":
                self.discovery_hits += 1
                return 200, {
                    "issuer": self.discovery_issuer or self.url,
                    "jwks_uri": self.jwks_url,
                    "authorization_endpoint": self.base + "/oauth2/authorize",
                    "id_token_signing_alg_values_supported": ["RS256"],
                }
            if path == POOL_PATH + "/.well-known/jwks.json":
                self.jwks_hits += 1
                return 200, {"keys": [key.as_dict(private=False) for key in self.keys]}
            return 404, {"message": "not found"}


@pytest.fixture
def issuer() -> Iterator[FakeIssuer]:
    state: dict[str, FakeIssuer] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, document = state["issuer"].respond(self.path)
            payload = json.dumps(document).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (stall_seconds)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["issuer"] = fake = FakeIssuer(f"http://127.0.0.1:{server.server_address[1]}")
    fake.publish(rsa_key("rsa-1"), ec_key("ec-1"))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.unstalled.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def keys(issuer: FakeIssuer, clock: Clock) -> Iterator[OidcKeys]:
    oidc = OidcKeys(issuer.url, clock=clock, timeout_seconds=5)
    yield oidc
    oidc.close()


@pytest.fixture
def settings(issuer: FakeIssuer) -> Settings:
    # Built directly: Settings.from_env insists on an https issuer, and this one is on loopback http.
    return Settings(store="memory", authorizer_mode="jwt", jwt_issuer=issuer.url, jwt_audience=CLIENT_ID)


# ------------------------------------------------------------------------------------ helpers


def rsa_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


def ec_key(kid: str) -> ECKey:
    return ECKey.generate_key("P-256", parameters={"kid": kid, "alg": "ES256", "use": "sig"})


def key_named(issuer: FakeIssuer, kid: str) -> RSAKey | ECKey:
    return next(key for key in issuer.keys if key.kid == kid)


def alice(issuer: FakeIssuer) -> str:
    """The principal of the usual token's caller: its issuer and subject together."""
    return f"{issuer.url}|5f1c7a3e-user-alice"


def claims_for(issuer: FakeIssuer, **overrides: Any) -> dict[str, Any]:
    """An ID-token-like claim set, valid now; ``None`` values remove the claim."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "sub": "5f1c7a3e-user-alice",
        "iss": issuer.url,
        "aud": CLIENT_ID,
        "token_use": "id",
        "iat": now,
        "auth_time": now,
        "exp": now + 3600,
    }
    claims.update(overrides)
    return {name: value for name, value in claims.items() if value is not None}


def mint(key: RSAKey | ECKey, claims: dict[str, Any], *, alg: str | None = None, kid: str | None = None) -> str:
    header = {"alg": alg or key.get("alg"), "kid": kid or key.kid, "typ": "JWT"}
    return jwt.encode(header, claims, key)


def b64(data: dict[str, Any] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def request_event(authorization: str | None) -> dict[str, Any]:
    """The recorded REQUEST authorizer event with this ``Authorization`` header (None: without one)."""
    event: dict[str, Any] = copy.deepcopy(json.loads((EVENTS / "apigw_request_authorizer.json").read_text()))
    for mapping in (event["headers"], event["multiValueHeaders"]):
        mapping.pop("Authorization")
    if authorization is not None:
        event["headers"]["Authorization"] = authorization
        event["multiValueHeaders"]["Authorization"] = [authorization]
    return event


def bearer(token: str) -> dict[str, Any]:
    return request_event(f"Bearer {token}")


def denied(event: dict[str, Any], settings: Settings, keys: OidcKeys) -> str:
    """Authorize expecting a denial; return its (loggable) reason."""
    with pytest.raises(Unauthorized) as caught:
        authorize(event, settings, keys)
    # The exact message is what makes API Gateway answer 401.
    assert str(caught.value) == "Unauthorized"
    assert isinstance(caught.value, Exception)
    return caught.value.reason


# ---------------------------------------------------------------------------------- none mode


def test_none_mode_allows_every_request_as_anonymous() -> None:
    settings = Settings(store="memory")
    assert settings.authorizer_mode == "none"
    for event in (request_event(None), request_event("Bearer whatever"), request_event("Basic Zm9vOmJhcg==")):
        assert authorize(event, settings, None) == {
            "principalId": "anonymous",
            "policyDocument": {
                "Version": "2012-10-17",
                "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": STAGE_ARN}],
            },
            "context": {"sub": "anonymous", "scope": ""},
        }


# ----------------------------------------------------------------------------------- jwt mode


def test_a_valid_rs256_token_is_allowed_as_its_issuer_and_subject_on_the_whole_stage(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    result = authorize(bearer(token), settings, keys)
    assert result == {
        "principalId": f"{issuer.url}|5f1c7a3e-user-alice",
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": STAGE_ARN}],
        },
        "context": {"iss": issuer.url, "sub": "5f1c7a3e-user-alice", "scope": ""},
    }
    # Discovery once, JWKS once; the next request is served from the warm cache.
    authorize(bearer(token), settings, keys)
    assert (issuer.discovery_hits, issuer.jwks_hits) == (1, 1)


def test_an_es256_token_is_allowed_and_the_header_scheme_is_case_insensitive(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    token = mint(key_named(issuer, "ec-1"), claims_for(issuer, sub="user-bob", aud=["other", CLIENT_ID]))
    assert authorize(request_event(f"bearer {token}"), settings, keys)["principalId"] == f"{issuer.url}|user-bob"


def test_a_token_whose_subject_is_anonymous_is_not_the_anonymous_caller(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    # Given a token of the issuer whose subject happens to be "anonymous"
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer, sub="anonymous"))
    # When it is authorized
    result = authorize(bearer(token), settings, keys)
    # Then its caller is named by issuer and subject: not the unauthenticated scope of Open mode
    assert result["principalId"] == f"{issuer.url}|anonymous"
    assert result["principalId"] != authorize(request_event(None), Settings(store="memory"), None)["principalId"]


def test_a_cognito_access_token_with_client_id_instead_of_aud_is_allowed(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    claims = claims_for(
        issuer, aud=None, token_use="access", client_id=CLIENT_ID, scope="a2a/tasks.read a2a/tasks.write"
    )
    result = authorize(bearer(mint(key_named(issuer, "rsa-1"), claims)), settings, keys)
    assert result["principalId"] == alice(issuer)
    assert result["context"] == {
        "iss": issuer.url,
        "sub": "5f1c7a3e-user-alice",
        "scope": "a2a/tasks.read a2a/tasks.write",
    }


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({}, id="id-token"),
        pytest.param({"token_use": None}, id="non-cognito-token"),
        pytest.param({"token_use": "access", "client_id": "another-client"}, id="access-token-with-our-aud"),
    ],
)
def test_a_token_whose_aud_names_the_audience_is_allowed(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, overrides: dict[str, Any]
) -> None:
    """``aud`` decides when present: a Cognito ID token (its aud is the app client id), another
    issuer's token, or an access token bound to this API."""
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer, **overrides))
    assert authorize(bearer(token), settings, keys)["principalId"] == alice(issuer)


def test_without_a_configured_audience_any_audience_is_accepted(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    open_settings = dataclasses.replace(settings, jwt_audience="")
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer, aud="someone-else"))
    assert authorize(bearer(token), open_settings, keys)["principalId"] == alice(issuer)


def test_clock_skew_within_the_leeway_is_tolerated(issuer: FakeIssuer, settings: Settings, keys: OidcKeys) -> None:
    now = int(time.time())
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer, exp=now - 30, iat=now + 30, nbf=now + 30))
    assert authorize(bearer(token), settings, keys)["principalId"] == alice(issuer)


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        pytest.param({"exp": -61}, "expired", id="expired"),
        pytest.param({"exp": None}, "no expiry", id="no-exp"),
        pytest.param({"exp": "tomorrow"}, "not a number", id="exp-not-numeric"),
        pytest.param({"nbf": 120}, "not valid yet", id="nbf-future"),
        pytest.param({"iat": 120}, "issued in the future", id="iat-future"),
        pytest.param({"iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other"}, "iss", id="wrong-issuer"),
        pytest.param({"aud": "another-client"}, "audience", id="wrong-audience"),
        pytest.param({"aud": None}, "audience", id="no-audience"),
        pytest.param(
            {"aud": None, "token_use": "access", "client_id": "another-client"}, "audience", id="wrong-client-id"
        ),
        # client_id counts only when there is no aud: a token for another API is not ours by its client.
        pytest.param(
            {"aud": "https://other-api.example", "token_use": "access", "client_id": CLIENT_ID},
            "audience",
            id="other-aud-with-our-client-id",
        ),
        pytest.param({"aud": ["other-api"], "client_id": CLIENT_ID}, "audience", id="id-token-other-aud-our-client-id"),
        # Without aud, only a Cognito access token counts by its client_id.
        pytest.param({"aud": None, "client_id": CLIENT_ID}, "audience", id="id-token-without-aud"),
        pytest.param({"aud": None, "token_use": None, "client_id": CLIENT_ID}, "audience", id="no-token-use-no-aud"),
        pytest.param({"aud": None, "token_use": "access"}, "audience", id="access-token-without-client-id"),
        pytest.param({"token_use": "refresh"}, "token_use", id="not-an-access-or-id-token"),
        pytest.param({"token_use": ["access"]}, "token_use", id="token-use-not-a-string"),
        pytest.param({"sub": None}, "subject", id="no-sub"),
        pytest.param({"sub": ""}, "subject", id="empty-sub"),
    ],
)
def test_tokens_with_bad_claims_are_unauthorized(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, overrides: dict[str, Any], reason: str
) -> None:
    now = int(time.time())
    relative = {"exp", "nbf", "iat"}
    claims = claims_for(
        issuer, **{k: now + v if k in relative and isinstance(v, int) else v for k, v in overrides.items()}
    )
    assert reason in denied(bearer(mint(key_named(issuer, "rsa-1"), claims)), settings, keys)


def test_an_hs256_token_forged_with_the_public_key_is_refused_before_any_key_is_fetched(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    # Signed by hand: joserfc itself refuses to use a public key as an HMAC secret.
    public = key_named(issuer, "rsa-1").as_pem(private=False)
    signing_input = f"{b64({'alg': 'HS256', 'kid': 'rsa-1', 'typ': 'JWT'})}.{b64(claims_for(issuer))}"
    forged = f"{signing_input}.{b64(hmac.new(public, signing_input.encode(), hashlib.sha256).digest())}"
    assert "RS256 or ES256" in denied(bearer(forged), settings, keys)
    assert (issuer.discovery_hits, issuer.jwks_hits) == (0, 0)


def test_an_unsigned_alg_none_token_is_refused(issuer: FakeIssuer, settings: Settings, keys: OidcKeys) -> None:
    unsigned = f"{b64({'alg': 'none', 'kid': 'rsa-1', 'typ': 'JWT'})}.{b64(claims_for(issuer))}."
    assert "RS256 or ES256" in denied(bearer(unsigned), settings, keys)
    # Also with a declared RS256 but no signature at all.
    stripped = mint(key_named(issuer, "rsa-1"), claims_for(issuer)).rpartition(".")[0] + "."
    assert "signature" in denied(bearer(stripped), settings, keys)


def test_a_tampered_payload_or_a_look_alike_key_is_refused(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    header, _, signature = mint(key_named(issuer, "rsa-1"), claims_for(issuer)).split(".")
    tampered = f"{header}.{b64(claims_for(issuer, sub='admin'))}.{signature}"
    assert "signature" in denied(bearer(tampered), settings, keys)
    impostor = mint(rsa_key("rsa-1"), claims_for(issuer))  # same kid, someone else's key
    assert "signature" in denied(bearer(impostor), settings, keys)
    # An RS256 token naming the EC key: the kid exists but cannot verify that algorithm.
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer), kid="ec-1")
    assert "unknown key" in denied(bearer(token), settings, keys)


def test_an_unknown_kid_refetches_once_then_is_unauthorized(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, clock: Clock
) -> None:
    authorize(bearer(mint(key_named(issuer, "rsa-1"), claims_for(issuer))), settings, keys)
    assert issuer.jwks_hits == 1
    stranger = rsa_key("kid-nobody-published")
    clock.now += 61
    assert "unknown key" in denied(bearer(mint(stranger, claims_for(issuer))), settings, keys)
    assert issuer.jwks_hits == 2  # one refetch
    for _ in range(5):  # a flood of made-up kids within the minute does not reach the issuer
        clock.now += 5
        assert "unknown key" in denied(bearer(mint(stranger, claims_for(issuer))), settings, keys)
    assert (issuer.discovery_hits, issuer.jwks_hits) == (1, 2)


def test_a_key_rotated_in_at_the_issuer_is_picked_up_by_a_refetch(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, clock: Clock
) -> None:
    old = key_named(issuer, "rsa-1")
    assert authorize(bearer(mint(old, claims_for(issuer))), settings, keys)["principalId"]
    new = rsa_key("rsa-2")
    issuer.publish(old, new)
    clock.now += 61
    result = authorize(bearer(mint(new, claims_for(issuer, sub="after-rotation"))), settings, keys)
    assert result["principalId"] == f"{issuer.url}|after-rotation"
    assert issuer.jwks_hits == 2
    # Keys retired at the issuer stop being trusted once the cache is older than an hour.
    issuer.publish(new)
    clock.now += 3600
    assert "unknown key" in denied(bearer(mint(old, claims_for(issuer))), settings, keys)


def test_a_failed_refetch_keeps_the_cached_keys(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, clock: Clock
) -> None:
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    authorize(bearer(token), settings, keys)
    issuer.down = True
    clock.now += 3601
    assert authorize(bearer(token), settings, keys)["principalId"] == alice(issuer)


def test_a_failed_refresh_of_stale_keys_is_tried_again_after_the_short_interval(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, clock: Clock
) -> None:
    # Given keys cached from an issuer that then retires its key for a new one, and goes down
    old = key_named(issuer, "rsa-1")
    retired = mint(old, claims_for(issuer))
    authorize(bearer(retired), settings, keys)
    new = rsa_key("rsa-2")
    issuer.publish(new)
    issuer.down = True
    # When the cache is stale and its refresh fails
    clock.now += 3601
    requests = issuer.requests
    assert authorize(bearer(retired), settings, keys)["principalId"] == alice(issuer)  # the cached keys serve
    assert issuer.requests == requests + 1
    # Then it is not tried again within the short interval
    clock.now += 59
    assert authorize(bearer(retired), settings, keys)["principalId"] == alice(issuer)
    assert issuer.requests == requests + 1
    # And once the issuer is back and the short interval has passed (not another hour), the retired
    # key is refused and the new one is trusted
    issuer.down = False
    clock.now += 1
    assert "unknown key" in denied(bearer(retired), settings, keys)
    assert issuer.requests == requests + 2
    assert authorize(bearer(mint(new, claims_for(issuer, sub="new"))), settings, keys)["principalId"].endswith("|new")


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param(None, id="missing"),
        pytest.param("", id="empty"),
        pytest.param("Bearer", id="no-token"),
        pytest.param("Bearer   ", id="blank-token"),
        pytest.param("Basic dXNlcjpwYXNz", id="basic"),
        pytest.param("Token abc.def.ghi", id="other-scheme"),
        pytest.param("Bearer not-a-jwt", id="not-a-jwt"),
        pytest.param("Bearer a.b.c", id="garbage-segments"),
        pytest.param("Bearer eyJ0eXAiOiJKV1QifQ.e30.", id="no-alg"),
        pytest.param("Bearer two tokens", id="two-words"),
    ],
)
def test_missing_or_malformed_authorization_is_unauthorized(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, authorization: str | None
) -> None:
    denied(request_event(authorization), settings, keys)
    assert (issuer.discovery_hits, issuer.jwks_hits) == (0, 0)


def test_a_token_without_kid_is_refused(issuer: FakeIssuer, settings: Settings, keys: OidcKeys) -> None:
    token = jwt.encode({"alg": "RS256"}, claims_for(issuer), key_named(issuer, "rsa-1"))
    assert "kid" in denied(bearer(token), settings, keys)


def test_conflicting_authorization_headers_are_refused(issuer: FakeIssuer, settings: Settings, keys: OidcKeys) -> None:
    good = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    event = bearer(good)
    event["multiValueHeaders"]["Authorization"] = [f"Bearer {good}", "Bearer other.token.here"]
    assert "several" in denied(event, settings, keys)


# ------------------------------------------------------------------------------- key retrieval


def test_issuer_unreachable_is_an_error_not_a_denial(issuer: FakeIssuer, settings: Settings, keys: OidcKeys) -> None:
    issuer.down = True
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    with pytest.raises(KeysUnavailable):  # API Gateway answers 500: the caller may retry
        authorize(bearer(token), settings, keys)
    issuer.down = False
    with pytest.raises(KeysUnavailable):  # the failure is remembered for a while
        authorize(bearer(token), settings, keys)


def test_a_failed_fetch_is_remembered_so_requests_fail_at_once_while_the_issuer_is_down(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, clock: Clock
) -> None:
    # Given an issuer that is down, and nothing cached
    issuer.down = True
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    forged = mint(rsa_key("rsa-1"), claims_for(issuer, sub="admin"))
    with pytest.raises(KeysUnavailable, match="failed"):
        authorize(bearer(token), settings, keys)
    assert issuer.requests == 1

    # When requests keep coming for the next 29 seconds, genuine and forged alike
    for _ in range(29):
        clock.now += 1
        for attempt in (token, forged):
            # Then each is refused with the same error, without asking the issuer again
            with pytest.raises(KeysUnavailable, match="failed"):
                authorize(bearer(attempt), settings, keys)
    assert issuer.requests == 1

    # And once 30 seconds have passed, the next request asks again (and succeeds if the issuer is back)
    issuer.down = False
    clock.now += 1
    assert authorize(bearer(token), settings, keys)["principalId"] == alice(issuer)
    assert issuer.requests == 3  # discovery and JWKS
    assert "signature" in denied(bearer(forged), settings, keys)


def test_a_slow_issuer_costs_one_request_the_timeout_not_every_request(
    issuer: FakeIssuer, settings: Settings, clock: Clock
) -> None:
    # Given an issuer that holds every answer for a minute, far beyond the client's 0.2 s timeout
    issuer.stall_seconds = 60.0
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    keys = OidcKeys(issuer.url, clock=clock, timeout_seconds=0.2)
    try:
        # When a request needs the keys
        with pytest.raises(KeysUnavailable):
            authorize(bearer(token), settings, keys)
        # Then it asked the issuer and gave up at the client's timeout, unanswered (a client that
        # waited for the answer would have gone on to the JWKS and succeeded)
        assert (issuer.requests, issuer.discovery_hits) == (1, 0)
        # When ten more requests come right after it
        for _ in range(10):
            with pytest.raises(KeysUnavailable):
                authorize(bearer(token), settings, keys)
    finally:
        keys.close()
    # Then they were refused without waiting for the issuer: none of them asked it
    assert issuer.requests == 1


def test_an_issuer_failing_after_keys_were_cached_changes_nothing_for_valid_tokens(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys, clock: Clock
) -> None:
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    authorize(bearer(token), settings, keys)
    issuer.down = True
    clock.now += 61
    stranger = mint(rsa_key("kid-nobody-published"), claims_for(issuer))
    assert "unknown key" in denied(bearer(stranger), settings, keys)  # one refetch, failed: the cache stays
    assert authorize(bearer(token), settings, keys)["principalId"] == alice(issuer)


def test_a_discovery_document_for_another_issuer_is_rejected(
    issuer: FakeIssuer, settings: Settings, keys: OidcKeys
) -> None:
    issuer.discovery_issuer = "https://evil.example"
    with pytest.raises(KeysUnavailable, match="discovery"):
        authorize(bearer(mint(key_named(issuer, "rsa-1"), claims_for(issuer))), settings, keys)
    assert issuer.jwks_hits == 0


def test_a_configured_jwks_url_skips_discovery(issuer: FakeIssuer, settings: Settings) -> None:
    with_url = dataclasses.replace(settings, jwt_jwks_url=issuer.jwks_url)
    services = AuthorizerServices.from_settings(with_url)
    assert services.keys is not None
    try:
        token = mint(key_named(issuer, "ec-1"), claims_for(issuer))
        assert authorize(bearer(token), with_url, services.keys)["principalId"] == alice(issuer)
        assert (issuer.discovery_hits, issuer.jwks_hits) == (0, 1)
    finally:
        services.keys.close()


def test_keys_are_fetched_once_under_concurrency(issuer: FakeIssuer, settings: Settings, keys: OidcKeys) -> None:
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    results: list[str] = []

    def call() -> None:
        results.append(authorize(bearer(token), settings, keys)["principalId"])

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == [alice(issuer)] * 8
    assert (issuer.discovery_hits, issuer.jwks_hits) == (1, 1)


# -------------------------------------------------------------------------------- method ARNs


@pytest.mark.parametrize(
    ("method_arn", "expected"),
    [
        ("arn:aws:execute-api:us-east-1:123456789012:abc123defg/v1/GET/acme/tasks/task-123", STAGE_ARN),
        ("arn:aws:execute-api:us-east-1:123456789012:abc123defg/v1/POST/", STAGE_ARN),
        ("arn:aws:execute-api:us-east-1:123456789012:abc123defg/v1/POST/message:send", STAGE_ARN),
        (
            "arn:aws-cn:execute-api:cn-north-1:123456789012:api9/prod/GET/tasks",
            "arn:aws-cn:execute-api:cn-north-1:123456789012:api9/prod/*/*",
        ),
    ],
)
def test_the_policy_covers_the_whole_stage(method_arn: str, expected: str) -> None:
    assert stage_arn(method_arn) == expected


@pytest.mark.parametrize(
    "method_arn", ["", "*", "arn:aws:execute-api:us-east-1:123456789012:abc123defg", "arn:aws:s3:::bucket/v1/x"]
)
def test_a_malformed_method_arn_is_an_error(method_arn: str) -> None:
    with pytest.raises(ValueError, match="methodArn"):
        stage_arn(method_arn)


# ----------------------------------------------------------------------------------- settings


def test_settings_from_env() -> None:
    base = {"A2A_STORE": "memory"}
    assert Settings.from_env(base).authorizer_mode == "none"
    cognito = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_AbCdEf123"
    settings = Settings.from_env(
        {**base, "A2A_AUTHORIZER_MODE": "jwt", "A2A_JWT_ISSUER": cognito, "A2A_JWT_AUDIENCE": CLIENT_ID}
    )
    assert (settings.authorizer_mode, settings.jwt_issuer, settings.jwt_audience) == ("jwt", cognito, CLIENT_ID)
    for bad, message in [
        ({"A2A_AUTHORIZER_MODE": "jwt"}, "A2A_JWT_ISSUER"),
        ({"A2A_AUTHORIZER_MODE": "jwt", "A2A_JWT_ISSUER": cognito}, "A2A_JWT_AUDIENCE is required"),
        ({"A2A_AUTHORIZER_MODE": "jwt", "A2A_JWT_ISSUER": cognito, "A2A_JWT_AUDIENCE": ""}, "A2A_JWT_AUDIENCE"),
        ({"A2A_AUTHORIZER_MODE": "jwt", "A2A_JWT_ISSUER": "http://127.0.0.1:9/pool"}, "A2A_JWT_ISSUER"),
        ({"A2A_AUTHORIZER_MODE": "jwt", "A2A_JWT_ISSUER": "cognito-idp.example/pool"}, "A2A_JWT_ISSUER"),
        (
            {
                "A2A_AUTHORIZER_MODE": "jwt",
                "A2A_JWT_ISSUER": cognito,
                "A2A_JWT_AUDIENCE": CLIENT_ID,
                "A2A_JWT_JWKS_URL": "http://x/",
            },
            "JWKS_URL",
        ),
        ({"A2A_AUTHORIZER_MODE": "cognito"}, "A2A_AUTHORIZER_MODE"),
    ]:
        with pytest.raises(ConfigError, match=message):
            Settings.from_env({**base, **bad})


# ------------------------------------------------------------------------------------ handler


@pytest.fixture
def installed(settings: Settings, keys: OidcKeys) -> Iterator[AuthorizerServices]:
    services = AuthorizerServices(settings, keys)
    reset_authorizer_services(services)
    yield services
    reset_authorizer_services()


def test_the_entry_point_builds_its_services_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from a2a_serverless.functions.authorizer import handler

    monkeypatch.setenv("A2A_STORE", "memory")
    monkeypatch.delenv("A2A_AUTHORIZER_MODE", raising=False)
    reset_authorizer_services()
    try:
        assert handler(request_event(None), LambdaContext())["principalId"] == "anonymous"
        cognito = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_AbCdEf123"
        monkeypatch.setenv("A2A_AUTHORIZER_MODE", "jwt")
        monkeypatch.setenv("A2A_JWT_ISSUER", cognito)
        monkeypatch.setenv("A2A_JWT_AUDIENCE", CLIENT_ID)
        reset_authorizer_services()
        services = authorizer_services()
        assert services.keys is not None
        assert services.keys.issuer == cognito
        assert authorizer_services() is services  # once per cold start
        monkeypatch.setenv("A2A_JWT_ISSUER", "http://insecure.example")
        reset_authorizer_services()
        with pytest.raises(ConfigError):
            handler(request_event(None), LambdaContext())
    finally:
        reset_authorizer_services()


@pytest.mark.usefixtures("installed")
def test_the_handler_allows_and_denies_without_ever_logging_the_token(
    issuer: FakeIssuer,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    from a2a_serverless.functions.authorizer import handler

    caplog.set_level(logging.DEBUG)
    emitted = io.StringIO()
    as_in_cloudwatch = logging.StreamHandler(emitted)
    as_in_cloudwatch.setFormatter(powertools_logger.registered_formatter)
    logging.getLogger(powertools_logger.name).addHandler(as_in_cloudwatch)
    request.addfinalizer(lambda: logging.getLogger(powertools_logger.name).removeHandler(as_in_cloudwatch))
    good = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    expired = mint(key_named(issuer, "rsa-1"), claims_for(issuer, exp=int(time.time()) - 3600))
    forged = jwt.encode(
        {"alg": "HS256", "kid": "rsa-1"}, claims_for(issuer), OctKey.import_key(b"0123456789abcdef0123456789abcdef")
    )

    assert handler(bearer(good), LambdaContext())["principalId"] == alice(issuer)
    for token in (expired, forged, "not-a-jwt-but-secret-looking"):
        with pytest.raises(Exception, match=r"^Unauthorized$"):
            handler(bearer(token), LambdaContext())
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        handler(request_event(None), LambdaContext())

    # Every record's attributes, and each line as the Powertools JSON formatter wrote it when it was emitted.
    logged = [json.dumps(record.__dict__, default=str) for record in caplog.records] + emitted.getvalue().splitlines()
    assert '"message":"request denied"' in emitted.getvalue()
    assert any("request allowed" in line for line in logged)
    assert any("expired" in line for line in logged)
    out, err = capfd.readouterr()
    for token in (good, expired, forged, "not-a-jwt-but-secret-looking"):
        # Neither the whole token nor its signature (the part that makes it a credential).
        for secret in (token, token.rpartition(".")[2]):
            assert all(secret not in line for line in logged)
            assert secret not in out
            assert secret not in err
            assert secret not in caplog.text


@pytest.mark.usefixtures("installed")
def test_while_the_issuer_is_down_the_entry_point_fails_at_once_with_an_error_not_a_denial(
    issuer: FakeIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    from a2a_serverless.functions.authorizer import handler

    issuer.down = True
    token = mint(key_named(issuer, "rsa-1"), claims_for(issuer))
    for _ in range(3):
        # Not "Unauthorized" (401: the token is fine): any other error makes API Gateway answer 500
        with pytest.raises(KeysUnavailable) as caught:
            handler(bearer(token), LambdaContext())
        assert str(caught.value) != "Unauthorized"
        assert caught.value.__cause__ is None
        assert caught.value.__suppress_context__  # raised 'from None': no library traceback chained
    assert issuer.requests == 1
    assert caplog.text.count("the authorizer failed") == 3
