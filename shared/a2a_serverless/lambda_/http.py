"""Buffered API Gateway (REST proxy) entry points: the Starlette app under mangum."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from mangum import Mangum

from ..transport.app import create_app
from ._observability import logger, metrics

__all__ = ["http_handler"]

# Bodies of these types go back to API Gateway as text, not base64.
TEXT_MIME_TYPES = ["application/json", "application/a2a+json", "text/"]

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def http_handler(
    methods: Collection[str] | None, *, jsonrpc: bool = False, card: bool = False, name: str = ""
) -> LambdaHandler:
    """A Lambda handler serving ``methods`` (None: all) over REST, plus JSON-RPC and/or the card.

    The app and mangum adapter are built at cold start (no I/O); the runtime (settings, AWS
    clients) is built at the first request and reused while the environment stays warm.
    """
    app = create_app(methods=methods, jsonrpc=jsonrpc, card=card)
    adapter = Mangum(app, lifespan="off", api_gateway_base_path="/", text_mime_types=TEXT_MIME_TYPES)
    label = name or (",".join(sorted(methods)) if methods else "all")

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        metrics.add_dimension(name="function", value=label)
        _ensure_event_loop()
        response: dict[str, Any] = adapter(event, context)
        status = int(response.get("statusCode", 500))
        metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
        if status >= 500:
            metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1)
        elif status >= 400:
            metrics.add_metric(name="ClientErrors", unit=MetricUnit.Count, value=1)
        return response

    return handler


def _ensure_event_loop() -> None:
    """mangum runs the app on ``asyncio.get_event_loop()``, which fails once anything in the
    process used ``asyncio.run`` (it leaves no current loop); give it one."""
    try:
        asyncio.get_event_loop()
    except RuntimeError:
        asyncio.set_event_loop(asyncio.new_event_loop())
