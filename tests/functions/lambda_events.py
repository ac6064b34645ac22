"""Lambda events and context for driving the entry points in ``functions/`` as Lambda would:
recorded API Gateway proxy events re-aimed at any route, and a context with a deadline."""

from __future__ import annotations

import copy
import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).parent / "events"


@dataclass
class LambdaContext:
    function_name: str = "a2a-test"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:a2a-test"
    aws_request_id: str = "11111111-2222-3333-4444-555555555555"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def api_event(
    method: str,
    path: str,
    *,
    body: Any = None,
    query: dict[str, str] | None = None,
    principal: str = "user-alice",
    resource: str | None = None,
) -> dict[str, Any]:
    """The recorded REST proxy event, re-aimed at another route (same shape API Gateway sends)."""
    event = json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text())
    event = copy.deepcopy(event)
    event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["path"] = path
    event["resource"] = event["requestContext"]["resourcePath"] = resource or path
    event["requestContext"]["path"] = "/v1" + path
    event["requestContext"]["authorizer"]["principalId"] = principal
    event["body"] = None if body is None else json.dumps(body)
    event["queryStringParameters"] = query
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    return event


def invoke(module: str, event: dict[str, Any]) -> dict[str, Any]:
    handler = importlib.import_module(f"a2a_serverless.functions.{module}").handler
    result: dict[str, Any] = handler(event, LambdaContext())
    return result


def body(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])
