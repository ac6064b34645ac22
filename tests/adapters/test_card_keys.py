"""The card signing keys: a KMS asymmetric key (on moto, and, for the DIGEST requests moto does not
implement, a stand-in that signs as KMS documents it) and a PEM file. A card is signed once per
process whatever the requests, and a signing input over KMS's 4 KB RAW limit is sent as its digest."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import jwt
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.utils.signing import create_signature_verifier
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
from joserfc.jwk import RSAKey
from moto import mock_aws

from a2a_serverless.adapters.card_keys import KmsSigningKey, PemSigningKey
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.card.signing import CardSigner, verify_card
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.models import AgentCard
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.aws import REGION

CARD = "/.well-known/agent-card.json"
JWKS = "/.well-known/jwks.json"


@pytest.fixture
def kms() -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.delenv("AWS_ENDPOINT_URL", raising=False)
        with mock_aws():
            import boto3

            yield boto3.client("kms", region_name=REGION)


def _counting(client: Any) -> Counter[str]:
    calls: Counter[str] = Counter()
    client.meta.events.register("before-call.kms.*", lambda event_name, **_: calls.update([event_name.split(".")[-1]]))
    return calls


def _card(skills: int = 1) -> AgentCard:
    return AgentCard.model_validate(
        {
            "name": "Agent",
            "description": "An agent.",
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": "https://agent.example/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [
                {"id": f"s{n}", "name": f"Skill {n}", "description": "Does a thing. " * 4, "tags": ["t"]}
                for n in range(skills)
            ],
        }
    )


def _sdk_verify(card: dict[str, Any], jwks: dict[str, Any]) -> None:
    by_kid = {k["kid"]: k for k in jwks["keys"]}
    verifier = create_signature_verifier(lambda kid, _jku: jwt.PyJWK(by_kid[kid]), ["RS256"])
    verifier(parse_agent_card(card))


async def _get(client: httpx.AsyncClient, path: str, **headers: str) -> dict[str, Any]:
    answer = await client.get(path, headers=headers)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


@pytest.mark.asyncio
async def test_a_kms_key_signs_each_card_once_and_clients_verify_it(kms: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the gateway's app (under the Web Adapter, which forwards API Gateway's request context),
    # its card signed by a KMS key (the template's: RSA 2048)
    monkeypatch.setenv("AWS_LWA_INVOKE_MODE", "response_stream")
    arn = kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["Arn"]
    calls = _counting(kms)
    settings = Settings(store="memory", card_signing_key=arn)
    runtime = build_runtime(settings, store=MemoryTaskStore(), card_signer=CardSigner(KmsSigningKey(arn, kms)))
    transport = httpx.ASGITransport(app=create_app(runtime))
    stage = {"x-amzn-request-context": json.dumps({"domainName": "abc123defg.execute-api.us-east-1.amazonaws.com"})}
    custom_domain = {"x-amzn-request-context": json.dumps({"domainName": "agent.example.com"})}

    # When clients fetch it many times, in both variants, with its JWKS, through the API's URL
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        cards = [await _get(client, CARD, **stage, **{"A2A-Version": v}) for v in ("1.0", "", "1.0", "0.3")]
        jwks = await _get(client, JWKS)
        # and once through a custom domain of the API
        elsewhere = await _get(client, CARD, **custom_domain, **{"A2A-Version": "1.0"})

    # Then KMS signed the card once, and once more for the card under another base URL
    assert calls == Counter({"Sign": 2, "GetPublicKey": 1})
    for card in (*cards, elsewhere):
        _sdk_verify(card, jwks)
    assert verify_card(cards[0], jwks)
    assert cards[0]["signatures"] == cards[1]["signatures"] != elsewhere["signatures"]
    public = serialization.load_der_public_key(kms.get_public_key(KeyId=arn)["PublicKey"])
    assert isinstance(public, rsa.RSAPublicKey)
    assert jwks["keys"][0]["n"] == jwt.utils.to_base64url_uint(public.public_numbers().n).decode()


class StandInKms:
    """What the card key asks of KMS, answered as KMS documents it (``Sign``: RAW signs the message,
    DIGEST signs a SHA-256 digest as given; ``GetPublicKey``: the DER public key), with a local key."""

    def __init__(self) -> None:
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.requests: list[dict[str, Any]] = []

    def get_public_key(self, KeyId: str) -> dict[str, Any]:
        der = self._key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return {"KeyId": KeyId, "PublicKey": der}

    def sign(self, KeyId: str, Message: bytes, MessageType: str, SigningAlgorithm: str) -> dict[str, Any]:
        self.requests.append({"MessageType": MessageType, "size": len(Message), "algorithm": SigningAlgorithm})
        assert SigningAlgorithm == "RSASSA_PKCS1_V1_5_SHA_256"
        assert len(Message) <= 4096
        chosen: hashes.HashAlgorithm | utils.Prehashed = hashes.SHA256()
        if MessageType == "DIGEST":
            assert len(Message) == 32
            chosen = utils.Prehashed(hashes.SHA256())
        return {"KeyId": KeyId, "Signature": self._key.sign(Message, padding.PKCS1v15(), chosen)}


@pytest.mark.parametrize(("skills", "kind"), [(1, "RAW"), (40, "DIGEST")])
def test_a_signing_input_over_4_kb_is_sent_as_its_digest(skills: int, kind: str) -> None:
    stand_in = StandInKms()
    signer = CardSigner(KmsSigningKey("alias/card", cast(Any, stand_in)))

    card = signer.sign(_card(skills), "https://agent.example/.well-known/jwks.json").to_wire()

    assert [r["MessageType"] for r in stand_in.requests] == [kind]
    _sdk_verify(card, signer.jwks())
    assert verify_card(card, signer.jwks())


def _pem(path: Path, key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> Path:
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return path


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(lambda: ec.generate_private_key(ec.SECP256R1()), id="ec"),
        pytest.param(lambda: rsa.generate_private_key(public_exponent=65537, key_size=1024), id="rsa-1024"),  # noqa: S505 - refused, the point
    ],
)
def test_a_key_file_must_hold_an_rsa_key_of_2048_bits_or_more(tmp_path: Path, key: Any) -> None:
    with pytest.raises(ConfigError, match="RSA key of 2048 bits"):
        PemSigningKey(str(_pem(tmp_path / "key.pem", key()))).public_jwk()


def test_a_pem_key_signs_deterministically(tmp_path: Path) -> None:
    path = _pem(tmp_path / "key.pem", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    first, second = PemSigningKey(str(path)), PemSigningKey(str(path))
    assert first.sign(b"input") == second.sign(b"input")
    jwk = first.public_jwk()
    assert jwk == second.public_jwk()
    # its kid is its RFC 7638 thumbprint, as another JOSE library computes it
    assert jwk["kid"] == RSAKey.import_key({k: jwk[k] for k in ("kty", "n", "e")}).thumbprint()
