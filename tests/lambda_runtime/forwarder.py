"""A TCP forwarder in the test process: it listens on one host-local address (the host's address on
Docker's default bridge, which containers reach as ``host.docker.internal``) and pipes each
connection to a server on 127.0.0.1, so that server need not listen on every interface.

    with Forwarder(("172.17.0.1", port), ("127.0.0.1", port)):
        ...  # a container's connection to host.docker.internal:port reaches 127.0.0.1:port

Bounded: at most ``max_connections`` at once (others wait in the backlog), each closed after
``idle`` seconds without a byte; leaving the ``with`` closes the listener and every connection, and
joins their threads. As a command, until interrupted (docs/lambda-runtime.md, durable functions):

    .venv/bin/python tests/lambda_runtime/forwarder.py 172.17.0.1:9014 127.0.0.1:9014
"""

from __future__ import annotations

import contextlib
import select
import signal
import socket
import socketserver
import sys
import threading
from types import TracebackType

POLL = 0.5  # how soon a connection's thread sees the forwarder stop


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = False  # server_close joins them (block_on_close)
    block_on_close = True

    def __init__(self, listen: tuple[str, int], target: tuple[str, int], max_connections: int, idle: float):
        self.target = target
        self.idle = idle
        self.stopping = threading.Event()
        self.slots = threading.BoundedSemaphore(max_connections)
        super().__init__(listen, _Pipe)

    def process_request(self, request: socket.socket | tuple[bytes, socket.socket], client_address: object) -> None:
        self.slots.acquire()  # the accept loop waits here while max_connections are open
        try:
            super().process_request(request, client_address)  # type: ignore[arg-type]
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        try:
            super().process_request_thread(request, client_address)  # type: ignore[arg-type]
        finally:
            self.slots.release()


class _Pipe(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        client: socket.socket = self.request
        try:
            upstream = socket.create_connection(self.server.target, timeout=10)
        except OSError:
            return  # the client sees its connection closed, as if refused
        with upstream:
            peer = {client: upstream, upstream: client}
            quiet = 0.0
            while not self.server.stopping.is_set() and quiet < self.server.idle:
                ready, _, _ = select.select(list(peer), [], [], POLL)
                quiet = 0.0 if ready else quiet + POLL
                for sock in ready:
                    try:
                        data = sock.recv(65536)
                        if not data:
                            return
                        peer[sock].sendall(data)
                    except OSError:
                        return


class Forwarder:
    """Forwards TCP connections to ``listen`` to ``target``, in threads of this process."""

    def __init__(
        self,
        listen: tuple[str, int],
        target: tuple[str, int],
        *,
        max_connections: int = 32,
        idle: float = 300.0,
    ) -> None:
        self._server = _Server(listen, target, max_connections, idle)
        self.address: tuple[str, int] = self._server.server_address  # type: ignore[assignment]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL}, name=f"forwarder {listen}"
        )

    def __enter__(self) -> Forwarder:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._server.stopping.set()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=10)
        with contextlib.suppress(OSError):
            self._server.server_close()  # joins the connections' threads: each stops within POLL


def _address(text: str) -> tuple[str, int]:
    """``HOST:PORT``; an empty host (every interface) is refused: this listens on one address."""
    host, _, port = text.rpartition(":")
    if not host or host in {"0.0.0.0", "::"}:  # noqa: S104 - the values refused
        raise SystemExit(f"forwarder.py: {text!r} names no single address to listen on (e.g. the bridge's gateway)")
    return host, int(port)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: forwarder.py LISTEN_HOST:PORT TARGET_HOST:PORT", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Forwarder(_address(argv[0]), _address(argv[1])) as forwarder:
        print(f"forwarding {forwarder.address[0]}:{forwarder.address[1]} to {argv[1]}", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            while not stop.wait(1):
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
