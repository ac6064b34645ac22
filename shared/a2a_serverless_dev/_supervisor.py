"""The local stack's processes: the API and each event-sourced function started as processes of
their own (:mod:`._processes`), their output relayed, and all of them stopped together on Ctrl-C.

The API process starts first, the function processes once it has written its ready line: the
ready line then comes as soon as the API serves, instead of after six processes' imports shared
the machine's cores, and a message sent meanwhile waits on its queue for the worker, as one sent
to a cold function does.

A function process that dies once it has started (killed, out of memory, crashed) is started
again, fresh, as Lambda starts a new execution environment for the next invocation: one line says
so. What the dead process had in flight is lost as on AWS: its SQS messages come back after their
visibility timeout, and a run it was executing stops renewing its lease, so the sweeper fails the
task. A process that keeps dying soon after it starts waits longer each time before the next
start (:func:`restart_delay`), so a crash loop does not spin. A function that dies before it ever
started, or the API process, stops the stack (it cannot serve without them).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType

import uvicorn

from a2a_serverless.transport.sse import end_streams

from ._functions import STOP_GRACE_SECONDS
from ._loggers import kit_logger
from ._logs import LogFormat, format_line
from ._moto import MotoServer
from ._processes import ApiSpec, FunctionSpec, spec_json

__all__ = ["RESTART_STABLE_SECONDS", "Shutdown", "restart_delay", "run_processes", "shutdown_on_signals"]

_log = kit_logger(__name__)

RESTART_STABLE_SECONDS = 30.0
"""A function process that ran this long before it died is started again at once; one that died
sooner counts as a crash in a row, and waits :func:`restart_delay` first."""
_MAX_RESTART_DELAY_SECONDS = 30.0


def restart_delay(crashes_in_a_row: int) -> float:
    """Seconds before a dead function process is started again, after ``crashes_in_a_row`` deaths
    in a row each within :data:`RESTART_STABLE_SECONDS` of its start: none for the first, then 1,
    2, 4... up to 30."""
    if crashes_in_a_row <= 1:
        return 0.0
    return min(2.0 ** (crashes_in_a_row - 2), _MAX_RESTART_DELAY_SECONDS)


@dataclass
class _Child:
    """One process of the stack, and, for a function, how it has been dying."""

    name: str
    command: list[str]
    pass_fds: tuple[int, ...] = ()
    ready_text: str | None = None
    """The line the process writes once it serves: a function's once its pollers run (``_processes
    function``), the API's ready line."""
    restarts: bool = True
    """A function's process is started again when it dies after it got ready; the API's is not."""
    process: subprocess.Popen[str] | None = None
    started: float = 0.0
    ready: threading.Event = field(default_factory=threading.Event)
    """Set once any of its processes wrote ``ready_text``, never cleared: a death after that is
    restarted, one before stops the stack."""
    crashes_in_a_row: int = 0
    restart_at: float | None = None

    @property
    def popen(self) -> subprocess.Popen[str]:
        assert self.process is not None
        return self.process


def run_processes(
    shutdown: Shutdown,
    sock: socket.socket,
    moto: MotoServer,
    *,
    save: Callable[[], None] | None,
    log_format: LogFormat,
    api: ApiSpec,
    functions: list[FunctionSpec],
) -> int:
    """Start the function processes and the API process, relay their output, start again a
    function process that dies (see the module doc), and on Ctrl-C (or when the API process dies)
    stop them: the API first (its open streams end), then the functions (their invocations get
    ``STOP_GRACE_SECONDS``), then moto."""
    out_lock = threading.Lock()
    children: list[_Child] = []

    def command(kind: str, spec: ApiSpec | FunctionSpec) -> list[str]:
        return [sys.executable, "-m", "a2a_serverless_dev._processes", kind, spec_json(spec)]

    def start(child: _Child) -> None:
        if child.process is not None and child.process.stdin is not None:
            child.process.stdin.close()
        child.process = subprocess.Popen(
            child.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            pass_fds=child.pass_fds,
        )
        child.started = time.monotonic()
        child.restart_at = None
        relay = threading.Thread(
            target=_relay,
            args=(child.process, child.name, log_format, out_lock, child.ready, child.ready_text),
            name=f"a2a-relay-{child.name}",
            daemon=True,
        )
        relay.start()

    try:
        os.set_inheritable(sock.fileno(), True)
        server = _Child(
            "api", command("api", api), pass_fds=(sock.fileno(),), ready_text=api.ready_line, restarts=False
        )
        children.append(server)
        start(server)
        sock.close()  # the API process owns the listening socket now
        while not server.ready.wait(0.05):  # the functions start once the API serves
            if shutdown.requested or server.popen.poll() is not None:
                break  # (below: a stop, or the API's death, which stops the stack)
        else:
            for spec in functions:
                ready = f"function {spec.function_id} ready"
                children.append(_Child(spec.function_id, command("function", spec), ready_text=ready))
                start(children[-1])
        while not shutdown.event.wait(0.5):
            for child in children:
                if child.restart_at is not None:
                    if time.monotonic() >= child.restart_at:
                        start(child)
                elif (code := child.popen.poll()) is not None:
                    if not child.restarts or not child.ready.is_set():
                        _log.error("a process of the stack stopped: %s (%s)", child.name, _how(code))
                        return 1
                    moto.end_waits()  # its long polls would take messages for nobody
                    _schedule_restart(child, code)
        return 0
    finally:
        moto.drain()  # waiting long polls answer now
        for child in sorted(children, key=lambda c: c.name != "api"):  # the API first
            if child.process is None:
                continue
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
            if child.name == "api":
                _wait(child.process, STOP_GRACE_SECONDS + 2)
        for child in children:
            if child.process is None:
                continue
            _wait(child.process, STOP_GRACE_SECONDS + 2)
            if child.process.stdin is not None:
                child.process.stdin.close()
        if save is not None:
            save()  # the functions have stopped; moto stops after this


def _schedule_restart(child: _Child, code: int) -> None:
    now = time.monotonic()
    quick = now - child.started < RESTART_STABLE_SECONDS
    child.crashes_in_a_row = child.crashes_in_a_row + 1 if quick else 0
    delay = restart_delay(child.crashes_in_a_row)
    child.restart_at = now + delay
    when = "now"
    if delay:
        limit = f"{RESTART_STABLE_SECONDS:g} s"
        when = f"in {delay:g} s ({child.crashes_in_a_row} deaths in a row, each within {limit} of its start)"
    _log.warning(
        "%s's process died (%s): a fresh one starts %s, as Lambda starts a new environment for the next "
        "invocation; what it had in flight is lost, as on AWS (a run: the sweeper fails it once its lease lapses)",
        child.name,
        _how(code),
        when,
    )


def _how(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit {code}"


def _wait(child: subprocess.Popen[str], seconds: float) -> None:
    try:
        child.wait(seconds)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _relay(
    child: subprocess.Popen[str],
    name: str,
    log_format: LogFormat,
    lock: threading.Lock,
    ready: threading.Event,
    ready_text: str | None,
) -> None:
    """A child's output to ours, whole lines at a time (never interleaved with another's), as
    ``log_format`` says (:func:`._logs.format_line`); ``ready`` is set when it writes ``ready_text``."""
    assert child.stdout is not None
    for line in child.stdout:
        if ready_text is not None and line.rstrip("\n") == ready_text:
            ready.set()
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
