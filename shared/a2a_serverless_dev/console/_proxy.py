"""The console's proxy to other agents (``/_console/api/proxy``): the page names the URL in
``X-A2A-Target`` and gets the answer streamed back under the console's headers, so it keeps
``connect-src 'self'`` and works with agents that do not allow CORS.

It reaches agents, and nothing else the developer's machine can reach:

* A request goes only to an agent: a GET of an agent card (``/.well-known/agent-card.json``, where
  the A2A specification, section 8.2, has agents publish it), or a URL under the base of a card the
  proxy read, or under an interface URL that card names. A card not read yet is looked for once, up
  the target's path.
* No request, redirects included, goes to the local stack's moto (its port on this machine) or to a
  ``/moto-api`` path: moto holds every stored part, the push-signing keys, and a reset.
* The environment's proxy settings are ignored (``trust_env=False``).
* In an auth mode the caller needs the credential the A2A routes need
  (:func:`~a2a_serverless.auth.authenticate`). That credential is the local stack's: it is never
  forwarded.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from a2a_serverless.auth import authenticate
from a2a_serverless.errors import A2AError
from a2a_serverless.transport.app import CARD_PATH

from .._hosts import reaches_this_machine
from ._static import SECURITY_HEADERS

if TYPE_CHECKING:
    from a2a_serverless.json_types import JsonValue
    from a2a_serverless.runtime import Runtime

__all__ = ["KnownAgents", "proxy_endpoint"]

_FORWARDED = ("content-type", "accept", "a2a-version", "a2a-extensions", "last-event-id", "authorization")
_PROXY_TIMEOUT = httpx.Timeout(30.0, read=None)
_CARD_TIMEOUT = httpx.Timeout(10.0)
_CARD_BYTES = 1 << 20
_WALK = 8
"""How many path segments up from the target a card is looked for."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MOTO_API = "/moto-api"


class ProxyRefused(Exception):
    """A hop the proxy must not make; the message says why."""


def _key(url: httpx.URL) -> tuple[str, str]:
    return f"{url.scheme}://{url.host}:{url.port or _DEFAULT_PORTS[url.scheme]}", url.path.rstrip("/")


def _http_url(value: object) -> httpx.URL | None:
    if not isinstance(value, str):
        return None
    try:
        url = httpx.URL(value)
    except httpx.InvalidURL:
        return None
    return url if url.scheme in _DEFAULT_PORTS and url.host else None


def _interface_urls(card: JsonValue) -> list[httpx.URL] | None:
    """The interface URLs a card names (v1.0 ``supportedInterfaces``, v0.3 ``url`` and
    ``additionalInterfaces``); None when ``card`` is not an agent card."""
    if not isinstance(card, dict) or not isinstance(card.get("name"), str):
        return None
    faces = card.get("supportedInterfaces")
    if not isinstance(faces, list):
        if not isinstance(card.get("url"), str):
            return None
        extra = card.get("additionalInterfaces")
        faces = [card, *(extra if isinstance(extra, list) else [])]
    named = [_http_url(face.get("url")) for face in faces if isinstance(face, dict)]
    return [url for url in named if url is not None]


class KnownAgents:
    """The bases the proxy may send to, learned from the cards it read (one set per console app)."""

    def __init__(self) -> None:
        self._roots: set[tuple[str, str]] = set()

    def knows(self, url: httpx.URL) -> bool:
        origin, path = _key(url)
        return any(origin == known and (path == root or path.startswith(root + "/")) for known, root in self._roots)

    def learn(self, card_url: httpx.URL, card: JsonValue) -> bool:
        """Remember the agent whose card ``card_url`` answered ``card``; False if it is not a card."""
        faces = _interface_urls(card)
        if faces is None:
            return False
        base = card_url.copy_with(path=card_url.path.removesuffix(CARD_PATH) or "/", query=None, fragment=None)
        self._roots.update(_key(url) for url in (base, *faces))
        return True


def _moto_port() -> int | None:
    """The port of the local stack's moto (it sets ``AWS_ENDPOINT_URL``), if any."""
    url = _http_url(os.environ.get("AWS_ENDPOINT_URL", ""))
    return None if url is None else url.port or _DEFAULT_PORTS[url.scheme]


async def _on_this_machine(host: str) -> bool:
    literal = reaches_this_machine(host)
    if literal is not None:
        return literal
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):  # UnicodeError: a name no DNS label can hold (IDNA)
        return False
    return any(reaches_this_machine(str(info[4][0])) for info in found)


