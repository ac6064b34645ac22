"""Push notifications: webhook URL rules, delivery, signing, and the receiver-side helper.

* :mod:`.urls`: which webhook URLs a config may name (SSRF rules, checked at creation).
* :mod:`.sender`: one HTTP POST to a webhook, through a connection guard that re-resolves and
  re-checks every address at send time, with the redirect policy; classifies the outcome.
* :mod:`.signing`: the agent's signing keys (ES256) and the JWT each notification carries; JWKS.
* :mod:`.verify`: what a *receiver* uses to check a notification's signature and claims.
* :mod:`.delivery`: delivers a task's events to one config, in order, from its cursor.
* :mod:`.dispatch`: turns DynamoDB stream records of the event log into delivery work items.
* :mod:`.redrive`: moves dead-lettered deliveries back onto the delivery queue.

The delivery queue is a port (``DeliveryQueue`` and the ``DeliveryItem`` it carries,
:mod:`a2a_serverless.ports.queue`), on SQS in :mod:`a2a_serverless.adapters.sqs`.

Nothing is imported here, so each Lambda imports only what it uses; the wire names below are
defined here for the same reason (the app serves the JWKS without loading the signer's crypto).
"""

__all__ = ["JWKS_PATH", "SIGNATURE_HEADER", "SIGNING_ALGORITHM", "TOKEN_HEADER"]

SIGNATURE_HEADER = "X-A2A-Notification-Signature"
"""The request header carrying a notification's JWT (receivers also accept ``Authorization: Bearer``)."""
JWKS_PATH = "/.well-known/jwks.json"
"""Where the agent publishes its public keys, relative to its base URL."""
TOKEN_HEADER = "X-A2A-Notification-Token"  # noqa: S105 - a header name, not a secret
"""The request header carrying a push config's ``token`` (A2A specification, section 4.3.3)."""
SIGNING_ALGORITHM = "ES256"
"""The only algorithm notifications are signed with, and the only one receivers accept."""
