"""Buffered API Gateway (REST proxy) entry points: the Starlette app under mangum."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum
from mangum.types import LambdaContext as MangumContext
from starlette.applications import Starlette

from ..json_types import Json
from ..methods import MethodInfo
from ..transport.app import create_app
from . import _metrics as m
from ._observability import logger, metrics

__all__ = ["gateway_handler", "http_handler"]

# Bodies of these types go back to API Gateway as text, not base64: the API declares no binary
# media types, so a REST API passes a base64 body through to the client undecoded (the JWKS, which
# a card's signature names, would reach its verifiers as base64 text).
TEXT_MIME_TYPES = ["application/json", "application/a2a+json", "application/jwk-set+json", "text/"]

LambdaHandler = Callable[[Json, LambdaContext], Json]


def http_handler(method: MethodInfo | None = None, *, card: bool = False) -> LambdaHandler:
    """A Lambda handler serving ``method``'s REST routes (its row of the method table), or, with
    ``card``, the agent card."""
    served = () if method is None else (method.name,)
    label = method.name if method is not None else "AgentCard"
    return _handler(create_app(methods=served, jsonrpc=False, card=card), label)


def gateway_handler() -> LambdaHandler:
    """A Lambda handler serving the whole app (JSON-RPC, the streams, the card): the gateway without
    the Lambda Web Adapter. A stream is answered as one body holding its events, once it ends."""
    return _handler(create_app(), "Gateway")


def _handler(app: Starlette, label: str) -> LambdaHandler:
    """``app`` under mangum, with the function's logs and metrics.

    The app and mangum adapter are built at cold start (no I/O); the runtime (settings, AWS
    clients) is built at the first request and reused while the environment stays warm.
    """
    adapter = Mangum(app, lifespan="off", api_gateway_base_path="/", text_mime_types=TEXT_MIME_TYPES)

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
    @metrics.log_metrics
    def handler(event: Json, context: LambdaContext) -> Json:
        metrics.add_dimension(name=m.REQUESTS.dimension, value=label)
        _ensure_event_loop()
        # mangum types the same runtime object with its own protocol (mutable attributes).
        response: Json = adapter(event, cast(MangumContext, context))
        status = int(response.get("statusCode", 500))
        m.REQUESTS.add(1)
        if status >= 500:
            m.SERVER_ERRORS.add(1)
        elif status >= 400:
            m.CLIENT_ERRORS.add(1)
        return response

    return handler


def _ensure_event_loop() -> None:
    """mangum runs the app on ``asyncio.get_event_loop()``, which fails once anything in the
    process used ``asyncio.run`` (it leaves no current loop); give it one."""
    try:
        asyncio.get_event_loop()
    except RuntimeError:
        asyncio.set_event_loop(asyncio.new_event_loop())
