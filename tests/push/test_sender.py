"""The webhook sender against real HTTP(S) servers on 127.0.0.1: outcome classification, the
connect-time SSRF guard (re-resolution, DNS rebinding, pinning the vetted address while TLS still
verifies the host name), the redirect policy, and connection reuse.

No test touches real DNS: resolvers are injected. A "public" host that is reachable in a test is a
name the injected resolver maps to 127.0.0.1, with a policy (``address_allowed``) under which
127.0.0.1 is the only allowed address. Plain-HTTP tests run with ``allow_private=True`` (which
admits ``http``) plus that policy, so the guard still refuses everything else; the TLS tests run in
the production mode (``allow_private=False``, https only).
"""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Any

import httpcore
import httpx
import pytest

from a2a_serverless.push._guard import BlockedAddressError, GuardedBackend, GuardedTransport, address_class
from a2a_serverless.push.sender import SendResult, WebhookSender, parse_retry_after
from a2a_serverless.push.urls import validate_webhook_url
from testkit.tls import server_certificate

PUBLIC = "public.example.test"
SECRET = "Bearer s3cr3t-token-value"
TOKEN = "notification-token-xyz"
HEADERS = {
    "Authorization": SECRET,
    "X-A2A-Notification-Token": TOKEN,
    "Content-Type": "application/a2a+json",
}
BODY = b'{"statusUpdate":{"taskId":"t-1"}}\r\n\x00\xff tail'
LOOPBACK = ip_address("127.0.0.1")


def only_loopback(address: IPv4Address | IPv6Address) -> bool:
    return address == LOOPBACK


def table(mapping: dict[str, list[str]]) -> Callable[[str], list[str]]:
    return lambda host: mapping.get(host, [])


def no_dns(host: str) -> list[str]:
    raise AssertionError(f"unexpected resolution of {host!r}")


# --- a scriptable, recording HTTP server -------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    delay: float = 0.0


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    client_port: int

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


@dataclass
class Hook:
    """A server's script (per path: replies in turn, the last one repeats) and what it saw."""

    port: int = 0
    script: dict[str, list[Reply]] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    connections: int = 0
    closed: int = 0
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, path: str, *replies: Reply) -> None:
        self.script[path] = list(replies)

    def next_reply(self, path: str) -> Reply:
        with self.lock:
            replies = self.script.get(path) or [Reply()]
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def paths(self) -> list[str]:
        return [seen.path for seen in self.requests]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse is observable
    server: _Server

    def do_POST(self) -> None:
        hook = self.server.hook
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with hook.lock:
            hook.requests.append(
                Seen(self.command, self.path, list(self.headers.items()), body, self.client_address[1])
            )
        reply = hook.next_reply(self.path)
        if reply.delay and hook.stopping.wait(reply.delay):
            return
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    do_GET = do_PUT = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hook: Hook, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hook = hook
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.hook.lock:
            self.hook.connections += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.hook.lock:
            self.hook.closed += 1
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-reply (the timeout test) is expected


@pytest.fixture
def serve() -> Iterator[Callable[..., Hook]]:
    """Start servers on 127.0.0.1 (optionally TLS); all are stopped after the test."""
    running: list[tuple[_Server, threading.Thread, Hook]] = []

    def start(tls: ssl.SSLContext | None = None) -> Hook:
        hook = Hook()
        server = _Server(hook, tls)
        hook.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        running.append((server, thread, hook))
        return hook

    yield start
    for server, thread, hook in running:
        hook.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def hook(serve: Callable[..., Hook]) -> Hook:
    return serve()


@dataclass
class Dials(httpcore.NetworkBackend):
    """The real socket backend, recording every (host, port) it is asked to dial."""

    dialled: list[tuple[str, int]] = field(default_factory=list)
    inner: httpcore.NetworkBackend = field(default_factory=httpcore.SyncBackend)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        self.dialled.append((host, port))
        return self.inner.connect_tcp(host, port, timeout, local_address, socket_options)


