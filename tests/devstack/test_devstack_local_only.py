"""The real local stack (``a2a-serverless dev``) answers requests for itself only, from no page but
its own: a foreign ``Host`` (DNS rebinding) or ``Origin`` is refused on the A2A routes, the console
and its dev API, and on moto's own port; the console's proxy reaches agents only, never moto, and
never through the environment's proxy."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from a2a_serverless.config import Settings
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from testkit.devstack import DevStack
from testkit.served import served

pytestmark = pytest.mark.e2e

A2A = {"A2A-Version": "1.0"}
CONSOLE = {"X-A2A-Console": "1"}
WAIT = 30.0
"""Hang guard (seconds); never a measured expectation."""


class Recorder:
    """A plain HTTP server on 127.0.0.1 that is no agent: it records each request's method and
    target (an absolute URL when it is used as a forward proxy) and answers 404."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                recorder.seen.append((self.command, self.path))
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_DELETE = _record

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def environment_proxy() -> Iterator[Recorder]:
    """The environment's HTTP proxy, as the stack is started (``HTTP_PROXY``)."""
    recorder = Recorder()
    try:
        yield recorder
    finally:
        recorder.close()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, environment_proxy: Recorder) -> Iterator[DevStack]:
    """The local stack, started with an environment proxy that records what goes through it (only
    ``127.0.0.1`` bypasses it: moto, as boto3 reaches it)."""
    url = environment_proxy.url
    proxy = {"HTTP_PROXY": url, "http_proxy": url, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    with DevStack.running(tmp_path_factory.mktemp("local-only"), proxy) as running:
        yield running


@pytest.fixture(scope="module")
def other_agent() -> Iterator[str]:
    """Another agent on this machine (a memory runtime, 127.0.0.1, a free port)."""
    runtime: Runtime = build_runtime(Settings(store="memory"))
    try:
        with served(create_app(runtime)) as base:
            yield base
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


def _send(context_id: str, text: str = "hello") -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "contextId": context_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def _stored(stack: DevStack, context_id: str) -> int:
    """How many tasks the context has (asked as curl would: no Origin, the stack's own Host)."""
    answer = httpx.get(f"{stack.base}/tasks", params={"contextId": context_id}, headers=A2A, timeout=WAIT)
    assert answer.status_code == 200, answer.text
    return len(answer.json()["tasks"])


def _reason(body: Any) -> str:
    """The ErrorInfo reason of a refusal, in whichever binding's shape it came."""
    if "jsonrpc" in body:
        return str(body["error"]["data"][0]["reason"])
    if "data" in body:  # v0.3 REST
        return str(body["data"]["reason"])
    return str(body["error"]["details"][0]["reason"])


@pytest.mark.parametrize(
    "host",
    [
        pytest.param("evil.example:{port}", id="rebound-name"),
        pytest.param("evil.example", id="rebound-name-port-80"),
        pytest.param("127.0.0.1.nip.io:{port}", id="a-name-that-resolves-to-loopback"),
        pytest.param("localhost:1", id="another-port"),
        pytest.param("localhost.:{port}", id="trailing-dot"),
    ],
)
def test_a_request_for_another_host_is_refused_on_every_route(stack: DevStack, host: str) -> None:
    # Given a request whose Host is not the stack's (a page on a name pointed at 127.0.0.1)
    headers = {"Host": host.format(port=stack.port)}
    with httpx.Client(base_url=stack.base, headers=headers, timeout=WAIT) as client:
        context = str(uuid.uuid4())
        # When it calls the A2A routes, the console and its dev API
        jsonrpc = client.post("/", json=_send(context), headers=A2A)
        rest = client.get("/tasks", headers=A2A)
        v03 = client.get("/v1/tasks/x")
        card = client.get("/.well-known/agent-card.json")
        page = client.get("/_console/")
        dead_letters = client.get("/_console/api/dead-letters", headers=CONSOLE)
        proxy = client.get(
            "/_console/api/proxy", headers={**CONSOLE, "X-A2A-Target": f"{stack.moto}/moto-api/data.json"}
        )
    # Then each is refused, 403, in its binding's shape, and nothing is stored
    for answer in (jsonrpc, rest, v03, card, page, dead_letters, proxy):
        assert answer.status_code == 403, (answer.request.url, answer.text)
    assert [_reason(a.json()) for a in (jsonrpc, rest, v03, card)] == ["HOST_NOT_ALLOWED"] * 4
    assert set(v03.json()) == {"code", "message", "data"}  # the v0.3 REST binding's shape
    assert "DNS rebinding" in page.json()["error"]
    assert "DNS rebinding" in dead_letters.json()["error"]
    assert _stored(stack, context) == 0


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"], ids=lambda h: h.split(":")[0]
)
def test_the_stack_s_own_names_are_answered(stack: DevStack, host: str) -> None:
    headers = {"Host": host.format(port=stack.port)}
    assert httpx.get(f"{stack.base}/.well-known/agent-card.json", headers=headers, timeout=WAIT).status_code == 200
    assert httpx.get(f"{stack.base}/_console/api/dead-letters", headers={**headers, **CONSOLE}).status_code == 200


