"""Durable mode in the local stack (``A2A_EXECUTION_MODE=durable`` or ``dev --execution-mode durable``;
``docs/durable-tasks.md``).

On AWS, SendMessage starts each task's durable execution on ``DurableWorkerFunction`` and Lambda
checkpoints, replays and resumes it. Locally the official runner of durable executions
(``aws-durable-execution-sdk-python-testing``, :class:`~a2a_serverless_dev.local_durable.
LocalDurableRuns`) stands in for Lambda's durable-execution service, in the process that serves the
API: its runtime starts and resumes executions on it, and the runner invokes the durable worker (the
SDK's ``durable_execution`` over :func:`~a2a_serverless.durable.turns.run_task`, with a runtime
of the same settings: the stack's DynamoDB table in moto, as every function uses). Waits take real
time (no skipped clock); a task waiting for input holds no invocation.

The durable worker's invocations are counted; ``GET /_local/durable`` on the stack answers them
(JSON), for tests and for a look at what runs. Executions live in the API process's memory: a
stack that stops forgets them (``--state-dir`` keeps the tasks, not their executions).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from a2a_serverless.json_types import Json, JsonValue

from ._loggers import kit_logger

if TYPE_CHECKING:
    from aws_durable_execution_sdk_python.context import DurableContext

    from a2a_serverless.config import Settings
    from a2a_serverless.runtime import Runtime

    from .local_durable import LocalDurableRuns

__all__ = [
    "DURABLE_WORKER",
    "STATUS_PATH",
    "DurableLimits",
    "LocalDurableWorker",
    "durable_function_arn",
    "durable_gateway_app",
    "durable_limits",
    "is_durable",
]

DURABLE_WORKER = "DurableWorkerFunction"
"""The template's durable worker: no event source, so no process of its own locally."""
STATUS_PATH = "/_local/durable"
"""The local stack's view of the durable worker (durable mode only)."""

_log = kit_logger(__name__)


def is_durable(environ: Mapping[str, str]) -> bool:
    """The environment's execution mode is durable (as :class:`~a2a_serverless.config.Settings`
    reads ``A2A_EXECUTION_MODE``)."""
    return environ.get("A2A_EXECUTION_MODE", "").strip().lower() == "durable"


def durable_function_arn(prefix: str, region: str) -> str:
    """What the template gives the functions that start executions (the gateway and SendMessage)
    as ``A2A_DURABLE_FUNCTION`` (the worker's ``live`` alias), named as the local stack names its
    functions. The local stack gives it to every process; only the API process starts executions,
    on the local runner."""
    return f"arn:aws:lambda:{region}:123456789012:function:{prefix}-{DURABLE_WORKER}:live"


@dataclass(frozen=True, slots=True)
class DurableLimits:
    invocation_timeout: int = 900
    """The durable worker's ``Timeout``: an invocation's limit, after which the execution goes on
    in a new invocation."""
    execution_timeout: int = 2_592_000
    """``DurableConfig.ExecutionTimeout``: how long an execution may last, its waits included."""


def durable_limits(template: Mapping[str, JsonValue]) -> DurableLimits:
    """The durable worker's limits as the template sets them (a parameter's default for a ``!Ref``);
    the defaults above when the template has no durable worker."""
    resource = template.get("Resources", {}).get(DURABLE_WORKER)
    if not isinstance(resource, Mapping):
        return DurableLimits()
    defaults: Mapping[str, JsonValue] = template.get("Globals", {}).get("Function", {})
    props: Mapping[str, JsonValue] = {**defaults, **resource.get("Properties", {})}
    parameters: Mapping[str, JsonValue] = template.get("Parameters", {})

    def value(raw: JsonValue, fallback: int) -> int:
        if isinstance(raw, Mapping) and "Ref" in raw:
            raw = parameters.get(str(raw["Ref"]), {}).get("Default")
        try:
            return int(raw)
        except (TypeError, ValueError):
            return fallback

    fallback = DurableLimits()
    return DurableLimits(
        invocation_timeout=value(props.get("Timeout"), fallback.invocation_timeout),
        execution_timeout=value(props.get("DurableConfig", {}).get("ExecutionTimeout"), fallback.execution_timeout),
    )


