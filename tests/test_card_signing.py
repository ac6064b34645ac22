"""Signed agent cards (spec 8.4): the public and extended cards carry a JWS over their RFC 8785
canonical form, which the reference SDK's verifier (``a2a.utils.signing``) and our own accept with
the key the agent publishes at the JWKS URL the signature names; a tampered card fails both. Each
card is signed once per process, and the same card signs to the same bytes everywhere.

A signed card names the agent's configured URL (``A2A_PUBLIC_URL``), or behind API Gateway the one
API Gateway says the request came to, whatever ``Host`` the request carried; with neither, the agent
refuses to sign rather than vouch for a host a client chose."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import pytest_asyncio
from a2a.client.card_resolver import parse_agent_card
from a2a.utils import _jcs
from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.card.signing import CardSignatureError, canonical_json, verify_card
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.lambda_.http import TEXT_MIME_TYPES
from a2a_serverless.push.signing import MemoryKeySource, NotificationSigner
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.asgi import memory_app

CARD = "/.well-known/agent-card.json"
JWKS = "/.well-known/jwks.json"
V1 = {"A2A-Version": "1.0"}
KEY = {"Authorization": "Bearer key-1"}
PUBLIC = "https://agent.example/a2a"
"""The agent's configured public URL (A2A_PUBLIC_URL); the test client calls it http://testserver."""
EVIL = {"Host": "evil.example"}


def write_rsa_key(path: Path, bits: int = 2048) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return path


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_rsa_key(tmp_path_factory.mktemp("card-key") / "card-key.pem")


@pytest.fixture(scope="module")
def extended_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("extended") / "extended.json"
    skill = {"id": "secret", "name": "Secret", "description": "For callers with a key.", "tags": ["x"]}
    path.write_text(json.dumps({"description": 'The extended card: ünïcode, "quotes".', "skills": [skill]}))
    return path


@pytest_asyncio.fixture
async def http(key_file: Path, extended_file: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with memory_app(
        public_url=PUBLIC,
        card_signing_key_file=str(key_file),
        extended_card_file=str(extended_file),
        auth_mode="api-key",
        api_keys={"key-1": "alice"},
    ) as client:
        yield client


def sdk_verifier(jwks: dict[str, Any], base: str = PUBLIC) -> Callable[[Any], None]:
    """a2a-sdk 1.x's verifier, its keys from our JWKS by ``kid`` (checking the ``jku`` it names is
    the JWKS under ``base``)."""

    def key_provider(kid: str | None, jku: str | None) -> jwt.PyJWK:
        assert jku == base + JWKS
        return jwt.PyJWK(next(k for k in jwks["keys"] if k["kid"] == kid))

    return create_signature_verifier(key_provider, ["RS256"])


# ------------------------------------------------------------------------------ the canonical form


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_the_canonical_form_is_the_reference_sdks(value: Any) -> None:
    assert canonical_json(value) == _jcs.canonicalize(value)


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (-0.0, "0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (123.456, "123.456"),
    ],
)
def test_numbers_are_written_as_ecmascript_writes_them(number: float, text: str) -> None:
    # RFC 8785 appendix B's examples
    assert canonical_json(number) == text


def test_keys_sort_by_utf16_code_units() -> None:
    # RFC 8785 3.2.3: U+1F600 is the surrogate pair D83D DE00, so it sorts before U+FB33 (by code
    # point it would come after)
    value = {"\ufb33": 1, "\U0001f600": 2, "\r": 3, "1": 4, "\u00f6": 5}
    assert canonical_json(value) == '{"\\r":3,"1":4,"\u00f6":5,"\U0001f600":2,"\ufb33":1}'


# ------------------------------------------------------------------------------ served signed