@pytest.fixture
def dials() -> Dials:
    return Dials()


@pytest.fixture
def make_sender(dials: Dials) -> Iterator[Callable[..., WebhookSender]]:
    """Plain-HTTP senders whose only allowed address is 127.0.0.1, dialling through ``dials``."""
    senders: list[WebhookSender] = []

    def make(
        resolve: Callable[[str], list[str]] | None = None, *, timeout: float = 2.0, max_redirects: int = 3
    ) -> WebhookSender:
        resolver = resolve or table({PUBLIC: ["127.0.0.1"]})
        transport = GuardedTransport(resolve=resolver, address_allowed=only_loopback, backend=dials)
        sender = WebhookSender(timeout=timeout, allow_private=True, max_redirects=max_redirects, transport=transport)
        senders.append(sender)
        return sender

    yield make
    for sender in senders:
        sender.close()


@pytest.fixture
def sender(make_sender: Callable[..., WebhookSender]) -> WebhookSender:
    return make_sender()


def url(hook: Hook, path: str = "/hook", host: str = PUBLIC, scheme: str = "http") -> str:
    return f"{scheme}://{host}:{hook.port}{path}"


def assert_safe(result: SendResult) -> None:
    for secret in (SECRET, "s3cr3t", TOKEN, "statusUpdate"):
        assert secret not in result.reason


# --- classification ----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 201, 202, 204])
def test_2xx_is_delivered_with_headers_and_body_byte_exact(hook: Hook, sender: WebhookSender, status: int) -> None:
    hook.on("/hook", Reply(status))
    result = sender.send(url(hook), BODY, HEADERS)
    assert result == SendResult("delivered", status, f"HTTP {status}")
    [seen] = hook.requests
    assert (seen.method, seen.path, seen.body) == ("POST", "/hook", BODY)
    for name, value in HEADERS.items():
        assert seen.header(name) == value
    assert seen.header("Host") == f"{PUBLIC}:{hook.port}"
    assert seen.header("Content-Length") == str(len(BODY))


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429, 408])
def test_server_errors_throttling_and_request_timeout_are_retried(
    hook: Hook, sender: WebhookSender, status: int
) -> None:
    hook.on("/hook", Reply(status, body=b"error detail mentioning " + SECRET.encode()))
    result = sender.send(url(hook), BODY, HEADERS)
    assert (result.outcome, result.status, result.retry_after) == ("retry", status, None)
    assert_safe(result)


@pytest.mark.parametrize(("status", "value"), [(429, "7"), (503, "120")])
def test_retry_after_seconds_is_reported(hook: Hook, sender: WebhookSender, status: int, value: str) -> None:
    hook.on("/hook", Reply(status, headers=(("Retry-After", value),)))
    result = sender.send(url(hook), BODY, HEADERS)
    assert (result.outcome, result.retry_after) == ("retry", float(value))


def test_retry_after_as_an_http_date(hook: Hook, sender: WebhookSender) -> None:
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=90)
    hook.on("/hook", Reply(503, headers=(("Retry-After", later.strftime("%a, %d %b %Y %H:%M:%S GMT")),)))
    result = sender.send(url(hook), BODY, HEADERS)
    assert result.outcome == "retry"
    assert result.retry_after is not None
    assert 80 <= result.retry_after <= 90


def test_retry_after_parsing() -> None:
    assert parse_retry_after(None) is None
    assert parse_retry_after(" 30 ") == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=lambda: 1445412480.0 - 60) == 60.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=lambda: 1445412480.0 + 60) == 0.0
    for garbage in ("soon", "-5", "1.5", "9" * 400, ""):
        assert parse_retry_after(garbage) is None


def test_retry_after_is_ignored_on_other_retry_statuses(hook: Hook, sender: WebhookSender) -> None:
    hook.on("/hook", Reply(500, headers=(("Retry-After", "7"),)))
    assert sender.send(url(hook), BODY, HEADERS).retry_after is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 410, 413, 422])