class LocalDurableWorker:
    """``DurableWorkerFunction`` on the local runner: the runs (``DurableRuns``) the API's runtime
    starts and resumes executions with, the worker's own runtime, and a count of its invocations."""

    def __init__(
        self,
        settings: Settings,
        *,
        limits: DurableLimits = DurableLimits(),
        store: Any = None,
        function_name: str = DURABLE_WORKER,
        around_invocation: Callable[[], AbstractContextManager[Any]] | None = None,
    ) -> None:
        """``around_invocation``: a context each invocation runs in (a benchmark's meter)."""
        from aws_durable_execution_sdk_python.execution import durable_execution

        from a2a_serverless.wiring import build_runtime

        from .local_durable import LocalDurableRuns

        self.function_name = function_name
        self._around = around_invocation or contextlib.nullcontext
        self._lock = threading.Lock()
        self._running = 0
        self._invocations = 0
        self._execution = durable_execution(self._run)
        # Waits in real time, as on Lambda: a task waits for input as long as the settings say.
        self.runs: LocalDurableRuns = LocalDurableRuns(
            self._invoke,
            invocation_timeout=limits.invocation_timeout,
            execution_timeout=limits.execution_timeout,
            skip_time=False,
        )
        # The worker's own runtime, as a function of its own would build it (same settings, same table).
        self.runtime: Runtime = build_runtime(settings, store=store, durable=self.runs)

    def _run(self, event: Any, context: DurableContext) -> Json:
        from a2a_serverless.durable.turns import run_task

        return run_task(event, context, self.runtime)

    def _invoke(self, event: Any, context: Any) -> Any:
        """One invocation of the durable worker (the runner calls it to start, replay or resume)."""
        with self._lock:
            self._running += 1
            self._invocations += 1
        try:
            with self._around():
                output = self._execution(event, context)
        finally:
            with self._lock:
                self._running -= 1
        status = output.get("Status") if isinstance(output, Mapping) else None
        _log.debug("%s invocation ended: %s", self.function_name, status)
        return output

    @property
    def running(self) -> int:
        """Invocations of the durable worker running now."""
        with self._lock:
            return self._running

    def status(self) -> Json:
        with self._lock:
            running, invocations = self._running, self._invocations
        return {
            "executionMode": "durable",
            "function": self.function_name,
            "invocationsRunning": running,
            "invocations": invocations,
            "executions": self.runs.started(),
        }

    def close(self, grace_seconds: float = 2.0) -> None:
        """Stop the runner, once the invocations running end (``grace_seconds`` at most: then they
        are cut off, as a stopped Lambda environment cuts its invocation)."""
        deadline = time.monotonic() + grace_seconds
        while self.running and time.monotonic() < deadline:
            time.sleep(0.02)
        self.runs.close()


def with_status(app: ASGIApp, worker: LocalDurableWorker) -> ASGIApp:
    """``app``, with ``GET /_local/durable`` answering the durable worker's :meth:`status`."""

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != STATUS_PATH or scope.get("method") != "GET":
            await app(scope, receive, send)
            return
        await JSONResponse(worker.status())(scope, receive, send)

    return serve


def durable_gateway_app(
    settings: Settings | None = None,
    *,
    limits: DurableLimits = DurableLimits(),
    function_name: str = DURABLE_WORKER,
    around_invocation: Callable[[], AbstractContextManager[Any]] | None = None,
) -> tuple[ASGIApp, LocalDurableWorker]:
    """The gateway app in durable mode (its runtime's executions run on the local runner) and the
    local durable worker; close the worker when the app stops serving."""
    from a2a_serverless.config import Settings
    from a2a_serverless.transport.app import create_app
    from a2a_serverless.wiring import build_runtime

    settings = settings or Settings.from_env()
    worker = LocalDurableWorker(
        settings, limits=limits, function_name=function_name, around_invocation=around_invocation
    )
    runtime = build_runtime(settings, durable=worker.runs)
    return with_status(create_app(runtime), worker), worker
