"""Signed agent cards (A2A v1.0, section 8.4 "Agent Card Signing": JWS, RFC 7515, over the card's
RFC 8785 canonical form).

What is signed is the v1.0 card as ProtoJSON, without ``signatures``, its empty strings, lists and
objects left out (so the reference SDK's verifier, ``a2a.utils.signing``, which re-serializes the
card it parsed, computes the same bytes), in the JSON Canonicalization Scheme: keys sorted by UTF-16
code units, no whitespace, numbers as ECMAScript prints them. The signature is a detached JWS: the
card carries ``{"protected", "signature"}``; the protected header names ``alg`` (RS256), ``kid``
and ``typ: JOSE``, and ``jku``, the agent's JWKS URL, where the public key is published.

A card served to a caller without ``A2A-Version`` also carries the v0.3 top-level fields, which are
outside the v1.0 card: a verifier that parses the card into the v1.0 model first (the reference
SDK's) drops them and verifies; one that canonicalizes the JSON as received should fetch the card
with ``A2A-Version: 1.0``, which is exactly what was signed.

:class:`CardSigner` signs each distinct card once per process (a card changes with a deployment,
or with the base URL it is served under), not per request; RS256 signatures are deterministic, so
every instance serves the same bytes. :func:`verify_card` is a verifier of our own.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import hashlib
import json
import math
import threading
from collections import OrderedDict

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from ..json_types import Json, JsonValue
from ..models import AgentCard, AgentCardSignature
from ..ports.signing import SigningKey

__all__ = ["CardSignatureError", "CardSigner", "canonical_json", "signing_payload", "verify_card"]

_CACHED_CARDS = 32


def canonical_json(value: JsonValue) -> str:
    """``value`` in RFC 8785's canonical form (as text; its UTF-8 bytes are what is signed)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # escapes ", \ and C0 controls only, as 8785 3.2.2.2
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    items = sorted(value.items(), key=lambda item: item[0].encode("utf-16-be", "surrogatepass"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical_json(v) for k, v in items) + "}"


def _number(value: float) -> str:
    """ECMAScript's Number::toString (ECMA-262 7.1.12.1), as RFC 8785 3.2.2.3 requires."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{value} has no JSON form")
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _number(-value)
    _, digits, exponent = decimal.Decimal(repr(value)).as_tuple()  # the shortest round-trip digits
    text = "".join(map(str, digits)).rstrip("0")
    assert isinstance(exponent, int)
    k, n = len(text), exponent + len(digits)  # value = 0.<text> * 10**n
    if k <= n <= 21:
        return text + "0" * (n - k)
    if 0 < n <= 21:
        return text[:n] + "." + text[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + text
    sign = "+" if n - 1 >= 0 else "-"
    mantissa = text if k == 1 else text[0] + "." + text[1:]
    return f"{mantissa}e{sign}{abs(n - 1)}"


def _without_empty(value: JsonValue) -> JsonValue:
    """``value`` without empty strings, lists and objects (nor nulls), at any depth."""
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None} or None
    if isinstance(value, list):
        items = [_without_empty(v) for v in value]
        return [v for v in items if v is not None] or None
    return None if value == "" else value


def signing_payload(card_wire: Json) -> bytes:
    """The bytes a card's signatures sign: the card (ProtoJSON) without ``signatures`` nor empty
    values, canonical (RFC 8785), UTF-8."""
    unsigned = {k: v for k, v in card_wire.items() if k != "signatures"}
    return canonical_json(_without_empty(unsigned) or {}).encode("utf-8")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CardSigner:
    """Signs agent cards with ``key``, each distinct card once (the last few are remembered)."""

    def __init__(self, key: SigningKey) -> None:
        self._key = key
        self._signed: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()

    def sign(self, card: AgentCard, jwks_url: str) -> AgentCard:
        """``card`` with one signature (any it had are replaced), whose header names ``jwks_url``."""
        payload = signing_payload(card.to_wire())
        header = {"alg": self._key.algorithm, "kid": self._key.public_jwk()["kid"], "typ": "JOSE", "jku": jwks_url}
        protected = _b64(json.dumps(header, separators=(",", ":"), sort_keys=True).encode())
        signing_input = f"{protected}.{_b64(payload)}".encode("ascii")
        digest = hashlib.sha256(signing_input).digest()
        with self._lock:
            signature = self._signed.get(digest)
            if signature is not None:
                self._signed.move_to_end(digest)
        if signature is None:
            signature = _b64(self._key.sign(signing_input))
            with self._lock:
                self._signed[digest] = signature
                while len(self._signed) > _CACHED_CARDS:
                    self._signed.popitem(last=False)
        signed = AgentCardSignature(protected=protected, signature=signature)
        return card.model_copy(update={"signatures": [signed]})

    def jwks(self) -> Json:
        """The JWK Set with the card key's public half."""
        return {"keys": [self._key.public_jwk()]}


class CardSignatureError(Exception):
    """No signature of the card verifies with the given keys."""


def verify_card(card_wire: Json, jwks: Json, *, algorithms: tuple[str, ...] = ("RS256",)) -> str:
    """The ``kid`` of the first of the card's signatures that verifies, over the card as received
    (RFC 8785, without ``signatures``), with a key of ``jwks``; :class:`CardSignatureError` if none."""
    payload = _b64(signing_payload(card_wire))
    keys = {k.get("kid"): k for k in jwks.get("keys", []) if isinstance(k, dict)}
    for entry in card_wire.get("signatures") or []:
        try:
            header = json.loads(_unb64(entry["protected"]))
            key = keys.get(header.get("kid"))
            if header.get("alg") not in algorithms or key is None or key.get("kty") != "RSA":
                continue
            public = rsa.RSAPublicNumbers(
                int.from_bytes(_unb64(key["e"]), "big"), int.from_bytes(_unb64(key["n"]), "big")
            ).public_key()
            signing_input = f"{entry['protected']}.{payload}".encode("ascii")
            public.verify(_unb64(entry["signature"]), signing_input, padding.PKCS1v15(), hashes.SHA256())
        except (InvalidSignature, KeyError, TypeError, ValueError, binascii.Error, UnicodeError):
            continue
        return str(header["kid"])
    raise CardSignatureError("no signature of the card verifies with the agent's keys")
