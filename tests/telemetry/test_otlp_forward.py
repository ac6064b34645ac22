"""``a2a-serverless dev --otlp-endpoint URL``: the stack still collects its spans, and sends them to
the user's OTLP/HTTP collector too (played here by a small receiver on 127.0.0.1 that decodes what
it gets with OpenTelemetry's own protobuf messages)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from testkit.devstack import DevStack
from testkit.otlp import Received, otlp_endpoint
from testkit.waiting import wait_until

pytestmark = pytest.mark.e2e


class Collector:
    def __init__(self, received: list[Received]) -> None:
        self._received = received

    @property
    def spans(self) -> set[tuple[str, str]]:
        """(service, span name) of every span received on the traces path."""
        spans: set[tuple[str, str]] = set()
        for each in list(self._received):
            if each.path != "/v1/traces":
                continue
            for resource in ExportTraceServiceRequest.FromString(each.body).resource_spans:
                service = next(
                    (a.value.string_value for a in resource.resource.attributes if a.key == "service.name"), ""
                )
                spans.update((service, span.name) for scope in resource.scope_spans for span in scope.spans)
        return spans


@pytest.fixture
def collector() -> Iterator[tuple[str, Collector]]:
    with otlp_endpoint() as (url, received):
        yield url.removesuffix("/v1/traces"), Collector(received)


def test_otlp_endpoint_forwards_the_spans_to_a_collector(tmp_path: Path, collector: tuple[str, Collector]) -> None:
    # Given the stack started with --otlp-endpoint (batches sent every 100 ms rather than 5 s)
    endpoint, received = collector
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "OTEL_"))}
    stack = DevStack.start("--otlp-endpoint", endpoint, cwd=tmp_path, env={**env, "OTEL_BSP_SCHEDULE_DELAY": "100"})
    try:
        # When a turn runs
        message = {"messageId": "m-otlp", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        httpx.post(stack.base + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60)

        # Then the collector gets the call's span from the API and the run's from the worker
        def got() -> bool:
            return {("api", "SendMessage"), ("WorkerFunction", "process work")} <= received.spans

        wait_until(got, "the turn's spans at the collector", within=60, every=0.2)
    finally:
        assert stack.stop() == 0, "\n".join(stack.lines[-50:])
