"""The local stack: moto, the template's table, queues and bucket, the event source pollers (SQS, the
table's stream, schedules), and uvicorn serving the gateway app, all in this process and all
stopped together. Queues, function timeouts and schedules are the template's own.

Startup order matters: the process environment is set (as Lambda would set it) before the worker or
the app is imported or built, because both read their configuration from it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import boto3
import uvicorn

from ..runtime import get_runtime
from ..transport.sse import end_streams, streams_open
from ._environment import FAKE_CREDENTIALS, REGION, LocalEnvironment, apply_environment
from ._imports import ImportPathError, import_object
from ._logs import LogFormat, format_line
from ._moto import MotoServer, running_moto
from ._processes import ApiSpec, FunctionSpec, spec_json
from ._template import (
    ScheduleEventSource,
    SqsEventSource,
    StreamEventSource,
    code_dirs,
    dynamodb_event_sources,
    function_environment,
    localized,
    schedule_event_sources,
    sqs_event_sources,
)
from .console import CONSOLE_PATH, with_console
from .durable import (
    DURABLE_WORKER,
    STATUS_PATH,
    DurableLimits,
    durable_function_arn,
    durable_gateway_app,
    durable_limits,
    is_durable,
)
from .pollers import Handler, SqsPoller, running
from .resources import LocalResources, create_resources, load_template, repo_template_path
from .schedule_pollers import SchedulePoller
from .stream_pollers import StreamPoller

__all__ = ["GATEWAY_APP", "DevOptions", "StackError", "run"]

GATEWAY_APP = "a2a_serverless.transport.app:create_app"
"""The app factory uvicorn serves: the same Starlette app the gateway function runs."""

_log = logging.getLogger(__name__)


class StackError(RuntimeError):
    """The stack cannot start; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class DevOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    """0 picks a free port (the ready line tells which)."""
    executor: str | None = None
    workers: int = 4
    """Pollers per SQS event source: how many invocations run at once."""
    prefix: str = "a2a-local"
    state_dir: Path | None = None
    """Keep the stack's data (tables, queued messages, objects) here across restarts (:mod:`._state`);
    None: in memory, each start a fresh account."""
    log_format: LogFormat = "console"
    """How the processes' output is written (:mod:`._logs`): readable lines, or Powertools' JSON."""
    processes: bool = True
    """The API and each event-sourced function in processes of their own, as on AWS (tests that
    inject an app or handlers run everything in this process)."""
    moto_process: bool = True
    """moto in a process of its own (its server is most of the stack's CPU: sharing this process's
    GIL with uvicorn, the pollers and the functions slowed them all); False keeps it in process."""
    execution_mode: str | None = None
    """``queue`` or ``durable`` (:mod:`.durable`); None: ``$A2A_EXECUTION_MODE``, else queue."""


