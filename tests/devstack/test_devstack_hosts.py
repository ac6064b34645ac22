"""Whom the local stack answers (``_hosts``), what ``--host`` may be (``--allow-remote``,
``--console``), and the console's proxy in an auth mode."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a_serverless.config import Settings
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev import cli, stack
from a2a_serverless_dev._hosts import Authorities, is_loopback
from a2a_serverless_dev._local_app import local_app
from a2a_serverless_dev.console import _proxy
from a2a_serverless_dev.stack import DevOptions, StackError, check_host, serves_console

EVERY_INTERFACE = "0.0.0.0"  # noqa: S104 (only ever a string here: nothing listens on it)


@pytest.mark.parametrize(
    ("served", "authority", "allowed"),
    [
        pytest.param("127.0.0.1", "127.0.0.1:8000", True, id="loopback"),
        pytest.param("127.0.0.1", "localhost:8000", True, id="localhost"),
        pytest.param("127.0.0.1", "[::1]:8000", True, id="v6-loopback"),
        pytest.param("127.0.0.1", "evil.example:8000", False, id="another-name"),
        pytest.param("127.0.0.1", "127.0.0.1:8001", False, id="another-port"),
        pytest.param("127.0.0.1", "127.0.0.1", False, id="no-port-is-80"),
        pytest.param("127.0.0.1", "::1:8000", False, id="v6-without-brackets"),
        pytest.param("127.0.0.1", "[::1]x:8000", False, id="junk-after-brackets"),
        pytest.param("127.0.0.1", "localhost:", False, id="empty-port"),
        pytest.param("127.0.0.1", "192.168.1.5:8000", False, id="an-ip-literal-on-loopback"),
        pytest.param("192.168.1.5", "192.168.1.5:8000", True, id="the-host-asked-for"),
        pytest.param("mybox.lan", "MYBOX.LAN:8000", True, id="the-name-asked-for"),
        pytest.param(EVERY_INTERFACE, "192.168.1.5:8000", True, id="any-interface-any-ip-literal"),
        pytest.param("::", "[fe80::1]:8000", True, id="any-v6-interface"),
        pytest.param(EVERY_INTERFACE, "evil.example:8000", False, id="any-interface-but-no-name"),
    ],
)
def test_the_authorities_a_stack_answers(served: str, authority: str, allowed: bool) -> None:
    assert Authorities.serving(served, 8000).allows(authority) is allowed


def test_port_80_is_the_default_of_a_host_without_one() -> None:
    assert Authorities.serving("127.0.0.1", 80).allows("localhost")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:8000", True),
        ("http://127.0.0.1:8000", True),
        ("https://localhost:8000", False),
        ("http://localhost:8000/", False),
        ("http://evil.example:8000", False),
        ("null", False),
        ("localhost:8000", False),
    ],
)
def test_the_origins_a_stack_answers(origin: str, allowed: bool) -> None:
    assert Authorities.serving("127.0.0.1", 8000).allows_origin(origin) is allowed


def test_a_refusal_says_which_check_and_why() -> None:
    authorities = Authorities.serving("127.0.0.1", 8000)
    assert authorities.refusal("localhost:8000", None) is None
    host = authorities.refusal("evil.example:8000", None)
    assert host is not None
    assert host.check == "host"
    assert "127.0.0.1:8000" in host.message
    missing = authorities.refusal(None, None)
    assert missing is not None
    assert missing.check == "host"
    origin = authorities.refusal("localhost:8000", "http://evil.example")
    assert origin is not None
    assert origin.check == "origin"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        (EVERY_INTERFACE, False),
        ("::", False),
    ],
)
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.fixture
def nothing_starts(monkeypatch: pytest.MonkeyPatch) -> list[DevOptions]:
    """``stack.run`` records its options instead of starting anything."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # main() adds the working directory
    started: list[DevOptions] = []

    def run(options: DevOptions, **_: Any) -> int:
        started.append(options)
        return 0

    monkeypatch.setattr(stack, "run", run)
    return started


@pytest.mark.parametrize("host", [EVERY_INTERFACE, "::", "192.0.2.10"])
def test_a_host_beyond_this_machine_is_refused_without_allow_remote(
    host: str, nothing_starts: list[DevOptions], capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["dev", "--host", host])

    assert code == 2
    assert nothing_starts == []
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"a2a-serverless dev: error: --host {host} is not a loopback address")
    assert "--allow-remote" in line


