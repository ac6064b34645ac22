"""Notification signing (the agent) and verification (a receiver): round trips, every rejection, rotation,
the bootstrap race, the SSM key source (moto, in process) and the JWKS cache over real local HTTP."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import httpx
import pytest
from botocore.exceptions import ClientError
from joserfc import jws
from joserfc.jwk import ECKey, thumbprint
from moto import mock_aws

from a2a_serverless.push.signing import (
    JWKS_PATH,
    SIGNATURE_HEADER,
    MemoryKeySource,
    NotificationSigner,
    SsmKeySource,
    generate_key_set_text,
    rotate_keys,
)
from a2a_serverless.push.verify import (
    JwksCache,
    NotificationVerificationError,
    ReplayGuard,
    VerifiedNotification,
    verify_notification,
)

ISSUER = "https://agent.example.com"
AUDIENCE = "https://receiver.example.com/a2a/hook"
TASK_ID = "task-1"
T0 = 1_800_000_000.0


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class CountingSource(MemoryKeySource):
    """A memory source that counts reads, and can hold every reader at a barrier (the bootstrap race)."""

    def __init__(self, text: str | None = None, barrier: threading.Barrier | None = None) -> None:
        super().__init__(text)
        self.loads = 0
        self.creates = 0
        self._barrier = barrier

    def load(self) -> str | None:
        self.loads += 1
        text = super().load()
        if self._barrier is not None and text is None:  # hold only the readers that find the store empty
            self._barrier.wait(timeout=5)
        return text

    def create(self, text: str) -> str:
        self.creates += 1
        return super().create(text)


def status_update(task_id: str = TASK_ID, state: str = "TASK_STATE_WORKING") -> bytes:
    return json.dumps(
        {"statusUpdate": {"taskId": task_id, "contextId": "ctx-1", "status": {"state": state}}},
        separators=(",", ":"),
    ).encode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def header_of(token: str) -> dict[str, Any]:
    return dict(jws.extract_compact(token.encode()).headers())


def claims_of(token: str) -> dict[str, Any]:
    payload = jws.extract_compact(token.encode()).payload
    assert payload is not None
    return dict(json.loads(payload))


@dataclass
class Agent:
    clock: FakeClock
    source: CountingSource
    signer: NotificationSigner

    def sign(self, body: bytes, *, task_id: str = TASK_ID, audience: str = AUDIENCE) -> str:
        return self.signer.sign(audience=audience, task_id=task_id, event_id="evt-7", body=body)

    def verify(self, headers: dict[str, str], body: bytes, **overrides: Any) -> VerifiedNotification:
        options: dict[str, Any] = {
            "keys": self.signer.jwks(),
            "issuer": ISSUER,
            "audience": AUDIENCE,
            "now": self.clock.now,
        }
        options.update(overrides)
        return verify_notification(headers, body, **options)


@pytest.fixture
def agent() -> Agent:
    clock = FakeClock()
    source = CountingSource()
    return Agent(clock, source, NotificationSigner(source, issuer=ISSUER, clock=clock))


# ---------------------------------------------------------------------------------------- round trip


def test_a_signed_notification_verifies_and_says_what_it_vouches_for(agent: Agent) -> None:
    # Given a notification body and the agent's signature over it
    body = status_update()
    token = agent.sign(body)

    # When the receiver verifies it against the published JWKS
    note = agent.verify({SIGNATURE_HEADER: token}, body)

    # Then the claims come back, bound to this body, this receiver and a short lifetime
    assert (note.task_id, note.event_id, note.issued_at) == (TASK_ID, "evt-7", T0)
    assert note.claims["iss"] == ISSUER
    assert note.claims["aud"] == AUDIENCE
    assert note.claims["exp"] == int(T0) + 300
    assert note.claims["bodySha256"] == b64url(hashlib.sha256(body).digest())
    assert uuid.UUID(hex=note.jti).version == 4
    assert header_of(token) == {"alg": "ES256", "typ": "JWT", "kid": header_of(token)["kid"]}


def test_the_jwks_is_public_only_and_kids_are_thumbprints(agent: Agent) -> None:
    # Given a signer that has bootstrapped its key
    token = agent.sign(status_update())

    # When the JWKS is published
    jwks = agent.signer.jwks()

    # Then it holds one public EC key, no private part, whose kid is its RFC 7638 thumbprint
    (published,) = jwks["keys"]
    assert set(published) == {"kty", "crv", "x", "y", "kid", "alg", "use"}
    assert (published["kty"], published["crv"], published["alg"], published["use"]) == ("EC", "P-256", "ES256", "sig")
    assert published["kid"] == thumbprint({k: published[k] for k in ("kty", "crv", "x", "y")})
    assert header_of(token)["kid"] == published["kid"]
    # and the stored (private) set really does hold d: the JWKS stripped it
    stored = json.loads(agent.source.load() or "")
    assert "d" in stored["keys"][0]
    assert isinstance(stored["keys"][0]["created"], int)


def test_every_signature_has_a_fresh_jti(agent: Agent) -> None:
    body = status_update()
    jtis = {claims_of(agent.sign(body))["jti"] for _ in range(5)}
    assert len(jtis) == 5


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(
            {"task": {"id": TASK_ID, "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}, id="task"
        ),
        pytest.param(
            {"message": {"messageId": "m", "taskId": TASK_ID, "role": "ROLE_AGENT", "parts": []}}, id="message"
        ),
        pytest.param({"statusUpdate": {"taskId": TASK_ID, "contextId": "c", "status": {}}}, id="status-update"),
        pytest.param({"artifactUpdate": {"taskId": TASK_ID, "contextId": "c", "artifact": {}}}, id="artifact-update"),
    ],
)
def test_each_stream_response_kind_is_matched_to_the_task_claim(agent: Agent, document: dict[str, Any]) -> None:
    body = json.dumps(document).encode()
    assert agent.verify({SIGNATURE_HEADER: agent.sign(body)}, body).task_id == TASK_ID


def test_headers_are_case_insensitive_and_bearer_is_the_fallback(agent: Agent) -> None:
    body = status_update()
    token = agent.sign(body)

    # Given the token in Authorization (the topics doc's flow), with any spelling of the names
    assert agent.verify({"authorization": f"Bearer {token}"}, body).task_id == TASK_ID
    assert agent.verify({"AUTHORIZATION": f"bearer  {token}"}, body).task_id == TASK_ID
    assert agent.verify({SIGNATURE_HEADER.lower(): token}, body).task_id == TASK_ID
    # And our header wins over an Authorization that carries the webhook's own credentials
    both = {SIGNATURE_HEADER: token, "Authorization": "Bearer the-clients-own-webhook-token"}
    assert agent.verify(both, body).task_id == TASK_ID


# ---------------------------------------------------------------------------------------- rejections


def forged(agent: Agent, alg: str, body: bytes) -> str:
    """A token with valid-looking claims and the real kid, 'signed' with ``alg`` by an attacker who only
    has the public JWKS (the classic alg-confusion attacks)."""
    kid = agent.signer.jwks()["keys"][0]["kid"]
    claims = claims_of(agent.sign(body))
    signing_input = (
        b64url(json.dumps({"alg": alg, "typ": "JWT", "kid": kid}).encode()) + "." + b64url(json.dumps(claims).encode())
    )
    if alg == "none":
        return signing_input + "."
    public_pem = ECKey.import_key(agent.signer.jwks()["keys"][0]).as_pem(private=False)
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64url(mac)


Case = Callable[[Agent], tuple[dict[str, str], bytes, dict[str, Any]]]


def tampered_body(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    token = agent.sign(status_update(state="TASK_STATE_WORKING"))
    return {SIGNATURE_HEADER: token}, status_update(state="TASK_STATE_COMPLETED"), {}  # same task, other body


def wrong_audience(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: agent.sign(body, audience="https://someone-else.example/hook")}, body, {}


def wrong_issuer(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: agent.sign(body)}, body, {"issuer": "https://another-agent.example.com"}


def expired(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    # max_age raised so only exp can be what rejects it: 300 s lifetime + 30 s leeway, and one more
    return {SIGNATURE_HEADER: agent.sign(body)}, body, {"now": T0 + 331, "max_age_seconds": 3600}


def too_old(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: agent.sign(body)}, body, {"now": T0 + 100, "max_age_seconds": 60}


def issued_in_the_future(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: agent.sign(body)}, body, {"now": T0 - 31}


def unknown_kid(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    impostor = NotificationSigner(MemoryKeySource(), issuer=ISSUER, clock=agent.clock)
    token = impostor.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="evt-7", body=body)
    return {SIGNATURE_HEADER: token}, body, {}


def impostor_reusing_the_kid(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    # Another key set whose token claims the agent's kid: the signature itself must fail.
    body = status_update()
    impostor = NotificationSigner(MemoryKeySource(), issuer=ISSUER, clock=agent.clock)
    token = impostor.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="evt-7", body=body)
    real_kid = agent.signer.jwks()["keys"][0]["kid"]
    head, payload, signature = token.split(".")
    head = b64url(json.dumps({"alg": "ES256", "typ": "JWT", "kid": real_kid}).encode())
    return {SIGNATURE_HEADER: f"{head}.{payload}.{signature}"}, body, {}


def alg_none(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: forged(agent, "none", body)}, body, {}


def hs256_with_public_key(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: forged(agent, "HS256", body)}, body, {}


def task_mismatch(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update(task_id=TASK_ID)
    return {SIGNATURE_HEADER: agent.sign(body, task_id="task-2")}, body, {}


def not_a_stream_response(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    # two payloads at once: which task is it about? Signed correctly, so only the body check can refuse it
    body = json.dumps({"task": {"id": TASK_ID}, "statusUpdate": {"taskId": TASK_ID}}).encode()
    return {SIGNATURE_HEADER: agent.sign(body)}, body, {}


def missing_header(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    agent.sign(status_update())
    return {"Content-Type": "application/json"}, status_update(), {}


def basic_authorization(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {"Authorization": "Basic " + agent.sign(body)}, body, {}


def garbage_token(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    agent.sign(status_update())
    return {SIGNATURE_HEADER: "not-a.jwt"}, status_update(), {}


def truncated_signature(agent: Agent) -> tuple[dict[str, str], bytes, dict[str, Any]]:
    body = status_update()
    return {SIGNATURE_HEADER: agent.sign(body)[:-8]}, body, {}


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        pytest.param(tampered_body, "bodySha256", id="tampered-body"),
        pytest.param(wrong_audience, "aud", id="wrong-audience"),
        pytest.param(wrong_issuer, "iss", id="wrong-issuer"),
        pytest.param(expired, "expired", id="expired"),
        pytest.param(too_old, "too old", id="older-than-max-age"),
        pytest.param(issued_in_the_future, "future", id="issued-in-the-future"),
        pytest.param(unknown_kid, "unknown key", id="other-key-set-unknown-kid"),
        pytest.param(impostor_reusing_the_kid, "signature is invalid", id="other-key-set-claiming-our-kid"),
        pytest.param(alg_none, "must use ES256", id="alg-none"),
        pytest.param(hs256_with_public_key, "must use ES256", id="hs256-forged-with-public-key"),
        pytest.param(task_mismatch, "another task", id="task-claim-vs-body"),
        pytest.param(not_a_stream_response, "another task", id="body-not-one-stream-response"),
        pytest.param(missing_header, "carries no signature", id="missing-header"),
        pytest.param(basic_authorization, "carries no signature", id="authorization-not-bearer"),
        pytest.param(garbage_token, "not a well-formed JWT", id="garbage-token"),
        pytest.param(truncated_signature, "signature is invalid", id="truncated-signature"),
    ],
)
def test_a_notification_failing_one_check_is_rejected_for_that_reason(agent: Agent, case: Case, reason: str) -> None:
    # Given a notification that is right in every respect but one
    headers, body, overrides = case(agent)

    # When / Then the receiver refuses it, naming that one check
    with pytest.raises(NotificationVerificationError, match=reason) as caught:
        agent.verify(headers, body, **overrides)
    # and the message never echoes the token
    token = headers.get(SIGNATURE_HEADER, "")
    assert not token or token not in str(caught.value)


def test_the_edges_of_the_time_window_are_accepted(agent: Agent) -> None:
    body = status_update()
    headers = {SIGNATURE_HEADER: agent.sign(body)}
    agent.verify(headers, body, now=T0 + 330)  # exp + leeway
    agent.verify(headers, body, now=T0 - 30)  # clock skew the other way


def test_a_replayed_notification_is_rejected_but_the_first_delivery_is_not(agent: Agent) -> None:
    # Given a receiver remembering the jti of what it accepted
    guard = ReplayGuard(clock=agent.clock)
    body = status_update()
    headers = {SIGNATURE_HEADER: agent.sign(body)}
    agent.verify(headers, body, replay_guard=guard)

    # When the same request arrives again, Then it is refused
    with pytest.raises(NotificationVerificationError, match="replayed"):
        agent.verify(headers, body, replay_guard=guard)
    # while a fresh signature of the same body (a retry by the agent) is accepted
    agent.verify({SIGNATURE_HEADER: agent.sign(body)}, body, replay_guard=guard)


def test_a_rejected_token_does_not_use_up_its_jti(agent: Agent) -> None:
    guard = ReplayGuard(clock=agent.clock)
    body = status_update()
    headers = {SIGNATURE_HEADER: agent.sign(body)}
    with pytest.raises(NotificationVerificationError, match="bodySha256"):
        agent.verify(headers, b'{"statusUpdate":{"taskId":"task-1"}}', replay_guard=guard)
    agent.verify(headers, body, replay_guard=guard)
    assert len(guard) == 1


def test_the_replay_guard_forgets_expired_entries() -> None:
    clock = FakeClock()
    guard = ReplayGuard(clock=clock)
    assert guard.check_and_remember("a", T0 + 10)
    assert guard.check_and_remember("b", T0 + 100)
    assert not guard.check_and_remember("a", T0 + 10)
    clock.now = T0 + 11
    assert guard.check_and_remember("c", T0 + 200)
    assert len(guard) == 2  # "a" pruned, "b" and "c" kept
    assert not guard.check_and_remember("b", T0 + 100)


# ---------------------------------------------------------------------------------------- caching and rotation


def test_a_warm_signer_reads_the_store_once_per_refresh_period(agent: Agent) -> None:
    body = status_update()
    for _ in range(10):
        agent.sign(body)
    agent.signer.jwks()
    assert agent.source.loads == 1
    agent.clock.now += 301
    agent.sign(body)
    assert agent.source.loads == 2


def test_rotation_takes_effect_after_refresh_and_old_tokens_still_verify(agent: Agent) -> None:
    # Given a token signed before the rotation
    body = status_update()
    old_token = agent.sign(body)
    old_kid = header_of(old_token)["kid"]

    # When the keys are rotated
    new_kid = rotate_keys(agent.source)

    # Then the warm signer keeps its cached key until the refresh period has passed
    assert new_kid != old_kid
    assert header_of(agent.sign(body))["kid"] == old_kid
    agent.clock.now += 301
    new_token = agent.sign(body)
    assert header_of(new_token)["kid"] == new_kid

    # And the JWKS publishes both (newest first), so the old token still verifies
    assert [k["kid"] for k in agent.signer.jwks()["keys"]] == [new_kid, old_kid]
    agent.verify({SIGNATURE_HEADER: old_token}, body, now=agent.clock.now - 300)
    agent.verify({SIGNATURE_HEADER: new_token}, body)


@pytest.mark.parametrize(
    ("keep", "rotations", "expected"),
    [
        pytest.param(2, 3, 2, id="keep-2"),
        pytest.param(1, 2, 1, id="keep-1-drops-the-old-key-at-once"),
        pytest.param(5, 2, 3, id="fewer-than-keep"),
    ],
)
def test_rotation_keeps_at_most_keep_keys_newest_first(keep: int, rotations: int, expected: int) -> None:
    source = MemoryKeySource(generate_key_set_text())
    kids = [json.loads(source.load() or "")["keys"][0]["kid"]]
    for _ in range(rotations):
        kids.insert(0, rotate_keys(source, keep=keep))
    stored = [entry["kid"] for entry in json.loads(source.load() or "")["keys"]]
    assert stored == kids[:expected]


def test_rotation_refuses_to_keep_no_key() -> None:
    with pytest.raises(ValueError, match="keep"):
        rotate_keys(MemoryKeySource(), keep=0)


def test_rotation_of_an_empty_store_creates_the_first_key() -> None:
    source = MemoryKeySource()
    kid = rotate_keys(source)
    assert [entry["kid"] for entry in json.loads(source.load() or "")["keys"]] == [kid]


def test_bootstrap_race_converges_on_one_key() -> None:
    # Given two cold signers over an empty store, both held until each has seen it empty
    source = CountingSource(barrier=threading.Barrier(2))
    signers = [NotificationSigner(source, issuer=ISSUER) for _ in range(2)]
    tokens: list[str] = []
    errors: list[BaseException] = []

    def first_notification(signer: NotificationSigner) -> None:
        try:
            tokens.append(signer.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="e", body=b"{}"))
        except BaseException as exc:
            errors.append(exc)

    # When both sign their first notification concurrently
    threads = [threading.Thread(target=first_notification, args=(signer,)) for signer in signers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    # Then both tried to create, one won, and both sign with the winner's single key
    assert errors == []
    assert source.creates == 2
    (stored,) = json.loads(source.load() or "")["keys"]
    assert {header_of(token)["kid"] for token in tokens} == {stored["kid"]}
    assert signers[0].jwks() == signers[1].jwks()


def test_a_failed_refresh_keeps_signing_with_the_cached_keys(agent: Agent) -> None:
    body = status_update()
    kid = header_of(agent.sign(body))["kid"]
    agent.source.replace("{not json")
    agent.clock.now += 301
    assert header_of(agent.sign(body))["kid"] == kid


def test_a_malformed_key_set_is_refused_without_quoting_it() -> None:
    secret = generate_key_set_text()
    broken = secret[:-5]
    signer = NotificationSigner(MemoryKeySource(broken), issuer=ISSUER)
    with pytest.raises(ValueError, match="not JSON") as caught:
        signer.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="e", body=b"{}")
    d = json.loads(secret)["keys"][0]["d"]
    assert d not in str(caught.value)
    assert caught.value.__cause__ is None


# ---------------------------------------------------------------------------------------- SSM (moto)


@pytest.fixture
def ssm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield boto3.client("ssm", region_name="us-east-1")


PARAMETER = "/a2a/push/signing-keys"


def test_ssm_source_round_trip(ssm: Any) -> None:
    # Given no parameter yet
    first = SsmKeySource(PARAMETER, client=ssm)
    second = SsmKeySource(PARAMETER, client=ssm)
    assert first.load() is None

    # When one source creates, Then it is stored as a SecureString
    text_a, text_b = generate_key_set_text(), generate_key_set_text()
    assert first.create(text_a) == text_a
    parameter = ssm.get_parameter(Name=PARAMETER, WithDecryption=True)["Parameter"]
    assert (parameter["Type"], parameter["Value"]) == ("SecureString", text_a)

    # And a second creator gets the first one's text back, not its own
    assert second.create(text_b) == text_a
    assert second.load() == text_a

    # And replace overwrites (still a SecureString)
    second.replace(text_b)
    assert first.load() == text_b
    assert ssm.get_parameter(Name=PARAMETER)["Parameter"]["Type"] == "SecureString"


def test_signer_bootstraps_into_ssm_and_rotates_there(ssm: Any) -> None:
    source = SsmKeySource(PARAMETER, client=ssm)
    clock = FakeClock()
    signer = NotificationSigner(source, issuer=ISSUER, clock=clock)
    body = status_update()
    token = signer.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="e", body=body)
    stored = json.loads(ssm.get_parameter(Name=PARAMETER, WithDecryption=True)["Parameter"]["Value"])
    assert [entry["kid"] for entry in stored["keys"]] == [header_of(token)["kid"]]

    new_kid = rotate_keys(source)
    clock.now += 301
    assert header_of(signer.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="e", body=body))["kid"] == new_kid


def test_ssm_source_does_no_io_until_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_clients(*args: object, **kwargs: object) -> None:
        raise AssertionError("no client may be created at construction")

    monkeypatch.setattr(boto3.session.Session, "client", no_clients)
    source = SsmKeySource(PARAMETER)
    NotificationSigner(source, issuer=ISSUER)
    assert source.name == PARAMETER


class DeniedSsm:
    """An SSM client whose every call is refused (a missing IAM permission)."""

    def _deny(self, operation: str) -> ClientError:
        return ClientError({"Error": {"Code": "AccessDeniedException", "Message": "denied"}}, operation)

    def get_parameter(self, **kwargs: Any) -> Any:
        raise self._deny("GetParameter")

    def put_parameter(self, **kwargs: Any) -> Any:
        raise self._deny("PutParameter")


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda source: source.load(), id="load"),
        pytest.param(lambda source: source.create("{}"), id="create"),
        pytest.param(lambda source: source.replace("{}"), id="replace"),
    ],
)
def test_ssm_errors_other_than_absent_or_exists_propagate(call: Callable[[SsmKeySource], object]) -> None:
    # Given a source whose calls are denied, When it is used, Then the denial is not mistaken for "absent"
    with pytest.raises(ClientError, match="AccessDenied"):
        call(SsmKeySource(PARAMETER, client=DeniedSsm()))


# ---------------------------------------------------------------------------------------- JWKS over HTTP


@dataclass
class JwksServer:
    url: str
    fetches: int = 0


@pytest.fixture
def jwks_server(agent: Agent) -> Iterator[JwksServer]:
    served = JwksServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != JWKS_PATH:
                self.send_error(404)
                return
            served.fetches += 1
            payload = json.dumps(agent.signer.jwks()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    served.url = f"http://127.0.0.1:{server.server_address[1]}{JWKS_PATH}"
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_jwks_cache_fetches_once_refetches_on_an_unknown_kid_and_rate_limits(
    agent: Agent, jwks_server: JwksServer
) -> None:
    body = status_update()
    cache_clock = FakeClock(0.0)
    with httpx.Client(trust_env=False, timeout=5) as client:
        cache = JwksCache(jwks_server.url, client=client, clock=cache_clock)

        def verify(token: str) -> VerifiedNotification:
            return cache.verify({SIGNATURE_HEADER: token}, body, issuer=ISSUER, audience=AUDIENCE, now=agent.clock.now)

        # Given a receiver that has verified one notification (one fetch) and then another (cached)
        old_token = agent.sign(body)
        assert verify(old_token).task_id == TASK_ID
        assert verify(agent.sign(body)).task_id == TASK_ID
        assert jwks_server.fetches == 1

        # When the agent rotates and signs with the new key
        rotate_keys(agent.source)
        agent.clock.now += 301
        new_token = agent.sign(body)

        # Then the unknown kid triggers exactly one refetch (once min_refresh_seconds allows it)
        cache_clock.now = 61
        assert verify(new_token).task_id == TASK_ID
        assert jwks_server.fetches == 2
        assert verify(new_token).task_id == TASK_ID
        assert verify(old_token).task_id == TASK_ID  # the old key is still published
        assert jwks_server.fetches == 2

        # And a token from a stranger's key cannot make it refetch more than once per minute
        stranger = NotificationSigner(MemoryKeySource(), issuer=ISSUER, clock=agent.clock)
        foreign = stranger.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="e", body=body)
        for _ in range(3):
            with pytest.raises(NotificationVerificationError, match="unknown key"):
                verify(foreign)
        assert jwks_server.fetches == 2
        cache_clock.now = 122
        with pytest.raises(NotificationVerificationError, match="unknown key"):
            verify(foreign)
        assert jwks_server.fetches == 3


def test_jwks_cache_with_its_own_client_and_a_token_signed_before_rotation(
    agent: Agent, jwks_server: JwksServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no proxy may capture 127.0.0.1 when the cache builds its own client
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    body = status_update()
    old_token = agent.sign(body)
    rotate_keys(agent.source)
    agent.clock.now += 301
    agent.sign(body)  # the signer now publishes both keys
    with JwksCache(jwks_server.url) as cache:
        note = cache.verify({"Authorization": f"Bearer {old_token}"}, body, issuer=ISSUER, audience=AUDIENCE, now=T0)
    assert note.task_id == TASK_ID
    assert jwks_server.fetches == 1


def test_jwks_cache_reports_an_unreachable_key_set() -> None:
    with httpx.Client(trust_env=False, timeout=2) as client:
        cache = JwksCache("http://127.0.0.1:9/.well-known/jwks.json", client=client)
        agent_signer = NotificationSigner(MemoryKeySource(), issuer=ISSUER)
        body = status_update()
        token = agent_signer.sign(audience=AUDIENCE, task_id=TASK_ID, event_id="e", body=body)
        with pytest.raises(NotificationVerificationError, match="could not be fetched"):
            cache.verify({SIGNATURE_HEADER: token}, body, issuer=ISSUER, audience=AUDIENCE)
