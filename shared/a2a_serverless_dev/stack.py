"""The local stack: moto, the template's table, queues and bucket, the event source pollers (SQS, the
table's stream, schedules), and uvicorn serving the gateway app, all in this process and all
stopped together. Queues, function timeouts and schedules are the template's own.

Startup order matters: the process environment is set (as Lambda would set it) before the worker or
the app is imported or built, because both read their configuration from it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from a2a_serverless.lambda_.startup import StartupError
from a2a_serverless.lambda_.startup import check as startup_check
from a2a_serverless.telemetry import DIR_ENV, SWITCH_ENV, TracingConfigError, checked
from a2a_serverless.transport.sse import streams_open
from a2a_serverless.wiring import get_runtime

from ._command import command_line
from ._environment import REGION, LocalEnvironment, apply_environment, prepare_push_signing_keys
from ._functions import (
    STOP_GRACE_SECONDS,
    EventSources,
    StackError,
    aws_client,
    import_handler,
    start_pollers,
)
from ._gateway import GATEWAY_APP, GatewayServer, gateway_app
from ._hosts import is_loopback
from ._local_app import local_app
from ._loggers import kit_logger
from ._logs import LogFormat
from ._moto import running_moto
from ._processes import ApiSpec, DurableSpec, FunctionSpec
from ._state import StateClients, restore_and_settle, save_logged
from ._supervisor import run_processes, shutdown_on_signals
from ._template import (
    code_dirs,
    function_environment,
    localized,
)
from .console import CONSOLE_PATH
from .durable import (
    DURABLE_WORKER,
    STATUS_PATH,
    DurableLimits,
    durable_function_arn,
    durable_gateway_app,
    durable_limits,
    is_durable,
)
from .pollers import Handler
from .resources import create_resources, load_template, repo_template_path

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from a2a_serverless.json_types import JsonValue

__all__ = ["GATEWAY_APP", "DevOptions", "StackError", "check_host", "run", "serves_console"]


_log = kit_logger(__name__)


@dataclass(frozen=True, slots=True)
class DevOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    """0 picks a free port (the ready line tells which)."""
    executor: str | None = None
    workers: int | None = None
    """Invocations at once per SQS event source; None: as the template allows (its
    ``MaximumConcurrency``, the worker's ``WorkerMaxConcurrency``), as on Lambda."""
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
    allow_remote: bool = False
    """Listen on a ``host`` that is not a loopback address (refused without it: the agent, and
    whatever its console's proxy reaches, would be open to the network)."""
    console: bool | None = None
    """Serve the console and its dev API (:mod:`.console`); None: on a loopback ``host`` only."""
    otlp_endpoint: str = ""
    """Also send the spans to this OTLP/HTTP collector (``docs/tracing.md``)."""


def run(
    options: DevOptions,
    *,
    app_factory: Callable[[], ASGIApp] | None = None,
    resolve_handler: Callable[[str], Handler] | None = None,
    template: Mapping[str, JsonValue] | None = None,
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
    console = serves_console(options)
    template = dict(template)
    sources = EventSources.of(template)
    with contextlib.ExitStack() as stack:
        shutdown = stack.enter_context(shutdown_on_signals())
        sock = stack.enter_context(_bind(options.host, options.port))
        public_url = _http_url(options.host, sock.getsockname()[1])
        moto = stack.enter_context(running_moto(process=options.moto_process))
        endpoint = moto.endpoint
        dynamodb, sqs, s3 = aws_client("dynamodb", endpoint), aws_client("sqs", endpoint), aws_client("s3", endpoint)
        resources = create_resources(dynamodb, sqs, s3=s3, prefix=options.prefix, template=template)
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
            # Runs as printed, from the shell that started the stack (tests/e2e/test_push.py).
            redrive = command_line(
                "push-redrive",
                "--endpoint-url",
                endpoint,
                "--queue-url",
                resources.queue_urls["PushDeliveryQueue"],
                "--dead-letter-url",
                resources.queue_urls["PushDeadLetterQueue"],
            )
            _log.info("redrive dead-lettered push deliveries with: %s", redrive)
        apply_environment(
            LocalEnvironment(
                endpoint_url=endpoint,
                template_env=localized(function_environment(template, resources), task_root),
                public_url=public_url,
                executor=options.executor,
                execution_mode=options.execution_mode,
                durable_function=durable_function_arn(options.prefix, REGION),
                push_attempt_log=(attempts := _push_attempt_log(stack, options.state_dir)),
                tracing_dir=str(Path(attempts).parent / "spans") if _traces_by_default(options) else "",
                otlp_endpoint=options.otlp_endpoint,
            )
        )
        try:  # what the settings turn on, checked before any process starts (not at each request)
            startup_check(os.environ, durable_function=True)
        except StartupError as exc:
            raise StackError(f"cannot start: {exc}") from None
        # Beside the processes' start, not before it: moto's SSM costs it about a second of CPU
        # (its first call imports moto's EC2), and only a push delivery needs the keys.
        signing = threading.Thread(target=_prepare_signing, args=(endpoint,), name="a2a-signing-keys", daemon=True)
        signing.start()
        stack.callback(signing.join, 30)
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
        if console:
            _log.info("console: %s%s/ (talk to the agent, watch its tasks)", public_url, CONSOLE_PATH)
        if options.processes and app_factory is None and resolve_handler is None and template_path is not None:
            clients = StateClients(dynamodb=dynamodb, sqs=sqs, s3=s3)
            if options.state_dir is None:
                _log.info("state is in memory: each start is a fresh account (keep it with --state-dir DIR)")
            else:
                restore_and_settle(options.state_dir, resources, clients)
            _log.info("functions, each in a process of its own: %s", sources.describe(options.workers))
            return run_processes(
                shutdown,
                sock,
                moto,
                save=partial(save_logged, options.state_dir, resources, clients) if options.state_dir else None,
                log_format=options.log_format,
                api=ApiSpec(
                    fd=sock.fileno(),
                    host=options.host,
                    port=sock.getsockname()[1],
                    ready_line=ready_line,
                    code_roots=code_roots,
                    grace_seconds=STOP_GRACE_SECONDS,
                    durable=durable,
                    console=console,
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
        app = local_app(app, get_runtime, host=options.host, port=sock.getsockname()[1], console=console)
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


def _prepare_signing(endpoint: str) -> None:
    """The push-signing key set in moto's SSM, created now when signing is on (one line says so);
    if moto cannot make it, the first delivery creates it (creation is atomic: one key set wins)."""
    try:
        created = prepare_push_signing_keys(endpoint)
    except Exception as exc:
        _log.warning("the push-signing key set was not created at start (the first delivery creates it): %s", exc)
        return
    if created:
        _log.info(
            "push notifications are signed: key set created in SSM (%s)", os.environ["A2A_PUSH_SIGNING_KEY_PARAMETER"]
        )


def _traces_by_default(options: DevOptions) -> bool:
    """Whether the stack turns tracing on (``A2A_TRACING=file``, for the console's trace view): yes,
    unless the shell chose for itself or the OpenTelemetry SDK is missing; then one line says tracing
    is off and why. ``--otlp-endpoint`` asks for tracing: without the SDK, the start-up check refuses it."""
    if SWITCH_ENV in os.environ or options.otlp_endpoint:
        return True
    try:
        checked({SWITCH_ENV: "file", DIR_ENV: "."})
    except TracingConfigError as exc:
        _log.warning("tracing is off (the console shows no traces): %s", exc)
        return False
    return True


def check_host(options: DevOptions) -> bool:
    """Whether ``options.host`` is a loopback address; raises :class:`StackError` for one that is
    not, unless ``options.allow_remote``."""
    if is_loopback(options.host):
        return True
    if not options.allow_remote:
        raise StackError(
            f"--host {options.host} is not a loopback address: anyone who can reach this machine could call "
            "the agent; add --allow-remote if you mean it (the console and its dev proxy then stay off unless "
            "--console)"
        )
    return False


def serves_console(options: DevOptions) -> bool:
    """Whether the console is served: on a loopback host unless turned off, elsewhere only when
    asked for, with a warning."""
    if check_host(options):
        return options.console is not False
    _log.warning(
        "listening on %s, beyond this machine (--allow-remote): anyone who can reach it can call the agent "
        "(A2A_AUTH_MODE=%s)",
        options.host,
        os.environ.get("A2A_AUTH_MODE", "none"),
    )
    if options.console:
        _log.warning(
            "the console and its dev API are on (--console): anyone who can reach this machine can read tasks "
            "through it and use its proxy to reach the agents this machine reaches"
        )
        return True
    _log.warning("the console and its dev proxy are off (--console turns them on)")
    return False


def _push_attempt_log(stack: contextlib.ExitStack, state_dir: Path | None) -> str:
    """The file of webhook delivery attempts the console shows: in ``--state-dir`` when given (kept),
    else in a directory made for this run and removed when it ends."""
    if state_dir is not None:
        state_dir.mkdir(parents=True, exist_ok=True)
        return str(state_dir / "push-attempts.jsonl")
    directory = tempfile.mkdtemp(prefix="a2a-dev-")
    stack.callback(shutil.rmtree, directory, ignore_errors=True)
    return str(Path(directory) / "push-attempts.jsonl")


def _durable_spec(template: Mapping[str, JsonValue], prefix: str) -> DurableSpec:
    limits = durable_limits(template)
    return {
        "function_name": f"{prefix}-{DURABLE_WORKER}",
        "invocation_timeout": limits.invocation_timeout,
        "execution_timeout": limits.execution_timeout,
    }


def _limits(spec: DurableSpec) -> DurableLimits:
    return DurableLimits(spec["invocation_timeout"], spec["execution_timeout"])


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