def run(
    options: DevOptions,
    *,
    app_factory: Callable[[], Any] | None = None,
    resolve_handler: Callable[[str], Handler] | None = None,
    template: Mapping[str, Any] | None = None,
    template_dir: Path | None = None,
) -> int:
    """Run the stack until SIGINT or SIGTERM; return the exit code. ``app_factory``,
    ``resolve_handler`` and ``template`` are for tests; by default the gateway app, the template's
    handlers and ``template.yaml`` are used."""
    task_root: Path | None = None
    template_path: Path | None = None
    code_roots: list[str] = []
    if template is None:
        template_path = repo_template_path()
        template, template_dir = load_template(template_path), template_path.parent
    if template_dir is not None:
        template_path = template_path or template_dir / "template.yaml"
        # As in Lambda, a function's own code (its CodeUri) is importable: an agent project's
        # executor module, without PYTHONPATH; and /var/task is that code (the first CodeUri).
        roots = [(template_dir / code_dir).resolve() for code_dir in code_dirs(template)]
        for root in reversed(roots):
            if str(root) not in sys.path:
                sys.path.insert(0, str(root))
        task_root = roots[0] if roots else None
        code_roots = [str(root) for root in roots]
    template = dict(template)
    sources = EventSources.of(template)
    with contextlib.ExitStack() as stack:
        shutdown = stack.enter_context(_shutdown_on_signals())
        sock = stack.enter_context(_bind(options.host, options.port))
        public_url = _http_url(options.host, sock.getsockname()[1])
        moto = stack.enter_context(running_moto(process=options.moto_process))
        endpoint = moto.endpoint
        sqs = _client("sqs", endpoint)
        resources = create_resources(
            _client("dynamodb", endpoint), sqs, s3=_client("s3", endpoint), prefix=options.prefix, template=template
        )
        _log.info(
            "moto at %s (AWS_ENDPOINT_URL), from template.yaml: %s",
            endpoint,
            ", ".join(
                [
                    *resources.tables.values(),
                    *(url.rsplit("/", 1)[-1] for url in resources.queue_urls.values()),
                    *(f"s3://{name}" for name in resources.buckets.values()),
                ]
            ),
        )
        if {"PushDeliveryQueue", "PushDeadLetterQueue"} <= resources.queue_urls.keys():
            _log.info(
                "redrive dead-lettered push deliveries with: a2a-serverless push-redrive --endpoint-url %s "
                "--queue-url %s --dead-letter-url %s",
                endpoint,
                resources.queue_urls["PushDeliveryQueue"],
                resources.queue_urls["PushDeadLetterQueue"],
            )
        apply_environment(
            LocalEnvironment(
                endpoint_url=endpoint,
                template_env=localized(function_environment(template, resources), task_root),
                public_url=public_url,
                executor=options.executor,
                execution_mode=options.execution_mode,
                durable_function=durable_function_arn(options.prefix, REGION),
                push_attempt_log=_push_attempt_log(stack, options.state_dir),
            )
        )
        durable = _durable_spec(template, options.prefix) if is_durable(os.environ) else None
        if durable is not None:
            _log.info(
                "execution mode durable: each task runs as a durable execution of %s on the local runner "
                "(aws-durable-execution-sdk-python-testing) in the API process, waits in real time; "
                "WorkerFunction stays idle; see %s",
                DURABLE_WORKER,
                STATUS_PATH,
            )
        ready_line = f"A2A agent card: {public_url}/.well-known/agent-card.json"
        _log.info("console: %s%s/ (local only: talk to the agent, watch its tasks)", public_url, CONSOLE_PATH)
        if options.processes and app_factory is None and resolve_handler is None and template_path is not None:
            clients = {name: _client(name, endpoint) for name in ("dynamodb", "sqs", "s3")}
            if options.state_dir is None:
                _log.info("state is in memory: each start is a fresh account (keep it with --state-dir DIR)")
            else:
                _restore(options.state_dir, resources, clients)
            _log.info("functions, each in a process of its own: %s", sources.describe(options.workers))
            return _run_processes(
                shutdown,
                sock,
                moto,
                save=partial(_save, options.state_dir, resources, clients) if options.state_dir else None,
                log_format=options.log_format,
                ready_line=ready_line,
                api=ApiSpec(
                    fd=sock.fileno(),
                    host=options.host,
                    port=sock.getsockname()[1],
                    ready_line=ready_line,
                    code_roots=code_roots,
                    grace_seconds=STOP_GRACE_SECONDS,
                    durable=durable,
                ),
                functions=[
                    FunctionSpec(
                        function_id=function_id,
                        template_path=str(template_path),
                        endpoint=endpoint,
                        prefix=options.prefix,
                        workers=options.workers,
                        resources=asdict(resources),
                        code_roots=code_roots,
                    )
                    for function_id in sources.functions()
                ],
            )
        start_pollers(
            stack,
            sources,
            resources,
            endpoint,
            prefix=options.prefix,
            workers=options.workers,
            resolve=resolve_handler or import_handler,
            abandon=lambda: shutdown.signals > 1,
            on_stop=moto.drain,
        )
        _log.info("pollers: %s", sources.describe(options.workers))
        if app_factory is None and durable is not None:
            app, worker = durable_gateway_app(limits=_limits(durable), function_name=durable["function_name"])
            stack.callback(worker.close)
        else:
            app = (app_factory or gateway_app)()
        app = with_console(app, get_runtime)
        streams_open()
        server = GatewayServer(
            uvicorn.Config(
                app,
                host=options.host,
                port=sock.getsockname()[1],
                log_level="info",
                lifespan="auto",
                timeout_graceful_shutdown=STOP_GRACE_SECONDS,
            ),
            ready_line=ready_line,
        )
        shutdown.server = server
        if not shutdown.requested:
            server.run(sockets=[sock])
    return 0


