"""On AWS the A2A call's span joins API Gateway's and Lambda's X-Ray trace: with the template's
``OTEL_PROPAGATORS=tracecontext,baggage,xray-lambda`` its parent is the X-Ray context of the
request's ``X-Amzn-Trace-Id`` header, else the one the Lambda runtime sets in ``_X_AMZN_TRACE_ID``
for the invocation; and X-Ray's sampling decision is the trace's.

OpenTelemetry reads ``OTEL_PROPAGATORS`` once, when ``opentelemetry.propagate`` is first imported,
so each case runs in a fresh interpreter (as a cold start): a request through the app, its spans
kept in memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = "1-5759e988-bd862e3fe1be46a994272793"
TRACE_ID = "5759e988bd862e3fe1be46a994272793"
GATEWAY_SEGMENT, LAMBDA_SEGMENT = "53995c3f42cd8ad8", "7a9b8c7d6e5f4a3b"
RECORDED = "Root=1-6740a1b2-0f1e2d3c4b5a69788796a5b4"  # tests/functions/events: the header as recorded

# One SendMessage through the app (its run inline), then the call's span: trace, parent, sampled.
REQUEST = """
import asyncio, json, sys
from a2a_serverless.telemetry import _sdk
from testkit.asgi import memory_app

async def main():
    message = {"messageId": "m-xray", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    headers = {"A2A-Version": "1.0", **json.loads(sys.argv[1])}
    async with memory_app() as client:
        assert (await client.post("/", json=body, headers=headers)).status_code == 200

asyncio.run(main())
calls = [s for s in _sdk.finished_spans() if s.name == "SendMessage"]
print(json.dumps([
    [format(s.context.trace_id, "032x"), s.parent and format(s.parent.span_id, "016x"), s.parent and s.parent.is_remote]
    for s in calls
]))
"""


def call_spans(headers: dict[str, str], lambda_trace: str | None) -> list[list[object]]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "OTEL_", "_X_AMZN"))}
    environment |= {
        "A2A_TRACING": "memory",
        "OTEL_PROPAGATORS": "tracecontext,baggage,xray-lambda",  # what template.yaml sets with Tracing on
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), environment.get("PYTHONPATH")])),
    }
    if lambda_trace is not None:
        environment["_X_AMZN_TRACE_ID"] = lambda_trace
    out = subprocess.run(
        [sys.executable, "-c", REQUEST, json.dumps(headers)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    spans: list[list[object]] = json.loads(out.stdout.splitlines()[-1])
    return spans


@pytest.mark.parametrize(
    ("headers", "lambda_trace", "parent"),
    [
        pytest.param(
            {"X-Amzn-Trace-Id": f"Root={ROOT};Parent={GATEWAY_SEGMENT};Sampled=1"},
            None,
            GATEWAY_SEGMENT,
            id="api-gateway-header",
        ),
        pytest.param(
            {}, f"Root={ROOT};Parent={LAMBDA_SEGMENT};Sampled=1", LAMBDA_SEGMENT, id="lambda-runtime-variable"
        ),
        pytest.param(
            {"X-Amzn-Trace-Id": RECORDED},  # a Root without a Parent names no span to join
            f"Root={ROOT};Parent={LAMBDA_SEGMENT};Sampled=1",
            LAMBDA_SEGMENT,
            id="recorded-header-and-lambda-variable",
        ),
    ],
)
def test_the_calls_span_continues_the_x_ray_trace(
    headers: dict[str, str], lambda_trace: str | None, parent: str
) -> None:
    # Given the X-Ray context of the request (API Gateway's header) or of the invocation (Lambda's)
    # When a SendMessage goes through the app
    spans = call_spans(headers, lambda_trace)

    # Then its span is in the X-Ray trace (the Root's id), a child of that segment
    assert spans == [[TRACE_ID, parent, True]]


def test_a_w3c_traceparent_is_still_the_parent_without_x_ray() -> None:
    traceparent = f"00-{TRACE_ID}-{GATEWAY_SEGMENT}-01"
    assert call_spans({"traceparent": traceparent}, None) == [[TRACE_ID, GATEWAY_SEGMENT, True]]


def test_x_rays_sampling_decision_is_the_traces() -> None:
    # Given a request X-Ray did not sample (its sampling rules: by default the first request each
    # second and 5% of the others)
    spans = call_spans({"X-Amzn-Trace-Id": f"Root={ROOT};Parent={GATEWAY_SEGMENT};Sampled=0"}, None)

    # Then its span is not recorded either (the SDK's default sampler follows the parent)
    assert spans == []
