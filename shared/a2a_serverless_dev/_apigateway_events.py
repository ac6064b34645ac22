"""API Gateway's events for a function of the API (:mod:`.events`): a REST API's REQUEST
authorizer's and its proxy integration's, in the shapes API Gateway documents, a route named by its
path with its parameters as ``{name=value}``."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

from a2a_serverless.json_types import Json, JsonValue

from ._lambda import ACCOUNT_ID

__all__ = ["API_ID", "REGION", "STAGE", "api_event", "authorizer_event"]

REGION = "us-east-1"
API_ID = "abc123defg"
STAGE = "v1"


def _route(path: str, tenant: str) -> tuple[str, str, Json | None]:
    """(full path, resource, path parameters) of a route: ``{name}`` segments of ``path`` are its
    parameters, each filled from ``name=value`` in the path itself (``/tasks/{id=t1}``) or, for
    ``tenant``, from ``tenant``."""
    parameters: dict[str, JsonValue] = {}
    resource_parts, path_parts = [], []
    full = f"/{{tenant}}{path}" if tenant and not path.startswith("/{tenant}") else path
    for segment in full.split("/"):
        found = re.fullmatch(r"\{(\w+)(?:=([^}]*))?\}(.*)", segment)
        if found is None:
            resource_parts.append(segment)
            path_parts.append(segment)
            continue
        name, value, rest = found.group(1), found.group(2), found.group(3)
        if value is None:
            if name != "tenant" or not tenant:
                raise ValueError(f"{segment}: give the value of {{{name}}} as {{{name}=VALUE}}")
            value = tenant
        parameters[name] = value
        resource_parts.append(f"{{{name}}}{rest}")
        path_parts.append(value + rest)
    return "/".join(path_parts) or "/", "/".join(resource_parts) or "/", parameters or None


def _request(
    method: str, path: str, *, tenant: str, headers: Mapping[str, str], query: Mapping[str, str]
) -> tuple[Json, Json]:
    """The parts a REQUEST authorizer's event and a proxy integration's share, and the request context."""
    full, resource, parameters = _route(path, tenant)
    host = f"{API_ID}.execute-api.{REGION}.amazonaws.com"
    headers = {"Host": host, "X-Forwarded-Proto": "https", "X-Forwarded-Port": "443", **headers}
    now = datetime.now(UTC)
    context: Json = {
        "resourceId": "abc123",
        "resourcePath": resource,
        "httpMethod": method,
        "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
        "path": f"/{STAGE}{full}",
        "accountId": ACCOUNT_ID,
        "protocol": "HTTP/1.1",
        "stage": STAGE,
        "domainPrefix": API_ID,
        "requestTimeEpoch": int(now.timestamp() * 1000),
        "requestId": str(uuid.uuid4()),
        "identity": {"sourceIp": "203.0.113.10", "userAgent": headers.get("User-Agent", "a2a-serverless")},
        "domainName": host,
        "apiId": API_ID,
    }
    shared: Json = {
        "resource": resource,
        "path": full,
        "httpMethod": method,
        "headers": dict(headers),
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": dict(query) or None,
        "multiValueQueryStringParameters": {name: [value] for name, value in query.items()} or None,
        "pathParameters": parameters,
        "stageVariables": None,
    }
    return shared, context


def authorizer_event(
    method: str = "POST",
    path: str = "/message:send",
    *,
    token: str | None = None,
    tenant: str = "",
    headers: Mapping[str, str] | None = None,
) -> Json:
    """A REQUEST authorizer's event for a call of ``method path``, with ``Authorization: Bearer
    token`` when a token is given (none: the header is absent)."""
    sent = {**(headers or {}), **({"Authorization": f"Bearer {token}"} if token is not None else {})}
    shared, context = _request(method, path, tenant=tenant, headers=sent, query={})
    method_arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT_ID}:{API_ID}/{STAGE}/{method}{shared['path']}"
    return {"type": "REQUEST", "methodArn": method_arn, **shared, "requestContext": context}


def api_event(
    method: str,
    path: str,
    *,
    body: str | None = None,
    principal: str = "anonymous",
    tenant: str = "",
    headers: Mapping[str, str] | None = None,
    query: Mapping[str, str] | None = None,
) -> Json:
    """API Gateway's REST proxy event for a route's function, after the authorizer allowed the caller
    as ``principal`` (``requestContext.authorizer.principalId``)."""
    sent = {"Content-Type": "application/json", **(headers or {})} if body is not None else dict(headers or {})
    shared, context = _request(method, path, tenant=tenant, headers=sent, query=query or {})
    context["authorizer"] = {"principalId": principal, "integrationLatency": 0}
    return {**shared, "requestContext": context, "body": body, "isBase64Encoded": False}
