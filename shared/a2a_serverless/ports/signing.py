"""The ``SigningKey`` port: a private key that signs, and its public half as a JWK.

The agent cards are signed with one (:mod:`a2a_serverless.card.signing`). Two adapters
(:mod:`a2a_serverless.adapters.card_keys`): an AWS KMS asymmetric key, whose private half never
leaves KMS, and a PEM file, for the local stack and tests.
"""

from __future__ import annotations

from typing import Protocol

from ..json_types import Json

__all__ = ["SigningKey"]


class SigningKey(Protocol):
    algorithm: str
    """The JWS ``alg`` its signatures are (``RS256``)."""

    def public_jwk(self) -> Json:
        """The public key as a JWK (RFC 7517), with its ``kid``, ``alg`` and ``use: sig``."""
        ...

    def sign(self, signing_input: bytes) -> bytes:
        """The signature of ``signing_input`` (the JWS signing input, RFC 7515 section 5.1)."""
        ...