def test_other_4xx_are_final(hook: Hook, sender: WebhookSender, status: int) -> None:
    hook.on("/hook", Reply(status, body=b"nope"))
    result = sender.send(url(hook), BODY, HEADERS)
    assert (result.outcome, result.status) == ("final", status)
    assert_safe(result)


@pytest.mark.parametrize("status", [300, 304])
def test_other_3xx_are_final(hook: Hook, sender: WebhookSender, status: int) -> None:
    hook.on("/hook", Reply(status, headers=(("Location", "/elsewhere"),)))
    result = sender.send(url(hook), BODY, HEADERS)
    assert (result.outcome, result.status) == ("final", status)
    assert hook.paths() == ["/hook"]


def test_a_server_that_does_not_answer_in_time_is_retried(
    hook: Hook, make_sender: Callable[..., WebhookSender]
) -> None:
    # Given a server that holds its answer for a minute (until the test ends, in fact)
    hook.on("/slow", Reply(200, delay=60.0))
    # When a sender with a 0.3 s timeout posts to it
    result = make_sender(timeout=0.3).send(url(hook, "/slow"), BODY, HEADERS)
    # Then it gave up at its timeout: a sender that waited for the answer would have got the 200
    assert (result.outcome, result.status) == ("retry", None)
    assert "timed out" in result.reason
    assert hook.paths() == ["/slow"]