@pytest.mark.asyncio
@pytest.mark.parametrize("headers", [V1, {}], ids=["1.0-card", "card-of-both-generations"])
async def test_the_public_card_verifies_with_the_reference_sdk(
    http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    jwks = (await http.get(JWKS)).json()
    card = (await http.get(CARD, headers=headers)).json()

    (signature,) = card["signatures"]
    header = json.loads(jwt.utils.base64url_decode(signature["protected"]))
    assert (header["alg"], header["typ"], header["jku"]) == ("RS256", "JOSE", PUBLIC + JWKS)
    assert header["kid"] in {k["kid"] for k in jwks["keys"]}
    sdk_verifier(jwks)(parse_agent_card(card))  # raises unless one signature verifies


@pytest.mark.asyncio
async def test_our_verifier_accepts_the_1_0_card_and_names_its_key(http: httpx.AsyncClient) -> None:
    jwks = (await http.get(JWKS)).json()
    card = (await http.get(CARD, headers=V1)).json()

    assert verify_card(card, jwks) == jwks["keys"][0]["kid"]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda c: c.update(description="A different agent."), id="description"),
        pytest.param(lambda c: c["supportedInterfaces"][0].update(url="https://evil.example/"), id="interface"),
        pytest.param(lambda c: c["skills"].append({**c["skills"][0], "id": "extra"}), id="added-skill"),
        pytest.param(lambda c: c["signatures"][0].update(signature=c["signatures"][0]["signature"][::-1]), id="sig"),
    ],
)
async def test_a_tampered_card_fails_verification(http: httpx.AsyncClient, tamper: Callable[[Any], None]) -> None:
    jwks = (await http.get(JWKS)).json()
    card = (await http.get(CARD, headers=V1)).json()
    tamper(card)

    with pytest.raises(InvalidSignaturesError):
        sdk_verifier(jwks)(parse_agent_card(card))
    with pytest.raises(CardSignatureError):
        verify_card(card, jwks)


@pytest.mark.asyncio
async def test_a_card_fails_with_another_agents_key(http: httpx.AsyncClient, tmp_path: Path) -> None:
    card = (await http.get(CARD, headers=V1)).json()
    async with memory_app(public_url=PUBLIC, card_signing_key_file=str(write_rsa_key(tmp_path / "other.pem"))) as other:
        theirs = (await other.get(JWKS)).json()
    theirs["keys"][0]["kid"] = json.loads(jwt.utils.base64url_decode(card["signatures"][0]["protected"]))["kid"]

    with pytest.raises(CardSignatureError):
        verify_card(card, theirs)


@pytest.mark.asyncio
async def test_the_extended_card_is_signed_on_both_bindings(http: httpx.AsyncClient) -> None:
    jwks = (await http.get(JWKS)).json()
    rest = (await http.get("/extendedAgentCard", headers=V1 | KEY)).json()
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    over_rpc = (await http.post("/", json=rpc, headers=V1 | KEY)).json()["result"]

    assert rest == over_rpc
    assert rest["description"] == 'The extended card: ünïcode, "quotes".'
    assert verify_card(rest, jwks)
    sdk_verifier(jwks)(parse_agent_card(rest))
    public = (await http.get(CARD, headers=V1)).json()
    assert rest["signatures"] != public["signatures"]


@pytest.mark.asyncio
async def test_every_instance_serves_the_same_signed_card_and_etag(key_file: Path) -> None:
    # RS256 is deterministic: two processes (fresh signers) sign the same card to the same bytes
    answers = []
    for _ in range(2):
        async with memory_app(public_url=PUBLIC, card_signing_key_file=str(key_file)) as client:
            answers.append(await client.get(CARD, headers=V1))
    assert answers[0].content == answers[1].content
    assert answers[0].headers["etag"] == answers[1].headers["etag"]


@pytest.mark.asyncio
async def test_the_jwks_has_the_card_key_and_without_a_key_nothing_is_signed(http: httpx.AsyncClient) -> None:
    keys = (await http.get(JWKS)).json()["keys"]
    assert [(k["kty"], k["alg"], k["use"]) for k in keys] == [("RSA", "RS256", "sig")]
    assert not {"d", "p", "q"} & keys[0].keys()
    async with memory_app() as unsigned:
        assert "signatures" not in (await unsigned.get(CARD, headers=V1)).json()
        assert (await unsigned.get(JWKS)).status_code == 404


@pytest.mark.asyncio
async def test_the_jwks_holds_the_push_keys_and_the_card_key_together(key_file: Path) -> None:
    settings = Settings(store="memory", public_url=PUBLIC, push_signing=True, card_signing_key_file=str(key_file))
    push = NotificationSigner(MemoryKeySource(), issuer="http://testserver")
    runtime = build_runtime(settings, store=MemoryTaskStore(), push_signer=push)
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        jwks = (await client.get(JWKS)).json()
        card = (await client.get(CARD, headers=V1)).json()

    assert sorted(k["alg"] for k in jwks["keys"]) == ["ES256", "RS256"]
    assert verify_card(card, jwks)
    sdk_verifier(jwks)(parse_agent_card(card))