@pytest.mark.parametrize(
    "origin",
    [
        pytest.param("http://evil.example", id="another-site"),
        pytest.param("http://127.0.0.1:1", id="another-port"),
        pytest.param("https://127.0.0.1:{port}", id="another-scheme"),
        pytest.param("null", id="opaque"),
    ],
)
def test_a_page_of_another_origin_is_refused_and_nothing_is_stored(stack: DevStack, origin: str) -> None:
    headers = {"Origin": origin.format(port=stack.port)}
    context = str(uuid.uuid4())
    # When a page of another origin sends a message (JSON-RPC and REST), lists tasks, redrives
    # the dead letters and uses the proxy
    jsonrpc = httpx.post(f"{stack.base}/", json=_send(context), headers={**headers, **A2A}, timeout=WAIT)
    rest = httpx.post(
        f"{stack.base}/message:send", json={"message": _send(context)["params"]["message"]}, headers={**headers, **A2A}
    )
    listing = httpx.get(f"{stack.base}/tasks", headers={**headers, **A2A})
    redrive = httpx.post(f"{stack.base}/_console/api/dead-letters:redrive", headers={**headers, **CONSOLE})
    proxy = httpx.get(
        f"{stack.base}/_console/api/proxy", headers={**headers, **CONSOLE, "X-A2A-Target": f"{stack.base}/tasks"}
    )
    # Then every call is refused and no task was made
    assert [a.status_code for a in (jsonrpc, rest, listing, redrive, proxy)] == [403] * 5
    assert [_reason(a.json()) for a in (jsonrpc, rest, listing)] == ["ORIGIN_NOT_ALLOWED"] * 3
    assert _stored(stack, context) == 0


def test_the_stack_s_own_page_and_clients_without_an_origin_are_answered(stack: DevStack) -> None:
    for headers in ({"Origin": f"http://localhost:{stack.port}"}, {"Origin": stack.base}, {}):
        context = str(uuid.uuid4())
        answer = httpx.post(f"{stack.base}/", json=_send(context), headers={**headers, **A2A}, timeout=WAIT)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["task"]["contextId"] == context
        assert _stored(stack, context) == 1


