"""CloudWatch's OTLP endpoint without a collector: with ``A2A_TRACING_SIGV4=xray`` each export the
OTLP exporter makes is signed with SigV4 for X-Ray. A receiver on 127.0.0.1 plays the endpoint: it
keeps each request as it arrived, and the test recomputes the signature from the known test
credentials (botocore's signer, the way AWS checks it) over exactly those bytes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from a2a_serverless.telemetry._sigv4 import signed_session
from a2a_serverless.telemetry._switch import TracingConfigError
from testkit.otlp import Received, otlp_endpoint

KEY, SECRET, TOKEN = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token-of-the-role"
REGION = "eu-west-1"
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})"
)

# A function's first traced call, on "Lambda" (its outermost span's end flushes the batch): the
# exporter posts the call's span before the process goes on.
CALL = """
from a2a_serverless import telemetry
with telemetry.server_call("SendMessage", {}) as call:
    call.request(version="1.0", tenant="", fields={"message": {"messageId": "m-signed"}})
"""


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[Received]]]:
    with otlp_endpoint() as served:
        yield served


def run_traced_call(url: str, **extra: str) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "OTEL_", "AWS_"))}
    environment |= {
        "A2A_TRACING": "otlp",
        "A2A_TRACING_SIGV4": "xray",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": url,
        "AWS_LAMBDA_FUNCTION_NAME": "SendMessageFunction",
        "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_SESSION_TOKEN": TOKEN,
        **extra,
    }
    subprocess.run([sys.executable, "-c", CALL], env=environment, check=True, timeout=120)


def signature_of(request: Received, url: str, secret: str) -> str:
    """The SigV4 signature of the request as received, recomputed with ``secret``."""
    signed = request.headers["authorization"]
    match = AUTHORIZATION.fullmatch(signed)
    assert match is not None, signed
    names = match["signed"].split(";")
    headers = {name: request.headers[name] for name in names if name != "host"}
    aws = AWSRequest(method="POST", url=url, data=request.body, headers=headers)
    aws.context["timestamp"] = request.headers["x-amz-date"]
    signer = SigV4Auth(Credentials(KEY, secret, TOKEN), match["service"], match["region"])
    return signer.signature(signer.string_to_sign(aws, signer.canonical_request(aws)), aws)


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_each_export_is_signed_for_xray_over_the_bytes_sent(
    endpoint: tuple[str, list[Received]], compression: str
) -> None:
    # Given tracing on with the OTLP exporter, signing for X-Ray, the endpoint on 127.0.0.1
    url, received = endpoint

    # When a function's traced call ends (and its batch is flushed)
    run_traced_call(url, OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=compression)

    # Then the endpoint got one export, signed SigV4 for xray in the function's region with its
    # credentials, over its content type (and encoding), its host, its date and its token
    (request,) = received
    assert request.path == "/v1/traces"
    match = AUTHORIZATION.fullmatch(request.headers["authorization"])
    assert match is not None, request.headers["authorization"]
    assert (match["key"], match["region"], match["service"]) == (KEY, REGION, "xray")
    assert match["date"] == request.headers["x-amz-date"][:8]
    assert request.headers["x-amz-security-token"] == TOKEN
    expected = {"content-type", "host", "x-amz-date", "x-amz-security-token"}
    assert set(match["signed"].split(";")) == expected | ({"content-encoding"} if compression == "gzip" else set())
    # ... whose signature is the one the secret gives for exactly these bytes (and not another's)
    assert signature_of(request, url, SECRET) == match["signature"]
    assert signature_of(request, url, SECRET.lower()) != match["signature"]
    # ... and the body is the OTLP protobuf of the call's span
    body = request.body
    if compression == "gzip":
        import gzip

        body = gzip.decompress(body)
    export = ExportTraceServiceRequest.FromString(body)
    spans = [span for resource in export.resource_spans for scope in resource.scope_spans for span in scope.spans]
    assert [span.name for span in spans] == ["SendMessage"]


def test_unsigned_unless_asked_for() -> None:
    assert signed_session({"AWS_REGION": REGION}) is None


def test_signing_needs_a_region() -> None:
    with pytest.raises(TracingConfigError, match="AWS_REGION"):
        signed_session({"A2A_TRACING_SIGV4": "xray"})