@pytest.mark.asyncio
async def test_a_bad_key_file_is_one_logged_line_and_a_generic_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad = tmp_path / "not-a-key.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    async with memory_app(public_url=PUBLIC, card_signing_key_file=str(bad)) as client:
        with caplog.at_level(logging.ERROR):
            answer = await client.get(CARD, headers=V1)
    assert answer.status_code == 500
    assert str(bad) not in answer.text
    assert any(str(bad) in r.getMessage() and r.exc_info is None for r in caplog.records)


def test_a_kms_key_and_a_key_file_are_not_both_taken() -> None:
    with pytest.raises(ConfigError, match="not both"):
        Settings.from_env(
            {"A2A_STORE": "memory", "A2A_CARD_SIGNING_KEY": "alias/card", "A2A_CARD_SIGNING_KEY_FILE": "/k.pem"}
        )


# ------------------------------------------------------------------------------ the URL a signed card names


STAGE_URL = "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1"
"""The recorded API Gateway event's stage URL (its requestContext's domainName and stage)."""


@pytest.mark.asyncio
@pytest.mark.parametrize("headers", [V1, {}], ids=["1.0-card", "card-of-both-generations"])
async def test_a_spoofed_host_gets_the_card_of_the_configured_url_which_verifies(
    http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    # Given an agent whose public URL is configured, when a caller names another host
    jwks = (await http.get(JWKS)).json()
    answer = await http.get(CARD, headers=headers | EVIL)
    card = answer.json()

    # Then every URL of the card, and the JWKS its signature names, is the configured one
    assert "evil.example" not in answer.text
    interfaces = [*card["supportedInterfaces"], *card.get("additionalInterfaces", [])]
    assert {i["url"] for i in interfaces} == {PUBLIC, PUBLIC + "/"}
    assert card.get("url", PUBLIC + "/") == PUBLIC + "/"
    header = json.loads(jwt.utils.base64url_decode(card["signatures"][0]["protected"]))
    assert header["jku"] == PUBLIC + JWKS
    # and the reference SDK verifies it with the agent's key
    sdk_verifier(jwks)(parse_agent_card(card))


@pytest.mark.asyncio
async def test_a_spoofed_host_gets_the_extended_card_of_the_configured_url(http: httpx.AsyncClient) -> None:
    jwks = (await http.get(JWKS)).json()
    rest = await http.get("/extendedAgentCard", headers=V1 | KEY | EVIL)
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    over_rpc = (await http.post("/", json=rpc, headers=V1 | KEY | EVIL)).json()["result"]

    assert "evil.example" not in rest.text
    assert rest.json() == over_rpc
    assert {i["url"] for i in over_rpc["supportedInterfaces"]} == {PUBLIC, PUBLIC + "/"}
    sdk_verifier(jwks)(parse_agent_card(over_rpc))


def _through_api_gateway(app: Any, path: str, *, domain: str = "abc123defg.execute-api.us-east-1.amazonaws.com") -> Any:
    """``app`` under mangum (as the buffered functions run it), sent API Gateway's event for ``path``
    as it came to ``domain``, with a client's ``Host: evil.example`` (and ``X-Forwarded-Host``)."""
    from functions.lambda_events import LambdaContext, api_event
    from mangum import Mangum

    event = api_event("GET", path)
    event["headers"] = {**event["headers"], "Host": "evil.example", "X-Forwarded-Host": "evil.example"}
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    event["headers"]["A2A-Version"] = "1.0"
    event["requestContext"]["domainName"] = domain
    adapter = Mangum(app, lifespan="off", api_gateway_base_path="/", text_mime_types=TEXT_MIME_TYPES)
    response = adapter(event, LambdaContext())  # type: ignore[arg-type]
    assert not response["isBase64Encoded"]  # API Gateway would pass base64 on undecoded
    return response


def _signing_app(key_file: Path, **settings: Any) -> Any:
    runtime = build_runtime(
        Settings(store="memory", card_signing_key_file=str(key_file), **settings), store=MemoryTaskStore()
    )
    return create_app(runtime)


def test_behind_api_gateway_the_card_names_the_url_api_gateway_says_not_the_host(key_file: Path) -> None:
    # Given a signing agent without A2A_PUBLIC_URL, behind API Gateway (its Lambda event)
    app = _signing_app(key_file)

    # When a request whose Host says evil.example comes through the API's stage URL
    answer = _through_api_gateway(app, CARD)
    jwks = json.loads(_through_api_gateway(app, JWKS)["body"])

    # Then the card names the API's stage URL, which API Gateway wrote in the event, and verifies
    assert answer["statusCode"] == 200, answer
    assert "evil.example" not in answer["body"]
    card = json.loads(answer["body"])
    assert {i["url"] for i in card["supportedInterfaces"]} == {STAGE_URL, STAGE_URL + "/"}
    sdk_verifier(jwks, base=STAGE_URL)(parse_agent_card(card))


def test_through_a_custom_domain_the_card_names_the_domain_without_the_stage(key_file: Path) -> None:
    answer = _through_api_gateway(_signing_app(key_file), CARD, domain="agent.example.com")

    card = json.loads(answer["body"])
    assert {i["url"] for i in card["supportedInterfaces"]} == {
        "https://agent.example.com",
        "https://agent.example.com/",
    }
    header = json.loads(jwt.utils.base64url_decode(card["signatures"][0]["protected"]))
    assert header["jku"] == "https://agent.example.com" + JWKS


def test_a_configured_url_wins_over_api_gateways(key_file: Path) -> None:
    answer = _through_api_gateway(_signing_app(key_file, public_url=PUBLIC), CARD)

    card = json.loads(answer["body"])
    assert {i["url"] for i in card["supportedInterfaces"]} == {PUBLIC, PUBLIC + "/"}


@pytest.mark.asyncio
async def test_under_the_web_adapter_the_card_names_the_request_context_it_forwards(
    key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the gateway under the Lambda Web Adapter, which forwards API Gateway's request context
    monkeypatch.setenv("AWS_LWA_INVOKE_MODE", "response_stream")
    context = {"domainName": "abc123defg.execute-api.us-east-1.amazonaws.com", "stage": "v1", "requestId": "r-1"}
    async with memory_app(card_signing_key_file=str(key_file)) as client:
        jwks = (await client.get(JWKS)).json()
        # When a request with Host: evil.example comes through it
        card = (await client.get(CARD, headers=V1 | EVIL | {"x-amzn-request-context": json.dumps(context)})).json()

    # Then the card names the stage URL of the forwarded context
    assert {i["url"] for i in card["supportedInterfaces"]} == {STAGE_URL, STAGE_URL + "/"}
    sdk_verifier(jwks, base=STAGE_URL)(parse_agent_card(card))


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "request_context",
    [
        pytest.param(None, id="a-local-server"),
        # Without the adapter, the header is a client's like any other
        pytest.param({"domainName": "evil.example", "stage": "v1"}, id="a-client-sent-request-context"),
    ],
)
async def test_with_no_url_to_trust_the_card_is_refused_not_signed_for_the_host(
    key_file: Path, extended_file: Path, request_context: dict[str, str] | None, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a signing agent with no A2A_PUBLIC_URL, not behind API Gateway
    headers = V1 | EVIL | ({"x-amzn-request-context": json.dumps(request_context)} if request_context else {})
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    async with memory_app(
        card_signing_key_file=str(key_file),
        extended_card_file=str(extended_file),
        auth_mode="api-key",
        api_keys={"key-1": "alice"},
    ) as client:
        with caplog.at_level(logging.ERROR):
            # When the cards are asked for
            public = await client.get(CARD, headers=headers)
            extended = await client.post("/", json=rpc, headers=headers | KEY)
            # (what is not a card is served as ever)
            listed = await client.get("/tasks", headers=headers | KEY)

    # Then neither is signed for the host the request named: a generic error, and the log names the fix
    assert public.status_code == 500
    assert extended.json()["error"]["code"] == -32603
    assert "evil.example" not in public.text + extended.text
    assert "signatures" not in public.text + extended.text
    assert any("A2A_PUBLIC_URL" in r.getMessage() for r in caplog.records)
    assert listed.status_code == 200


def test_under_sam_local_the_domain_is_the_clients_host_and_is_not_trusted(
    key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sam local start-api writes the request's Host as requestContext.domainName
    monkeypatch.setenv("AWS_SAM_LOCAL", "true")

    answer = _through_api_gateway(_signing_app(key_file), CARD, domain="evil.example")

    assert answer["statusCode"] == 500
    assert "evil.example" not in answer["body"]


@pytest.mark.asyncio
async def test_an_unsigned_local_card_names_the_host_it_was_asked_at() -> None:
    # Unsigned, a local server's card vouches for nothing: it names the URL the caller used
    async with memory_app() as client:
        card = (await client.get(CARD, headers=V1 | {"Host": "agent.local:8000"})).json()

    assert {i["url"] for i in card["supportedInterfaces"]} == {"http://agent.local:8000", "http://agent.local:8000/"}