def test_a_refused_connection_is_retried(make_sender: Callable[..., WebhookSender]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = make_sender().send(f"http://{PUBLIC}:{port}/hook", BODY, HEADERS)
    assert (result.outcome, result.status) == ("retry", None)
    assert result.reason == "connection failed (ConnectError)"


def test_a_name_that_does_not_resolve_is_retried(make_sender: Callable[..., WebhookSender], dials: Dials) -> None:
    result = make_sender(table({})).send("http://not-yet.example.test/hook", BODY, HEADERS)
    assert (result.outcome, result.reason) == ("retry", "webhook host does not resolve")
    assert dials.dialled == []


def test_a_transient_failure_then_success(hook: Hook, sender: WebhookSender) -> None:
    hook.on("/hook", Reply(503), Reply(503), Reply(200))
    outcomes = [sender.send(url(hook), BODY, HEADERS).outcome for _ in range(3)]
    assert outcomes == ["retry", "retry", "delivered"]


def test_a_large_response_body_does_not_matter(hook: Hook, sender: WebhookSender) -> None:
    hook.on("/hook", Reply(200, body=b"x" * 300_000))
    assert sender.send(url(hook), BODY, HEADERS).outcome == "delivered"
    hook.on("/hook", Reply(200))
    assert sender.send(url(hook), BODY, HEADERS).outcome == "delivered"


# --- the SSRF guard at send time ---------------------------------------------------------------

LITERALS = [
    pytest.param("127.0.0.1", "loopback", id="loopback"),
    pytest.param("10.0.0.1", "private", id="private-10"),
    pytest.param("169.254.169.254", "link-local", id="cloud-metadata"),
    pytest.param("[::1]", "loopback", id="v6-loopback"),
    pytest.param("[fc00::1]", "unique-local", id="v6-unique-local"),
    pytest.param("[fe80::1]", "link-local", id="v6-link-local"),
    pytest.param("224.0.0.1", "multicast", id="multicast"),
    pytest.param("0.0.0.0", "unspecified", id="unspecified"),  # noqa: S104
    pytest.param("[::ffff:127.0.0.1]", "loopback", id="v4-mapped-loopback"),
]


@pytest.mark.parametrize(("host", "kind"), LITERALS)
def test_literal_non_public_addresses_are_final_in_production_mode(hook: Hook, host: str, kind: str) -> None:
    with WebhookSender(timeout=0.5, resolve=no_dns) as sender:
        for scheme in ("https", "http"):
            result = sender.send(f"{scheme}://{host}:{hook.port}/hook", BODY, HEADERS)
            assert (result.outcome, result.status) == ("final", None)
            assert_safe(result)
    assert hook.connections == 0


@pytest.mark.parametrize(("host", "kind"), LITERALS)
def test_the_guard_itself_refuses_literal_addresses_without_dialling(
    hook: Hook, dials: Dials, host: str, kind: str
) -> None:
    # Below the sender's URL check: the transport alone refuses, without resolving or dialling.
    transport = GuardedTransport(resolve=no_dns, backend=dials)
    with httpx.Client(transport=transport, timeout=0.5) as client, pytest.raises(BlockedAddressError) as refused:
        client.post(f"http://{host}:{hook.port}/hook", content=BODY, headers=HEADERS)
    assert str(refused.value) == f"webhook host is a {kind} address, which is not allowed"
    assert isinstance(refused.value, httpx.ConnectError)
    assert dials.dialled == []
    assert hook.connections == 0


def test_a_name_resolving_to_a_private_address_is_final() -> None:
    resolver = table({"hooks.example.test": ["10.1.2.3"]})
    with WebhookSender(timeout=0.5, resolve=resolver) as sender:
        result = sender.send("https://hooks.example.test/hook", BODY, HEADERS)
    assert result == SendResult("final", None, "webhook host is a private address, which is not allowed")


def test_a_name_resolving_to_this_machine_is_refused_before_any_connection(hook: Hook) -> None:
    # The server is really there at 127.0.0.1: only the guard stands between the send and it.
    resolver = table({"hooks.example.test": ["127.0.0.1"]})
    with WebhookSender(timeout=0.5, resolve=resolver) as sender:
        result = sender.send(f"https://hooks.example.test:{hook.port}/hook", BODY, HEADERS)
    assert (result.outcome, result.reason) == ("final", "webhook host is a loopback address, which is not allowed")
    assert hook.connections == 0


def test_one_non_public_address_among_public_ones_refuses_the_name(dials: Dials) -> None:
    resolver = table({"multi.example.test": ["93.184.216.34", "127.0.0.1"]})
    transport = GuardedTransport(resolve=resolver, backend=dials)
    with WebhookSender(timeout=0.5, transport=transport) as sender:
        result = sender.send("https://multi.example.test/hook", BODY, HEADERS)
    assert (result.outcome, result.reason) == ("final", "webhook host is a loopback address, which is not allowed")
    assert dials.dialled == []


def test_dns_rebinding_after_the_creation_check_is_refused_at_send_time(hook: Hook) -> None:
    answers = iter([["93.184.216.34"]])

    def rebinding(host: str) -> list[str]:
        return next(answers, ["127.0.0.1"])  # public once (at creation), this machine ever after

    target = f"https://rebind.example.test:{hook.port}/hook"
    assert validate_webhook_url(target, resolve=rebinding) == target
    with WebhookSender(timeout=0.5, resolve=rebinding) as sender:
        result = sender.send(target, BODY, HEADERS)
    assert (result.outcome, result.reason) == ("final", "webhook host is a loopback address, which is not allowed")
    assert hook.connections == 0


def test_the_guard_dials_the_vetted_address_not_the_name(hook: Hook, sender: WebhookSender, dials: Dials) -> None:
    # The socket layer is handed the checked IP, so it cannot resolve the name again (rebinding);
    # the Host header still names the host.
    assert sender.send(url(hook), BODY, HEADERS).outcome == "delivered"
    assert dials.dialled == [("127.0.0.1", hook.port)]
    assert hook.requests[0].header("Host") == f"{PUBLIC}:{hook.port}"


def test_the_next_vetted_address_is_tried_when_one_refuses(hook: Hook, dials: Dials) -> None:
    # Nothing listens on 127.0.0.2: that dial is refused, and the other vetted address is used.
    resolver = table({PUBLIC: ["127.0.0.2", "127.0.0.1"]})
    transport = GuardedTransport(resolve=resolver, address_allowed=lambda a: a.is_loopback, backend=dials)
    with WebhookSender(timeout=2, allow_private=True, transport=transport) as sender:
        assert sender.send(url(hook), BODY, HEADERS).outcome == "delivered"
    assert dials.dialled == [("127.0.0.2", hook.port), ("127.0.0.1", hook.port)]


def test_literal_addresses_are_used_as_they_are() -> None:
    backend = GuardedBackend(resolve=no_dns, address_allowed=only_loopback)
    assert backend.vet("127.0.0.1") == ["127.0.0.1"]


def test_resolver_answers_that_are_not_addresses_are_refused() -> None:
    backend = GuardedBackend(resolve=table({PUBLIC: ["not-an-ip"]}), address_allowed=only_loopback)
    with pytest.raises(BlockedAddressError, match="not an IP address"):
        backend.vet(PUBLIC)


def test_unix_sockets_are_refused() -> None:
    with pytest.raises(BlockedAddressError):
        GuardedBackend().connect_unix_socket("/var/run/docker.sock")


def test_address_classes() -> None:
    expected = {
        "8.8.8.8": "public",
        "192.168.1.1": "private",
        "240.0.0.1": "reserved",
        "fd12::1": "unique-local",
        "::ffff:10.0.0.1": "private",
    }
    assert {a: address_class(ip_address(a)) for a in expected} == expected


# --- URL checks at send time -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("http://hooks.example.test/hook", "webhook url refused: url must use https"),
        ("https://user:pw@hooks.example.test/hook", "webhook url refused: url must not carry credentials"),
        ("https://localhost/hook", "webhook url refused: url must not point at this machine"),
        ("https://[::1/hook", "webhook url refused: url is not a valid absolute URL"),
    ],
)
def test_the_url_is_checked_again_before_sending(target: str, reason: str) -> None:
    with WebhookSender(timeout=0.5, resolve=no_dns) as sender:
        result = sender.send(target, BODY, HEADERS)
    assert result.outcome == "final"
    assert result.reason.startswith(reason)


