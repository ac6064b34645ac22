"""The local stack's processes: the API and each event-sourced function started as processes of
their own (:mod:`._processes`), their output relayed, and all of them stopped together on Ctrl-C or
when one dies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType

import uvicorn

from ..transport.sse import end_streams
from ._functions import STOP_GRACE_SECONDS
from ._logs import LogFormat, format_line
from ._moto import MotoServer
from ._processes import ApiSpec, FunctionSpec, spec_json

__all__ = ["Shutdown", "run_processes", "shutdown_on_signals"]

_log = logging.getLogger(__name__)


def run_processes(
    shutdown: Shutdown,
    sock: socket.socket,
    moto: MotoServer,
    *,
    save: Callable[[], None] | None,
    log_format: LogFormat,
    ready_line: str,
    api: ApiSpec,
    functions: list[FunctionSpec],
) -> int:
    """Start the function processes and the API process, relay their output, and on Ctrl-C (or a
    child that dies) stop them: the API first (its open streams end), then the functions (their
    invocations get ``STOP_GRACE_SECONDS``), then moto."""
    out_lock = threading.Lock()
    children: list[tuple[str, subprocess.Popen[str]]] = []

    def spawn(name: str, kind: str, spec: ApiSpec | FunctionSpec, pass_fds: tuple[int, ...] = ()) -> None:
        command = [sys.executable, "-m", "a2a_serverless.devstack._processes", kind, spec_json(spec)]
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            pass_fds=pass_fds,
        )
        children.append((name, child))
        relay = threading.Thread(
            target=_relay, args=(child, name, log_format, out_lock), name=f"a2a-relay-{name}", daemon=True
        )
        relay.start()

    try:
        for spec in functions:
            spawn(spec.function_id, "function", spec)
        os.set_inheritable(sock.fileno(), True)
        spawn("api", "api", api, pass_fds=(sock.fileno(),))
        sock.close()  # the API process owns the listening socket now
        while not shutdown.event.wait(0.5):
            dead = [(name, child.returncode) for name, child in children if child.poll() is not None]
            if dead:
                _log.error("a process of the stack stopped: %s", ", ".join(f"{n} (exit {c})" for n, c in dead))
                return 1
        return 0
    finally:
        moto.drain()  # waiting long polls answer now
        for name, child in sorted(children, key=lambda c: c[0] != "api"):  # the API first
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            if name == "api":
                _wait(child, STOP_GRACE_SECONDS + 2)
        for _, child in children:
            _wait(child, STOP_GRACE_SECONDS + 2)
            if child.stdin is not None:
                child.stdin.close()
        if save is not None:
            save()  # the functions have stopped; moto stops after this


def _wait(child: subprocess.Popen[str], seconds: float) -> None:
    try:
        child.wait(seconds)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _relay(child: subprocess.Popen[str], name: str, log_format: LogFormat, lock: threading.Lock) -> None:
    """A child's output to ours, whole lines at a time (never interleaved with another's), as
    ``log_format`` says (:func:`._logs.format_line`)."""
    assert child.stdout is not None
    for line in child.stdout:
        shown = format_line(name, line, log_format)
        if shown is None:
            continue
        with lock:
            sys.stdout.write(shown + "\n")
            sys.stdout.flush()


@dataclass
class Shutdown:
    """SIGINT/SIGTERM outside uvicorn's own handling: before it runs (setup is short, and serving is
    skipped once a stop was asked for) and after (uvicorn re-raises the signals it caught). A second
    signal abandons the wait for running invocations."""

    signals: int = 0
    server: uvicorn.Server | None = None
    event: threading.Event = field(default_factory=threading.Event)

    @property
    def requested(self) -> bool:
        return self.signals > 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.signals += 1
        self.event.set()
        end_streams()  # open streams end now, rather than be cut off by uvicorn's graceful timeout
        if self.server is not None:
            self.server.should_exit = True
            self.server.force_exit = self.signals > 1


@contextlib.contextmanager
def shutdown_on_signals() -> Iterator[Shutdown]:
    shutdown = Shutdown()
    if threading.current_thread() is not threading.main_thread():
        yield shutdown
        return
    previous = {sig: signal.signal(sig, shutdown) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield shutdown
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
