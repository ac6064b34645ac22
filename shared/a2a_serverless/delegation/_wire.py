"""The two A2A v1.0 bindings a remote agent is called over, as a client sees them.

JSON-RPC (A2A specification, section 9: ``POST`` of an envelope to the interface URL, streams as
SSE of envelopes) and HTTP+JSON (section 11: ``/message:send``, ``/message:stream``,
``GET /tasks/{id}``, ``POST /tasks/{id}:cancel``, bare bodies, streams as SSE of StreamResponses).
Which one, and where, comes from the card's ``supportedInterfaces`` (section 8): the first interface
of a binding we speak, in the card's order (the agent's preference), unless the caller insists on
one. A v0.3 card (``url``, ``preferredTransport``, ``additionalInterfaces``) is read too, but only
its 1.x interfaces are used: this client speaks v1.0 only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Literal, cast
from urllib.parse import quote

import httpx

from ..json_types import Json, JsonValue
from ..models import AgentCard

__all__ = [
    "BINDINGS",
    "Binding",
    "CallFailed",
    "Endpoint",
    "HttpCall",
    "Method",
    "choose_endpoint",
    "request_for",
    "result_of",
    "sse_data",
    "status_failure",
    "unwrap",
]

Binding = Literal["JSONRPC", "HTTP+JSON"]
BINDINGS: tuple[Binding, ...] = ("JSONRPC", "HTTP+JSON")
Method = Literal["SendMessage", "SendStreamingMessage", "GetTask", "CancelTask"]


class CallFailed(Exception):
    """One call came back with an error: ``retryable`` when sending it again may help (5xx, 429,
    408, a dropped connection). ``reason`` is a short fixed phrase with a code, never the remote's
    error text (which may carry its internals)."""

    def __init__(self, reason: str, *, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    binding: Binding
    tenant: str = ""


@dataclass(frozen=True, slots=True)
class HttpCall:
    method: str
    url: str
    body: Json | None
    params: Mapping[str, str]


def choose_endpoint(card: AgentCard, raw: Json, prefer: Binding | None = None) -> Endpoint:
    """Where to call the agent of ``card`` (``raw``: its JSON, for a v0.3 card's fields)."""
    offered = [
        Endpoint(i.url, i.protocol_binding, i.tenant)
        for i in card.supported_interfaces
        if i.protocol_binding in BINDINGS and i.protocol_version.split(".")[0] == "1"
    ] or _v03_interfaces(raw)
    if not offered:
        raise ValueError("its card offers no A2A 1.x interface over JSON-RPC or HTTP+JSON")
    if prefer is not None:
        chosen = [e for e in offered if e.binding == prefer]
        if not chosen:
            raise ValueError(f"its card offers no A2A 1.x {prefer} interface")
        return chosen[0]
    return offered[0]


def _v03_interfaces(raw: Json) -> list[Endpoint]:
    if str(raw.get("protocolVersion", "")).split(".")[0] != "1" or not isinstance(raw.get("url"), str):
        return []
    listed: list[tuple[JsonValue, JsonValue]] = [(raw["url"], raw.get("preferredTransport", "JSONRPC"))]
    for extra in raw.get("additionalInterfaces") or []:
        if isinstance(extra, dict):
            listed.append((extra.get("url"), extra.get("transport")))
    return [Endpoint(url, cast(Binding, b)) for url, b in listed if isinstance(url, str) and b in BINDINGS]


def request_for(endpoint: Endpoint, method: Method, params: Json, call_id: int) -> HttpCall:
    """The HTTP request of one call. ``params`` is the v1.0 request's ProtoJSON, tenant excluded."""
    if endpoint.binding == "JSONRPC":
        if endpoint.tenant:
            params = {**params, "tenant": endpoint.tenant}
        envelope: Json = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
        return HttpCall("POST", endpoint.url, envelope, {})
    base = endpoint.url.rstrip("/") + (f"/{quote(endpoint.tenant, safe='')}" if endpoint.tenant else "")
    if method == "SendMessage":
        return HttpCall("POST", base + "/message:send", params, {})
    if method == "SendStreamingMessage":
        return HttpCall("POST", base + "/message:stream", params, {})
    task = quote(str(params["id"]), safe="")
    if method == "GetTask":
        query = {"historyLength": str(params["historyLength"])} if "historyLength" in params else {}
        return HttpCall("GET", f"{base}/tasks/{task}", None, query)
    return HttpCall("POST", f"{base}/tasks/{task}:cancel", {}, {})


def result_of(endpoint: Endpoint, response: httpx.Response) -> Json:
    """The call's result (a JSON-RPC envelope's ``result``, or the REST body), or ``CallFailed``."""
    failed = status_failure(response)
    if failed is not None:
        raise failed
    try:
        body = response.json()
    except ValueError:
        raise CallFailed("the answer is not JSON", retryable=False) from None
    return unwrap(endpoint, body)


def unwrap(endpoint: Endpoint, body: JsonValue) -> Json:
    """A JSON-RPC envelope's result (or its error as ``CallFailed``); a REST body as it is."""
    if not isinstance(body, dict):
        raise CallFailed("the answer is not a JSON object", retryable=False)
    if endpoint.binding == "HTTP+JSON":
        if "error" in body and len(body) == 1:
            raise CallFailed("it answered with an error", retryable=False)
        return body
    error = body.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        raise CallFailed(f"it answered with JSON-RPC error {code}", retryable=False)
    result = body.get("result")
    if not isinstance(result, dict):
        raise CallFailed("the JSON-RPC answer has no result", retryable=False)
    return result


def status_failure(response: httpx.Response) -> CallFailed | None:
    """The failure an HTTP status means, or None for a success."""
    status = response.status_code
    if status < 300:
        return None
    retryable = status in (408, 429) or status >= 500
    return CallFailed(f"it answered HTTP {status}", retryable=retryable, retry_after=_retry_after(response))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None


async def sse_data(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """Each event of an SSE body as (event type, data); comments and ids are skipped."""
    kind, data = "message", list[str]()
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield kind, "\n".join(data)
            kind, data = "message", list[str]()
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name == "event":
                kind = value
    if data:
        yield kind, "\n".join(data)
