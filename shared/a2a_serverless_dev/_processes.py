"""The local stack's processes: the API in one, each event-sourced function in one of its own, as on
AWS (a function's globals, environment and log keys are its own, and the stack uses every core).

``python -m a2a_serverless_dev._processes api SPEC`` serves the gateway app on the listening
socket the stack bound (passed by file descriptor) and prints the ready line when it accepts
connections; ``... function SPEC`` runs the pollers of one function's event sources (SQS, DynamoDB
stream, schedule) with the stack's own poller code. ``SPEC`` is JSON (:class:`ApiSpec`,
:class:`FunctionSpec`).

Each child runs in a session of its own, so a Ctrl-C in the terminal reaches only the stack, which
stops them (SIGTERM) in order; a child whose standard input closes (the stack gone) stops too. Their
output goes to the stack, which writes it line by line, never interleaved.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import TypedDict

from a2a_serverless.json_types import Json

__all__ = ["ApiSpec", "DurableSpec", "FunctionSpec", "main"]


class DurableSpec(TypedDict):
    """Durable mode's worker in the API process (:mod:`.durable`)."""

    function_name: str
    invocation_timeout: int
    execution_timeout: int


@dataclass(frozen=True)
class ApiSpec:
    fd: int
    host: str
    port: int
    ready_line: str
    code_roots: list[str] = field(default_factory=list)
    grace_seconds: int = 2
    durable: DurableSpec | None = None
    """Durable mode: the durable worker runs in this process, on the local runner."""
    console: bool = True
    """Serve the console and its dev API (:mod:`.console`)."""


@dataclass(frozen=True)
class FunctionSpec:
    function_id: str
    template_path: str
    endpoint: str
    prefix: str
    workers: int | None
    resources: dict[str, dict[str, str]]
    code_roots: list[str] = field(default_factory=list)


def spec_json(spec: ApiSpec | FunctionSpec) -> str:
    return json.dumps(asdict(spec), separators=(",", ":"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in {"api", "function"}:
        sys.stderr.write("usage: python -m a2a_serverless_dev._processes {api|function} SPEC\n")
        return 2
    data: Json = json.loads(args[1])
    for root in reversed(data.get("code_roots", [])):
        if root not in sys.path:
            sys.path.insert(0, root)
    if args[0] == "api":
        return _api(ApiSpec(**data))
    return _function(FunctionSpec(**data))


def _watch_parent(stop: threading.Event) -> None:
    """Stop once standard input closes: the stack is gone, whatever killed it."""

    def watch() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch, name="a2a-parent-watch", daemon=True).start()


def _api(spec: ApiSpec) -> int:
    import socket

    import uvicorn

    from a2a_serverless.wiring import get_runtime

    from ._gateway import GatewayServer, gateway_app
    from ._local_app import local_app

    os.environ.setdefault("OTEL_SERVICE_NAME", "api")  # the traces' name for this process, as its log lines'
    sock = socket.socket(fileno=spec.fd)
    closing: list[Callable[[], None]] = []
    if spec.durable is None:
        app = gateway_app()
    else:
        from .durable import DurableLimits, durable_gateway_app

        limits = DurableLimits(int(spec.durable["invocation_timeout"]), int(spec.durable["execution_timeout"]))
        app, worker = durable_gateway_app(limits=limits, function_name=str(spec.durable["function_name"]))
        closing.append(worker.close)
    app = local_app(app, get_runtime, host=spec.host, port=spec.port, console=spec.console)
    server = GatewayServer(
        uvicorn.Config(
            app,
            host=spec.host,
            port=spec.port,
            log_level="info",
            lifespan="auto",
            timeout_graceful_shutdown=spec.grace_seconds,
        ),
        ready_line=spec.ready_line,
    )
    gone = threading.Event()
    _watch_parent(gone)

    def on_parent_gone() -> None:
        gone.wait()
        server.handle_exit(signal.SIGTERM, None)

    threading.Thread(target=on_parent_gone, name="a2a-parent-gone", daemon=True).start()
    try:
        server.run(sockets=[sock])  # uvicorn handles SIGTERM (and SIGINT) itself: streams end, then it stops
    finally:
        for close in closing:
            close()
    return 0


def _function(spec: FunctionSpec) -> int:
    import contextlib

    from ._functions import EventSources, import_handler, start_pollers
    from .resources import LocalResources, load_template

    os.environ.setdefault("OTEL_SERVICE_NAME", spec.function_id)
    sources = EventSources.of(load_template(Path(spec.template_path)), spec.function_id)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    _watch_parent(stop)
    with contextlib.ExitStack() as stack:
        resources = LocalResources(**spec.resources)
        start_pollers(
            stack, sources, resources, spec.endpoint, prefix=spec.prefix, workers=spec.workers, resolve=import_handler
        )
        sys.stdout.write(f"function {spec.function_id} ready\n")
        sys.stdout.flush()
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