def test_a_header_that_cannot_be_sent_is_final_and_not_echoed(hook: Hook, sender: WebhookSender) -> None:
    result = sender.send(url(hook), BODY, {"Authorization": "Bearer caf\u00e9-" + SECRET})
    assert (result.outcome, result.reason) == ("final", "request could not be built")
    assert hook.requests == []


# --- redirects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("absolute", [False, True])
def test_same_origin_307_308_are_followed_with_method_body_and_headers(
    hook: Hook, sender: WebhookSender, status: int, absolute: bool
) -> None:
    location = url(hook, "/moved?x=1") if absolute else "/moved?x=1"
    hook.on("/hook", Reply(status, headers=(("Location", location),)))
    hook.on("/moved?x=1", Reply(204))
    result = sender.send(url(hook), BODY, HEADERS)
    assert result == SendResult("delivered", 204, "HTTP 204")
    _first, second = hook.requests
    assert (second.method, second.path, second.body) == ("POST", "/moved?x=1", BODY)
    for name, value in HEADERS.items():
        assert second.header(name) == value


def test_a_redirect_to_another_port_is_final_and_never_reaches_it(
    serve: Callable[..., Hook], sender: WebhookSender
) -> None:
    first, second = serve(), serve()
    first.on("/hook", Reply(308, headers=(("Location", url(second)),)))
    result = sender.send(url(first), BODY, HEADERS)
    assert result == SendResult("final", 308, "redirect to another host refused")
    assert second.connections == 0


