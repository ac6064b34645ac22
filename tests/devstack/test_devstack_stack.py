"""The whole local stack, with stand-ins for the app and the worker, in its own process."""

from __future__ import annotations

import contextlib
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_serverless_dev.stack import DevOptions, StackError, _bind, run

STANDIN = Path(__file__).with_name("standin_stack.py")
READY = "A2A agent card: "


class Lines:
    """A process's stdout, line by line, with timeouts."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=self._pump, args=(stdout,), daemon=True).start()

    def _pump(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_for_end(self, timeout: float = 10) -> None:
        while (line := self._lines.get(timeout=timeout)) is not None:
            self.seen.append(line)

    def wait_for(self, prefix: str, timeout: float = 30) -> str:
        while True:
            line = self._lines.get(timeout=timeout)
            if line is None:
                raise AssertionError(f"stdout ended before {prefix!r}; saw {self.seen}")
            self.seen.append(line)
            if line.startswith(prefix):
                return line


@contextlib.contextmanager
def _stack() -> Iterator[tuple[subprocess.Popen[str], Lines]]:
    process = subprocess.Popen(
        [sys.executable, str(STANDIN)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        yield process, Lines(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def test_the_stack_serves_feeds_the_worker_and_stops_cleanly() -> None:
    with _stack() as (process, out):
        # Given: the stack is up
        base = out.wait_for(READY).removeprefix(READY).removesuffix("/.well-known/agent-card.json")

        # Then: the app is served with the environment the stack set up
        card = httpx.get(f"{base}/.well-known/agent-card.json").json()
        assert card == {"url": base, "table": "standin-TasksTable"}
        assert "resolved a2a_serverless.functions.worker:handler" in out.seen

        # When: work is queued, it reaches the worker; a reported failure comes back
        assert httpx.post(f"{base}/enqueue", params={"task": "ok"}).status_code == 202
        assert out.wait_for("handled ok") == "handled ok attempt=1 in=standin-WorkerFunction"
        httpx.post(f"{base}/enqueue", params={"task": "fail-once"})
        out.wait_for("handled fail-once attempt=1")
        out.wait_for("handled fail-once attempt=2", timeout=10)

        # When: it is told to stop
        process.send_signal(signal.SIGTERM)

        # Then: it exits 0, having said it was ready exactly once, without a traceback
        _assert_clean_exit(process, out)


def test_ctrl_c_stops_the_stack_cleanly() -> None:
    with _stack() as (process, out):
        out.wait_for(READY)

        process.send_signal(signal.SIGINT)

        _assert_clean_exit(process, out)


def _assert_clean_exit(process: subprocess.Popen[str], out: Lines) -> None:
    assert process.wait(timeout=20) == 0
    assert process.stderr is not None
    stderr = process.stderr.read()
    assert "Traceback" not in stderr
    assert "Finished server process" in stderr
    out.wait_for_end()
    assert sum(line.startswith(READY) for line in out.seen) == 1


def test_a_taken_port_fails_before_anything_starts() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]

        with pytest.raises(StackError, match=f"cannot listen on http://127.0.0.1:{port}"):
            run(DevOptions(port=port), app_factory=_never, resolve_handler=_never)


def _never(*_: Any) -> Any:
    raise AssertionError("nothing should start")


def test_connections_accepted_by_the_http_port_have_nodelay() -> None:
    # Without TCP_NODELAY each request after the first on a kept-alive connection waited for the
    # client's delayed ACK (~40 ms): uvicorn writes a response's head and body apart.
    with _bind("127.0.0.1", 0) as listener:
        listener.listen()
        with socket.create_connection(listener.getsockname()[:2]):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