@pytest.mark.parametrize(
    ("argv", "console"),
    [
        pytest.param([], None, id="default"),
        pytest.param(["--console"], True, id="console"),
        pytest.param(["--no-console"], False, id="no-console"),
    ],
)
def test_allow_remote_lets_the_host_through(
    argv: list[str], console: bool | None, nothing_starts: list[DevOptions]
) -> None:
    assert cli.main(["dev", "--host", EVERY_INTERFACE, "--allow-remote", *argv]) == 0

    (options,) = nothing_starts
    assert (options.host, options.allow_remote, options.console) == (EVERY_INTERFACE, True, console)


def test_the_stack_refuses_a_remote_host_it_was_not_allowed() -> None:
    with pytest.raises(StackError, match="--allow-remote"):
        check_host(DevOptions(host=EVERY_INTERFACE))


@pytest.mark.parametrize(
    ("options", "console", "warned"),
    [
        pytest.param(DevOptions(), True, [], id="loopback"),
        pytest.param(DevOptions(console=False), False, [], id="loopback-no-console"),
        pytest.param(
            DevOptions(host=EVERY_INTERFACE, allow_remote=True),
            False,
            ["beyond this machine", "console and its dev proxy are off"],
            id="remote",
        ),
        pytest.param(
            DevOptions(host=EVERY_INTERFACE, allow_remote=True, console=True),
            True,
            ["beyond this machine", "console and its dev API are on"],
            id="remote-with-console",
        ),
    ],
)
def test_the_console_is_served_on_loopback_and_elsewhere_only_when_asked(
    options: DevOptions, console: bool, warned: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=stack.__name__):
        assert serves_console(options) is console
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == len(warned)
    for warning, words in zip(warnings, warned, strict=True):
        assert words in warning


@pytest.mark.asyncio
async def test_without_the_console_nothing_is_served_under_it() -> None:
    runtime = build_runtime(Settings(store="memory"))
    app = local_app(create_app(runtime), lambda: runtime, host="127.0.0.1", port=8000, console=False)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            assert (await client.get("/_console/")).status_code == 404
            assert (await client.get("/_console/api/dead-letters", headers={"X-A2A-Console": "1"})).status_code == 404
            assert (await client.get("/.well-known/agent-card.json")).status_code == 200
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


def _echo_agent() -> Starlette:
    """Another agent that tells what it was sent: its card, and the headers of any POST."""

    async def card(request: Request) -> JSONResponse:
        return JSONResponse({"name": "echo", "supportedInterfaces": [{"url": "http://other.test/"}]})

    async def echo(request: Request) -> JSONResponse:
        return JSONResponse({"headers": dict(request.headers)})

    return Starlette(routes=[Route("/.well-known/agent-card.json", card), Route("/", echo, methods=["POST"])])


@pytest_asyncio.fixture
async def keyed_console(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    """The local app in API-key mode (key ``k1`` is alice's), its proxy reaching the echo agent."""
    runtime: Runtime = build_runtime(Settings(store="memory", auth_mode="api-key", api_keys={"k1": "alice"}))
    monkeypatch.setattr(_proxy, "_upstream_transport", lambda: httpx.ASGITransport(app=_echo_agent()))
    app = local_app(create_app(runtime), lambda: runtime, host="127.0.0.1", port=8000, console=True)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as c:
            yield c
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "authorization", [pytest.param(None, id="no-key"), pytest.param("Bearer nope", id="a-wrong-key")]
)
async def test_in_api_key_mode_the_proxy_needs_the_key(
    keyed_console: httpx.AsyncClient, authorization: str | None
) -> None:
    headers = {"X-A2A-Console": "1", "X-A2A-Target": "http://other.test/"}
    if authorization:
        headers["Authorization"] = authorization
    answer = await keyed_console.post("/_console/api/proxy", headers=headers, json={})
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.asyncio
async def test_in_api_key_mode_the_proxy_takes_the_key_and_never_forwards_it(
    keyed_console: httpx.AsyncClient,
) -> None:
    headers = {"X-A2A-Console": "1", "X-A2A-Target": "http://other.test/", "Authorization": "Bearer k1"}
    answer = await keyed_console.post("/_console/api/proxy", headers={**headers, "A2A-Version": "1.0"}, json={})
    assert answer.status_code == 200, answer.text
    sent = answer.json()["headers"]
    assert "authorization" not in sent
    assert sent["a2a-version"] == "1.0"
