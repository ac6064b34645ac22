"""SigV4 on the OTLP exporter's requests, for CloudWatch's OTLP traces endpoint without a collector.

CloudWatch takes spans at ``https://xray.<region>.amazonaws.com/v1/traces`` (X-Ray's OTLP endpoint,
with Transaction Search on in the account), and only in requests signed with AWS Signature Version 4
for the service ``xray``; the endpoint authorises them as ``xray:PutTraceSegments``. The plain OTLP
exporter does not sign. ``A2A_TRACING_SIGV4=xray`` (the template sets it with ``Tracing:
CloudWatch``) gives the exporter a ``requests`` session whose auth signs each export with the
function's own credentials, through botocore (which the Lambda runtime carries): the signature
covers the body as sent (after compression), its content type and encoding, the host and the date.

Imported only when tracing is on with the ``otlp`` exporter (:mod:`._sdk`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import requests

from ._errors import TracingConfigError

if TYPE_CHECKING:
    from botocore.credentials import Credentials

__all__ = ["SIGV4_ENV", "SigV4Auth", "signed_session", "signing_target"]

SIGV4_ENV = "A2A_TRACING_SIGV4"
"""The service to sign the OTLP exports for (``xray``); unset or empty: they are not signed."""

_SIGNED = frozenset({"content-type", "content-encoding"})
"""The request's own headers the signature covers (with the host and SigV4's ``X-Amz-*``). Not
``User-Agent``, ``Accept-Encoding`` or ``Connection``: a proxy or the HTTP library may change them."""


class SigV4Auth(requests.auth.AuthBase):
    """Signs each request of a ``requests`` session with SigV4 for ``service`` in ``region``."""

    def __init__(self, service: str, region: str, credentials: Credentials) -> None:
        self.service = service
        self.region = region
        self._credentials = credentials

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        from botocore.auth import SigV4Auth as Signer
        from botocore.awsrequest import AWSRequest

        headers = {k: v for k, v in request.headers.items() if k.lower() in _SIGNED}
        signed = AWSRequest(method=request.method, url=request.url, data=request.body, headers=headers)
        # Frozen per request: a refreshable provider's credentials change between exports.
        Signer(self._credentials.get_frozen_credentials(), self.service, self.region).add_auth(signed)
        request.headers.update(dict(signed.headers.items()))
        return request


def signing_target(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The service and region ``A2A_TRACING_SIGV4`` signs for (None: unset); raises
    :class:`TracingConfigError` without a region (checked at start: :func:`._switch.checked`)."""
    service = environ.get(SIGV4_ENV, "").strip()
    if not service:
        return None
    region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
    if not region:
        raise TracingConfigError(f"{SIGV4_ENV}={service} needs the region to sign for (AWS_REGION)")
    return service, region


def signed_session(environ: Mapping[str, str] = os.environ) -> requests.Session | None:
    """A session that signs every request for ``A2A_TRACING_SIGV4``'s service, or None (unset).

    The region is the function's (``AWS_REGION``, which Lambda sets; else ``AWS_DEFAULT_REGION``),
    the credentials botocore's chain finds (on Lambda, the function role's, from its environment)."""
    target = signing_target(environ)
    if target is None:
        return None
    service, region = target
    from botocore.session import Session as BotocoreSession

    credentials = BotocoreSession().get_credentials()
    if credentials is None:
        raise TracingConfigError(f"{SIGV4_ENV}={service}: no AWS credentials to sign the exports with")
    session = requests.Session()
    session.auth = SigV4Auth(service, region, credentials)
    return session