def _push_attempt_log(stack: contextlib.ExitStack, state_dir: Path | None) -> str:
    """The file of webhook delivery attempts the console shows: in ``--state-dir`` when given (kept),
    else in a directory made for this run and removed when it ends."""
    if state_dir is not None:
        state_dir.mkdir(parents=True, exist_ok=True)
        return str(state_dir / "push-attempts.jsonl")
    directory = tempfile.mkdtemp(prefix="a2a-dev-")
    stack.callback(shutil.rmtree, directory, ignore_errors=True)
    return str(Path(directory) / "push-attempts.jsonl")


class GatewayServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, *, ready_line: str) -> None:
        super().__init__(config)
        self._ready_line = ready_line

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # uvicorn's own handler while it serves: open streams end now, cleanly, rather than be cut
        # off when its graceful shutdown times out.
        end_streams()
        super().handle_exit(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            # Tests and scripts wait for this line: the socket accepts connections from here on.
            sys.stdout.write(self._ready_line + "\n")
            sys.stdout.flush()


STOP_GRACE_SECONDS = 2
"""On Ctrl-C: how long open streams, and then the invocations in flight, get to finish before they
are cut off, as a Lambda environment that is shut down cuts its invocation (a run's work item comes
back, its lease lapses). Twice this and moto's stop: one Ctrl-C ends the stack within about 5 s."""


def _run_processes(
    shutdown: _Shutdown,
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


def _restore(directory: Path, resources: LocalResources, clients: dict[str, Any]) -> None:
    from ..config import Settings
    from ..execution.sweeper import sweep
    from ..runtime import build_runtime
    from ._state import restore_state

    restored = restore_state(directory, resources, clients)
    if restored is None:
        _log.info("state in %s: nothing saved yet (it is saved when the stack stops)", directory)
        return
    # Runs cut off by the last stop still name their run: settle them as the sweeper would once
    # their leases lapsed on AWS, so no task stays WORKING.
    settings = Settings.from_env()
    if settings.execution_mode == "durable":
        # The sweep settles tasks in the table; it starts no executions (they died with the stop:
        # a task that waited for input then cannot be resumed, docs/local-stack.md).
        settings = settings.model_copy(update={"execution_mode": "queue"})
    runtime = build_runtime(settings)
    swept = total = 0
    while swept := sweep(runtime, now=2**31 - 1):
        total += swept
    _log.info(
        "state from %s: %d items, %d queued messages, %d objects; %d run(s) cut off by the last stop failed",
        directory,
        restored["items"],
        restored["messages"],
        restored["objects"],
        total,
    )


def _durable_spec(template: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    limits = durable_limits(template)
    return {
        "function_name": f"{prefix}-{DURABLE_WORKER}",
        "invocation_timeout": limits.invocation_timeout,
        "execution_timeout": limits.execution_timeout,
    }


def _limits(spec: Mapping[str, Any]) -> DurableLimits:
    return DurableLimits(int(spec["invocation_timeout"]), int(spec["execution_timeout"]))


def _save(directory: Path, resources: LocalResources, clients: dict[str, Any]) -> None:
    from ._state import save_state

    try:
        saved = save_state(directory, resources, clients)
    except Exception:
        _log.exception("could not save the state to %s; the previous save, if any, is kept", directory)
        return
    _log.info(
        "state saved to %s: %d items, %d queued messages, %d objects",
        directory,
        saved["items"],
        saved["messages"],
        saved["objects"],
    )


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
class _Shutdown:
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
def _shutdown_on_signals() -> Iterator[_Shutdown]:
    shutdown = _Shutdown()
    if threading.current_thread() is not threading.main_thread():
        yield shutdown
        return
    previous = {sig: signal.signal(sig, shutdown) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield shutdown
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def _bind(host: str, port: int) -> Iterator[socket.socket]:
    """Bind the HTTP port first: a taken port fails before anything else starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        hint = ""
        if exc.errno == errno.EADDRINUSE:
            hint = " (another process has it: choose another with --port, or --port 0 for a free one)"
        raise StackError(f"cannot listen on {_http_url(host, port)}: {exc.strerror or exc}{hint}") from exc
    # create_server leaves the protocol 0, so asyncio does not set TCP_NODELAY on the connections it
    # accepts; uvicorn writes a response's head and body apart, and every request after the first
    # on a kept-alive connection then waited ~40 ms for the client's delayed ACK. Accepted sockets
    # inherit the option from the listener.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with sock:
        yield sock


def _http_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _client(service: str, endpoint: str) -> Any:
    # Explicit settings: these clients exist before the process environment is set.
    return boto3.session.Session(
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region_name=REGION,
    ).client(service, endpoint_url=endpoint)  # type: ignore[call-overload]


def import_handler(path: str) -> Handler:
    return _import_callable(path, "the template's handler")


def gateway_app() -> Any:
    return _import_callable(GATEWAY_APP, "the gateway app factory")()


def _import_callable(path: str, what: str) -> Callable[..., Any]:
    try:
        target = import_object(path)
    except ImportPathError as exc:
        raise StackError(f"{what} {path}: {exc}") from exc
    if not callable(target):
        raise StackError(f"{what} {path} is not callable")
    return target


@dataclass(frozen=True)
class EventSources:
    """The template's event sources, of every function or of one."""

    sqs: list[SqsEventSource]
    streams: list[StreamEventSource]
    schedules: list[ScheduleEventSource]

    @classmethod
    def of(cls, template: Mapping[str, Any], function_id: str | None = None) -> EventSources:
        def mine(source: Any) -> bool:
            return function_id is None or source.function_id == function_id

        return cls(
            [s for s in sqs_event_sources(template) if mine(s)],
            [s for s in dynamodb_event_sources(template) if mine(s)],
            [s for s in schedule_event_sources(template) if mine(s)],
        )

    def functions(self) -> list[str]:
        ids = {s.function_id for s in self.sqs} | {s.function_id for s in self.streams}
        return sorted(ids | {s.function_id for s in self.schedules})

    def describe(self, workers: int) -> str:
        return ", ".join(
            [f"{workers} x {s.queue_id} -> {s.function_id} ({s.handler})" for s in self.sqs]
            + [f"1 x {s.table_id} stream -> {s.function_id} ({s.handler})" for s in self.streams]
            + [f"every {s.every_seconds:g}s -> {s.function_id} ({s.handler})" for s in self.schedules]
        )


def start_pollers(
    stack: contextlib.ExitStack,
    sources: EventSources,
    resources: LocalResources,
    endpoint: str,
    *,
    prefix: str,
    workers: int,
    resolve: Callable[[str], Handler],
    abandon: Callable[[], bool] = lambda: False,
    on_stop: Callable[[], None] = lambda: None,
) -> None:
    """Start the pollers of ``sources`` inside ``stack`` (stopped when it closes, each invocation in
    flight given ``STOP_GRACE_SECONDS``): ``workers`` per SQS source, one per stream source (a
    shard's records in order, as on Lambda) and one per schedule."""
    grace = STOP_GRACE_SECONDS
    queues = [poller_for(s, resources, endpoint, resolve(s.handler), prefix) for s in sources.sqs]
    streams = [stream_poller_for(s, resources, endpoint, resolve(s.handler), prefix) for s in sources.streams]
    schedules = [schedule_poller_for(s, resolve(s.handler), prefix) for s in sources.schedules]
    stack.enter_context(running(queues, workers, abandon=abandon, grace_seconds=grace, on_stop=on_stop))
    stack.enter_context(running(streams, 1, abandon=abandon, grace_seconds=grace))
    stack.enter_context(running(schedules, 1, abandon=abandon, grace_seconds=grace))


def poller_for(
    source: SqsEventSource, resources: LocalResources, endpoint: str, handler: Handler, prefix: str
) -> Callable[[], SqsPoller]:
    def make() -> SqsPoller:
        return SqsPoller(
            sqs=_client("sqs", endpoint),
            source=source,
            queue_url=resources.queue_urls[source.queue_id],
            queue_arn=resources.queue_arns[source.queue_id],
            handler=handler,
            function_name=f"{prefix}-{source.function_id}",
        )

    return make


def stream_poller_for(
    source: StreamEventSource, resources: LocalResources, endpoint: str, handler: Handler, prefix: str
) -> Callable[[], StreamPoller]:
    def make() -> StreamPoller:
        on_failure = resources.queue_urls[source.on_failure_queue_id] if source.on_failure_queue_id else None
        return StreamPoller(
            streams=_client("dynamodbstreams", endpoint),
            sqs=_client("sqs", endpoint),
            source=source,
            stream_arn=resources.table_stream_arns[source.table_id],
            handler=handler,
            function_name=f"{prefix}-{source.function_id}",
            on_failure_queue_url=on_failure,
        )

    return make


def schedule_poller_for(source: ScheduleEventSource, handler: Handler, prefix: str) -> Callable[[], SchedulePoller]:
    def make() -> SchedulePoller:
        return SchedulePoller(source=source, handler=handler, function_name=f"{prefix}-{source.function_id}")

    return make
