"""moto's server standing in for DynamoDB, SQS and S3 on a free local port: in this process (tests),
or in a process of its own (the local stack, :mod:`._moto_process`), with the local stack's fixes
of moto (:mod:`.moto_fixes`) installed and checked first, and behind the stack's check of whom it
answers (:func:`._hosts.local_only_wsgi`: no web page reaches moto)."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from ._hosts import local_only_wsgi
from .moto_fixes import check_shapes, drain_receives, end_waiting_receives, install_all, resume_receives

__all__ = ["GuardedMotoServer", "MotoServer", "drain_receives", "install_patches", "moto_server", "running_moto"]


def install_patches() -> None:
    """The local stack's fixes of moto (:mod:`.moto_fixes`), for the rest of the process
    (idempotent). Raises :class:`.moto_fixes.MotoShapeError`, patching nothing, if the installed
    moto is not shaped as the fixes expect."""
    # werkzeug logs every request at INFO, and the pollers long-poll once a second each.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    install_all()


class GuardedMotoServer:
    """moto's server, as ``moto.server.ThreadedMotoServer`` runs it (its app, its request handler, a
    thread per request), on ``host`` and a free port, with its app behind :func:`._hosts.local_only_wsgi`:
    a request whose ``Host`` is not moto's own or that comes from a web page of another origin is
    refused before moto sees it."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        app = local_only_wsgi(DomainDispatcherApplication(create_backend_app), host)
        self._server = make_server(host, 0, app, threaded=True, request_handler=MotoRequestHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="a2a-moto", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()


@dataclass
class MotoServer:
    """A running moto server: its endpoint, and how to end its waiting long polls."""

    endpoint: str
    drain: Callable[[], None]
    end_waits: Callable[[], None]
    """End the long polls waiting now, not later ones (a function process that asked died)."""


@contextmanager
def moto_server(host: str = "127.0.0.1", *, process: bool = False) -> Iterator[str]:
    """Run moto's server on ``host`` and a free port; yield its endpoint URL; stop it on exit.
    In this process by default (tests reach into its backends); with ``process=True`` in a process
    of its own (:mod:`._moto_process`, the local stack)."""
    with running_moto(host, process=process) as server:
        yield server.endpoint


@contextmanager
def running_moto(host: str = "127.0.0.1", *, process: bool = False) -> Iterator[MotoServer]:
    if process:
        check_shapes()  # fail here, with the fixes' own error, before a process is started
        with _moto_process(host) as server:
            yield server
        return
    install_patches()
    resume_receives()
    guarded = GuardedMotoServer(host)
    guarded.start()
    try:
        yield MotoServer(guarded.endpoint, drain_receives, end_waiting_receives)
    finally:
        drain_receives()
        guarded.stop()


_START_SECONDS = 60.0
_STOP_SECONDS = 5.0


@contextmanager
def _moto_process(host: str) -> Iterator[MotoServer]:
    command = [sys.executable, "-m", "a2a_serverless_dev._moto_process", "--host", host]
    # Its own session: a Ctrl-C in the terminal reaches the stack, which stops moto last.
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        endpoint = _read_endpoint(child)

        def signal_child(signum: int) -> None:
            if child.poll() is None:
                child.send_signal(signum)

        yield MotoServer(endpoint, partial(signal_child, signal.SIGUSR1), partial(signal_child, signal.SIGUSR2))
    finally:
        if child.poll() is None:
            child.terminate()
        try:
            child.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()


def _read_endpoint(child: subprocess.Popen[str]) -> str:
    found: list[str] = []
    refused: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:  # read to the end: a full pipe would block the server
            if not found and line.startswith("moto "):
                found.append(line.split(" ", 1)[1].strip())
                ready.set()
            elif line.startswith("moto-fixes "):  # the process's check of moto failed
                refused.append(json.loads(line.split(" ", 1)[1]))
        ready.set()

    threading.Thread(target=read, name="a2a-moto-start", daemon=True).start()
    if not ready.wait(_START_SECONDS) or not found:
        if refused:
            raise RuntimeError(f"moto's process refused to start:\n{refused[0]}")
        raise RuntimeError(f"moto's process did not start (exit code {child.poll()})")
    return found[0]