@pytest.mark.parametrize(
    "location",
    [
        pytest.param("http://other.example.test:{port}/hook", id="other-name-same-address"),
        pytest.param("https://public.example.test:{port}/hook", id="other-scheme"),
        pytest.param("http://metadata.example.test/latest/meta-data/", id="name-to-cloud-metadata"),
        pytest.param("http://169.254.169.254/latest/meta-data/", id="literal-cloud-metadata"),
    ],
)
def test_a_redirect_to_another_origin_is_final_without_a_connection(
    hook: Hook, make_sender: Callable[..., WebhookSender], dials: Dials, location: str
) -> None:
    # other.example.test reaches the very same server: only the origin rule keeps the credentials home.
    resolver = table(
        {PUBLIC: ["127.0.0.1"], "other.example.test": ["127.0.0.1"], "metadata.example.test": ["169.254.169.254"]}
    )
    hook.on("/hook", Reply(307, headers=(("Location", location.format(port=hook.port)),)))
    result = make_sender(resolver).send(url(hook), BODY, HEADERS)
    assert result == SendResult("final", 307, "redirect to another host refused")
    assert hook.paths() == ["/hook"]
    assert dials.dialled == [("127.0.0.1", hook.port)]


def test_each_redirect_hop_that_dials_is_checked_again(
    hook: Hook, make_sender: Callable[..., WebhookSender], dials: Dials
) -> None:
    # Same origin, but the first connection is closed, and DNS now points inside the network.
    answers = iter([["127.0.0.1"]])
    hook.on("/hook", Reply(307, headers=(("Location", "/next"), ("Connection", "close"))))
    result = make_sender(lambda host: next(answers, ["10.0.0.9"])).send(url(hook), BODY, HEADERS)
    assert result == SendResult("final", 307, "webhook host is a private address, which is not allowed")
    assert hook.paths() == ["/hook"]
    assert dials.dialled == [("127.0.0.1", hook.port)]


def test_redirect_credentials_in_the_location_are_refused(hook: Hook, sender: WebhookSender) -> None:
    hook.on("/hook", Reply(307, headers=(("Location", f"http://u:p@{PUBLIC}:{hook.port}/next"),)))
    result = sender.send(url(hook), BODY, HEADERS)
    assert (result.outcome, result.status) == ("final", 307)
    assert result.reason.startswith("webhook url refused: url must not carry credentials")
    assert hook.paths() == ["/hook"]


@pytest.mark.parametrize("status", [301, 302, 303])
def test_method_changing_redirects_are_final(hook: Hook, sender: WebhookSender, status: int) -> None:
    hook.on("/hook", Reply(status, headers=(("Location", "/next"),)))
    result = sender.send(url(hook), BODY, HEADERS)
    assert (result.outcome, result.status) == ("final", status)
    assert hook.paths() == ["/hook"]


def test_a_redirect_without_location_is_final(hook: Hook, sender: WebhookSender) -> None:
    hook.on("/hook", Reply(307))
    assert sender.send(url(hook), BODY, HEADERS) == SendResult("final", 307, "HTTP 307 without a Location")


@pytest.mark.parametrize("max_redirects", [0, 3])
def test_a_redirect_loop_is_final_after_max_redirects(
    hook: Hook, make_sender: Callable[..., WebhookSender], max_redirects: int
) -> None:
    hook.on("/loop", Reply(307, headers=(("Location", "/loop"),)))
    result = make_sender(max_redirects=max_redirects).send(url(hook, "/loop"), BODY, HEADERS)
    assert result == SendResult("final", 307, f"too many redirects (more than {max_redirects})")
    assert hook.paths() == ["/loop"] * (max_redirects + 1)


# --- the client's lifetime ---------------------------------------------------------------------


def test_the_client_and_its_connection_are_reused_and_close_closes_them(hook: Hook, sender: WebhookSender) -> None:
    for _ in range(3):
        assert sender.send(url(hook), BODY, HEADERS).outcome == "delivered"
    assert hook.connections == 1
    assert len({seen.client_port for seen in hook.requests}) == 1
    assert hook.closed == 0

    sender.close()
    deadline = time.monotonic() + 3
    while hook.closed == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hook.closed == 1
    with pytest.raises(RuntimeError, match="closed"):
        sender.send(url(hook), BODY, HEADERS)
    sender.close()  # idempotent