async def _check_hop(request: httpx.Request) -> None:
    """Every request the proxy sends, redirects included: never moto's admin routes or its port."""
    url = request.url
    if url.scheme not in _DEFAULT_PORTS:
        raise ProxyRefused(f"the proxy speaks http(s) only, not {url.scheme}")
    port = _DEFAULT_PORTS[url.scheme] if url.port is None else url.port
    if not 0 < port < 1 << 16:  # httpx takes any number; connect() would raise OverflowError
        raise ProxyRefused(f"{port} is not a TCP port")
    if url.path.lower().startswith(_MOTO_API):
        raise ProxyRefused("moto's admin routes (/moto-api) are not an agent's")
    moto = _moto_port()
    if moto is not None and port == moto and await _on_this_machine(url.host):
        raise ProxyRefused("the local stack's moto (its AWS_ENDPOINT_URL) is not an agent")


async def _read_card(client: httpx.AsyncClient, url: httpx.URL) -> JsonValue:
    body = bytearray()
    try:
        async with client.stream("GET", url, headers={"Accept": "application/json"}, timeout=_CARD_TIMEOUT) as answer:
            if answer.status_code != 200:
                return None
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > _CARD_BYTES:
                    return None
    except httpx.HTTPError:
        return None
    try:
        card: JsonValue = json.loads(body)
    except ValueError:
        return None
    return card


async def _is_agent(client: httpx.AsyncClient, agents: KnownAgents, target: httpx.URL, method: str) -> bool:
    if agents.knows(target):
        return True
    if target.path.endswith(CARD_PATH):
        return method == "GET"  # reading a card is how an agent is found
    segments = [segment for segment in target.path.split("/") if segment][:_WALK]
    for depth in range(len(segments), -1, -1):
        card_url = target.copy_with(path="".join("/" + s for s in segments[:depth]) + CARD_PATH, query=None)
        card = await _read_card(client, card_url)
        if card is not None and agents.learn(card_url, card) and agents.knows(target):
            return True
    return False


def _json(body: JsonValue, status_code: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status_code, headers={**SECURITY_HEADERS, **(headers or {})})


def _upstream_transport() -> httpx.AsyncBaseTransport | None:
    """The proxy's transport (None: httpx's own; tests serve another agent in process)."""
    return None


def proxy_endpoint(
    get_runtime: Callable[[], Runtime], agents: KnownAgents | None = None
) -> Callable[[Request], Awaitable[Response]]:
    known = agents if agents is not None else KnownAgents()

    async def proxy(request: Request) -> Response:
        """Forward the request to the agent URL in ``X-A2A-Target``, streaming the answer."""
        settings = get_runtime().settings
        try:
            authenticate(settings.auth_mode, settings.api_keys, request.headers, None)
        except A2AError as error:
            return _json({"error": "unauthenticated: the dev API needs the A2A routes' credential"}, 401, error.headers)
        target = _http_url(request.headers.get("x-a2a-target", ""))
        if target is None:
            return _json({"error": "X-A2A-Target must be an http(s) URL"}, 400)
        # In an auth mode the caller's Authorization is this stack's own credential.
        names = _FORWARDED if settings.auth_mode == "none" else _FORWARDED[:-1]
        headers = {name: request.headers[name] for name in names if name in request.headers}
        client = httpx.AsyncClient(
            transport=_upstream_transport(),
            timeout=_PROXY_TIMEOUT,
            follow_redirects=True,
            trust_env=False,
            event_hooks={"request": [_check_hop]},
        )
        where = f"{target.scheme}://{target.netloc.decode()}"
        try:
            await _check_hop(httpx.Request(request.method, target))  # moto is refused as moto, not as a non-agent
            if not await _is_agent(client, known, target, request.method):
                await client.aclose()
                return _json(
                    {"error": f"no A2A agent card found for {where}{target.path}: the proxy reaches agents only"}, 403
                )
            upstream = await client.send(
                client.build_request(request.method, target, headers=headers, content=await request.body()),
                stream=True,
            )
        except ProxyRefused as refused:
            await client.aclose()
            return _json({"error": f"the proxy does not go to {where}: {refused}"}, 403)
        except httpx.HTTPError as exc:
            await client.aclose()
            return _json({"error": f"cannot reach {where}: {type(exc).__name__}"}, 502)

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
            finally:
                await upstream.aclose()
                await client.aclose()

        answer_headers = dict(SECURITY_HEADERS)
        answer_headers["Content-Type"] = upstream.headers.get("content-type", "application/octet-stream")
        return StreamingResponse(body(), status_code=upstream.status_code, headers=answer_headers)

    return proxy