def _proxy(stack: DevStack, target: str, method: str = "GET", **kwargs: Any) -> httpx.Response:
    return httpx.request(
        method,
        f"{stack.base}/_console/api/proxy",
        headers={**CONSOLE, **kwargs.pop("headers", {}), "X-A2A-Target": target},
        timeout=WAIT,
        **kwargs,
    )


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("http://127.0.0.1:{moto}/moto-api/data.json", id="state-dump"),
        pytest.param("http://127.0.0.1:{moto}/moto-api/reset", id="reset"),
        pytest.param("http://localhost:{moto}/", id="by-name"),
        pytest.param("http://0.0.0.0:{moto}/", id="unspecified-address"),
        pytest.param("http://[::ffff:127.0.0.1]:{moto}/", id="v4-mapped"),
        pytest.param("http://127.0.0.1:{moto}/a2a-local-blobsbucket/", id="stored-parts"),
        pytest.param("http://127.0.0.1:{moto}/.well-known/agent-card.json", id="a-card-path-on-moto"),
        pytest.param("http://127.0.0.1:{port}/moto-api/reset", id="moto-api-on-the-agent"),
    ],
)
def test_the_proxy_never_reaches_moto(stack: DevStack, target: str) -> None:
    # Given a task the stack holds
    context = str(uuid.uuid4())
    assert httpx.post(f"{stack.base}/", json=_send(context), headers=A2A, timeout=WAIT).status_code == 200
    url = target.format(moto=stack.moto_port, port=stack.port)
    # When the console's proxy is asked for moto, read or written
    answers = [_proxy(stack, url), _proxy(stack, url, "POST", content=b"{}")]
    # Then it refuses, and moto was not reset
    for answer in answers:
        assert answer.status_code == 403, answer.text
        assert "moto" in answer.json()["error"]
    assert _stored(stack, context) == 1


def test_the_proxy_reaches_agents_only(stack: DevStack, other_agent: str) -> None:
    recorder = Recorder()
    try:
        # When the proxy is asked to POST to a server that serves no agent card
        refused = _proxy(stack, f"{recorder.url}/hook", "POST", content=b'{"x":1}')
        # Then it refuses, having only looked for a card there
        assert refused.status_code == 403, refused.text
        assert "no A2A agent card" in refused.json()["error"]
        assert {method for method, _ in recorder.seen} == {"GET"}
        assert {path for _, path in recorder.seen} == {
            "/hook/.well-known/agent-card.json",
            "/.well-known/agent-card.json",
        }
    finally:
        recorder.close()
    # And an agent on another loopback port stays reachable: its card, then a message
    card = _proxy(stack, f"{other_agent}/.well-known/agent-card.json")
    assert card.status_code == 200
    assert card.json()["supportedInterfaces"]
    sent = _proxy(stack, f"{other_agent}/", "POST", json=_send("c1"), headers=A2A)
    assert sent.status_code == 200, sent.text
    assert sent.json()["result"]["task"]["contextId"] == "c1"


def test_the_proxy_ignores_the_environment_s_proxy(
    stack: DevStack, other_agent: str, environment_proxy: Recorder
) -> None:
    # Given the stack runs with HTTP_PROXY set (only 127.0.0.1 bypasses it)
    by_name = other_agent.replace("127.0.0.1", "localhost")
    # When the proxy calls an agent by a name the environment's proxy would take
    card = _proxy(stack, f"{by_name}/.well-known/agent-card.json")
    sent = _proxy(stack, f"{by_name}/", "POST", json=_send("c2"), headers=A2A)
    # Then the agent answered directly, and the environment's proxy saw nothing
    assert card.status_code == 200
    assert sent.status_code == 200, sent.text
    assert environment_proxy.seen == []


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        pytest.param({"Host": "evil.example:{moto}"}, "a rebound name", id="foreign-host"),
        pytest.param({"Origin": "http://evil.example"}, "a page of another site", id="foreign-origin"),
        pytest.param({"Origin": "http://127.0.0.1:{port}"}, "the console's page", id="the-stack-s-origin"),
    ],
)
def test_moto_refuses_a_foreign_host_or_origin(stack: DevStack, headers: dict[str, str], reason: str) -> None:
    sent = {k: v.format(moto=stack.moto_port, port=stack.port) for k, v in headers.items()}
    for method, path in (("GET", "/moto-api/data.json"), ("POST", "/moto-api/reset")):
        answer = httpx.request(method, f"{stack.moto}{path}", headers=sent, timeout=WAIT)
        assert answer.status_code == 403, (reason, answer.text)
    # And moto still answers the stack (and a developer's curl) by its own name
    assert httpx.get(f"{stack.moto}/moto-api/data.json", timeout=WAIT).status_code == 200
    assert httpx.get(f"http://localhost:{stack.moto_port}/moto-api/data.json", timeout=WAIT).status_code == 200