def test_the_default_transport_is_reused_and_the_context_manager_closes(hook: Hook) -> None:
    with WebhookSender(timeout=2, allow_private=True) as sender:
        for _ in range(2):
            assert sender.send(f"http://127.0.0.1:{hook.port}/hook", BODY, HEADERS).outcome == "delivered"
    assert hook.connections == 1
    with pytest.raises(RuntimeError, match="closed"):
        sender.send(f"http://127.0.0.1:{hook.port}/hook", BODY, HEADERS)


def test_development_mode_with_the_default_policy_reaches_loopback_only_by_choice(hook: Hook) -> None:
    with WebhookSender(timeout=2, allow_private=True, address_allowed=lambda a: False) as sender:
        result = sender.send(f"http://127.0.0.1:{hook.port}/hook", BODY, HEADERS)
    assert (result.outcome, result.status) == ("final", None)
    assert hook.connections == 0


def test_cookies_from_a_receiver_are_not_kept(hook: Hook, sender: WebhookSender) -> None:
    hook.on("/hook", Reply(200, headers=(("Set-Cookie", "session=abc; Path=/"),)))
    sender.send(url(hook), BODY, HEADERS)
    sender.send(url(hook), BODY, HEADERS)
    assert [seen.header("Cookie") for seen in hook.requests] == [None, None]


def test_environment_proxies_are_ignored(hook: Hook, sender: WebhookSender, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    assert sender.send(url(hook), BODY, HEADERS).outcome == "delivered"


# --- TLS: the vetted address is dialled, the host name is verified --------------------------------


@dataclass(frozen=True)
class Certs:
    server: ssl.SSLContext
    client: ssl.SSLContext


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A throwaway CA and a server certificate for public.example.test only (no IP SANs)."""
    made = server_certificate(PUBLIC, valid_for=datetime.timedelta(hours=1))
    directory = tmp_path_factory.mktemp("tls")
    (directory / "leaf.pem").write_bytes(made.certificate)
    (directory / "key.pem").write_bytes(made.key)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(directory / "leaf.pem", directory / "key.pem")
    client = ssl.create_default_context(cadata=made.ca.decode())
    return Certs(server, client)


def tls_sender(certs: Certs, dials: Dials, resolver: Callable[[str], list[str]]) -> WebhookSender:
    # Production mode (https only); the private CA and the loopback-only policy come with the transport.
    transport = GuardedTransport(resolve=resolver, address_allowed=only_loopback, verify=certs.client, backend=dials)
    return WebhookSender(timeout=2, transport=transport)


def test_tls_verifies_the_host_name_while_dialling_the_vetted_address(
    serve: Callable[..., Hook], certs: Certs, dials: Dials
) -> None:
    hook = serve(certs.server)
    seen_sni: list[str | None] = []
    certs.server.sni_callback = lambda sock, name, ctx: seen_sni.append(name)
    with tls_sender(certs, dials, table({PUBLIC: ["127.0.0.1"]})) as sender:
        result = sender.send(url(hook, scheme="https"), BODY, HEADERS)
    certs.server.sni_callback = None
    assert result == SendResult("delivered", 200, "HTTP 200")
    assert dials.dialled == [("127.0.0.1", hook.port)]
    assert seen_sni == [PUBLIC]
    assert hook.requests[0].header("Host") == f"{PUBLIC}:{hook.port}"
    assert hook.requests[0].body == BODY


def test_tls_to_a_name_the_certificate_does_not_cover_fails(
    serve: Callable[..., Hook], certs: Certs, dials: Dials
) -> None:
    # Same vetted address, other name: had the guard put the IP into SNI or verification, this
    # would behave like the test above.
    hook = serve(certs.server)
    with tls_sender(certs, dials, table({"other.example.test": ["127.0.0.1"]})) as sender:
        result = sender.send(url(hook, host="other.example.test", scheme="https"), BODY, HEADERS)
    assert (result.outcome, result.status, result.reason) == ("retry", None, "connection failed (ConnectError)")
    assert dials.dialled == [("127.0.0.1", hook.port)]
    assert hook.requests == []
