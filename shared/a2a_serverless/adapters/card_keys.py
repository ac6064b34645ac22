"""Signing keys (:class:`~a2a_serverless.ports.signing.SigningKey`) for the agent cards: RSA, RS256.

RS256 (RSASSA-PKCS1-v1_5 with SHA-256) because its signatures are deterministic: every function
instance that signs the same card gets the same bytes, so the card's ETag is the same whichever
instance answers, and a client's cached copy stays valid. (ES256 signatures are random.)

* :class:`KmsSigningKey`: an AWS KMS asymmetric key (``RSA_2048`` or larger, ``SIGN_VERIFY``), the
  template's ``CardSigningKey``. The private key never leaves KMS: a signing input of up to 4,096
  bytes is sent as it is (``MessageType=RAW``), a longer one as its SHA-256 (``DIGEST``), which
  KMS signs the same way. Its public key is read once (``GetPublicKey``).
* :class:`PemSigningKey`: an RSA private key in a PEM file (PKCS#1 or PKCS#8, unencrypted), for the
  local stack (``A2A_CARD_SIGNING_KEY_FILE``) and tests.

The ``kid`` is the key's RFC 7638 JWK thumbprint: stable, and derived from the key alone.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from joserfc.jwk import RSAKey

from ..aws import kms_client
from ..config import ConfigError
from ..json_types import Json

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

__all__ = ["KmsSigningKey", "PemSigningKey", "rsa_jwk"]

ALGORITHM = "RS256"
_KMS_RAW_LIMIT = 4096


def rsa_jwk(public_key: rsa.RSAPublicKey) -> Json:
    """The key as a JWK for RS256 signatures, ``kid`` its RFC 7638 thumbprint (SHA-256), as the
    push signing keys' (:mod:`a2a_serverless.push.signing`)."""
    jwk = RSAKey.import_key(public_key, {"alg": ALGORITHM, "use": "sig"})
    jwk.ensure_kid()
    return dict(jwk.as_dict(private=False))


class PemSigningKey:
    """An RSA private key read from a PEM file when first used (``ConfigError`` if it is not one)."""

    algorithm = ALGORITHM

    def __init__(self, path: str) -> None:
        self._path = path
        self._loaded: tuple[rsa.RSAPrivateKey, Json] | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[rsa.RSAPrivateKey, Json]:
        """The private key and its public JWK, read and made once."""
        with self._lock:
            if self._loaded is None:
                key = load_rsa_private_key(self._path)
                self._loaded = key, rsa_jwk(key.public_key())
            return self._loaded

    def public_jwk(self) -> Json:
        return self._load()[1]

    def sign(self, signing_input: bytes) -> bytes:
        return self._load()[0].sign(signing_input, padding.PKCS1v15(), hashes.SHA256())


def load_rsa_private_key(path: str) -> rsa.RSAPrivateKey:
    """The RSA private key of a PEM file, of 2,048 bits or more; ``ConfigError`` otherwise."""
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"card signing key file {path!r}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, rsa.RSAPrivateKey) or key.key_size < 2048:
        raise ConfigError(f"card signing key file {path!r}: must be an RSA key of 2048 bits or more (RS256)")
    return key


class KmsSigningKey:
    """A KMS asymmetric RSA key (id, ARN or alias); the client is made on first use and kept."""

    algorithm = ALGORITHM

    def __init__(self, key_id: str, client: KMSClient | None = None) -> None:
        self._key_id = key_id
        self._client = client
        self._jwk: Json | None = None

    @property
    def client(self) -> KMSClient:
        if self._client is None:
            self._client = kms_client()
        return self._client

    def public_jwk(self) -> Json:
        if self._jwk is None:
            der = self.client.get_public_key(KeyId=self._key_id)["PublicKey"]
            public = serialization.load_der_public_key(der)
            if not isinstance(public, rsa.RSAPublicKey):
                raise ConfigError(f"KMS key {self._key_id!r} is not an RSA key: card signatures are RS256")
            self._jwk = rsa_jwk(public)
        return self._jwk

    def sign(self, signing_input: bytes) -> bytes:
        if len(signing_input) <= _KMS_RAW_LIMIT:
            answer = self.client.sign(
                KeyId=self._key_id,
                Message=signing_input,
                MessageType="RAW",
                SigningAlgorithm="RSASSA_PKCS1_V1_5_SHA_256",
            )
        else:
            digest = hashlib.sha256(signing_input).digest()
            answer = self.client.sign(
                KeyId=self._key_id, Message=digest, MessageType="DIGEST", SigningAlgorithm="RSASSA_PKCS1_V1_5_SHA_256"
            )
        return answer["Signature"]
