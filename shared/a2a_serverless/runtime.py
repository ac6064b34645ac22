"""The process-wide wiring: settings, store, queue and executor, built once per cold start.

Nothing here does I/O at import. ``get_runtime()`` builds the runtime from the environment on first
use and caches it for warm invocations; tests build their own with ``build_runtime(settings, ...)``
and pass it explicitly (``create_app(runtime)``), so no test depends on process globals.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .blobs import PartOffloader, PartPresenter
from .config import ConfigError, Settings
from .ports import TaskStore, WorkQueue
from .ports.durable import DurableRuns

if TYPE_CHECKING:
    from .execution.api import AgentExecutor
    from .push.signing import NotificationSigner

__all__ = ["Runtime", "build_runtime", "get_runtime", "load_executor", "reset_runtime"]


@dataclass
class Runtime:
    settings: Settings
    store: TaskStore
    queue: WorkQueue
    parts: PartPresenter = field(default_factory=lambda: PartPresenter(None, 900))
    """Turns the store's references to large parts back into parts for a client (:mod:`.blobs`)."""
    offloader: PartOffloader | None = None
    """Stores large parts as objects (the store it was given to does so on every write; a run's
    event queue does so as events arrive)."""
    durable: DurableRuns | None = None
    """Durable mode: the executions of tasks (CancelTask wakes one waiting for input to end it)."""
    _executor: AgentExecutor | None = field(default=None, repr=False)
    _push_signer: NotificationSigner | None = field(default=None, repr=False)

    @property
    def executor(self) -> AgentExecutor:
        """The configured executor, imported on first use (only the worker needs it)."""
        if self._executor is None:
            self._executor = load_executor(self.settings.executor)
        return self._executor

    @property
    def push_signer(self) -> NotificationSigner | None:
        """The notification signer when ``push_signing`` is on (keys in SSM, loaded on first use)."""
        if not self.settings.push_signing:
            return None
        if self._push_signer is None:
            from .push.signing import NotificationSigner, SsmKeySource

            self._push_signer = NotificationSigner(
                SsmKeySource(self.settings.push_signing_key_parameter),
                issuer=self.settings.public_url,
                ttl_seconds=self.settings.push_token_ttl_seconds,
            )
        return self._push_signer


def load_executor(path: str) -> AgentExecutor:
    """Import ``package.module:Class`` and instantiate it. Raises ``ConfigError`` with a clear
    message when the path does not name an importable AgentExecutor class."""
    from .execution._path import executor_target
    from .execution.api import AgentExecutor

    target: Any = executor_target(path)  # any import failure: one ConfigError line
    try:
        executor = target() if isinstance(target, type) else target
    except Exception as exc:
        raise ConfigError(f"executor {path!r}: creating it failed ({type(exc).__name__}: {exc})") from exc
    if isinstance(executor, AgentExecutor):
        return executor
    if _is_sdk_executor(executor):
        # An unmodified a2a-sdk executor: run it through the adapter, never with our types.
        from .execution.sdk_adapter import SdkExecutorAdapter

        return SdkExecutorAdapter(executor)
    raise ConfigError(f"executor {path!r} is not an AgentExecutor (it is {type(executor).__name__})")


def _is_sdk_executor(obj: object) -> bool:
    return any(
        cls.__name__ == "AgentExecutor" and cls.__module__.startswith("a2a.server.") for cls in type(obj).__mro__
    )


def build_runtime(
    settings: Settings,
    *,
    store: TaskStore | None = None,
    queue: WorkQueue | None = None,
    push_signer: NotificationSigner | None = None,
    offloader: PartOffloader | None = None,
    durable: DurableRuns | None = None,
) -> Runtime:
    """Wire adapters for ``settings``; explicit ``store``/``queue``/``push_signer`` win (tests,
    benchmarks). An explicit store keeps its own large-part handling: pass the ``offloader`` it
    stores parts with, so runs store theirs alike and responses can read them back."""
    blobs = offloader.blobs if offloader is not None else None
    if store is None:
        if settings.store == "memory":
            from .adapters.memory_blobs import MemoryBlobStore
            from .adapters.memory_store import MemoryTaskStore

            offloader = offloader or PartOffloader(MemoryBlobStore(), settings.blob_threshold_bytes)
            blobs = offloader.blobs
            store = MemoryTaskStore(offloader=offloader)
        else:
            from .adapters.dynamodb_store import DynamoDBTaskStore

            if offloader is None and settings.blob_bucket:
                from .adapters.s3_blobs import S3BlobStore

                blobs = S3BlobStore(settings.blob_bucket)
                offloader = PartOffloader(blobs, settings.blob_threshold_bytes)
            store = DynamoDBTaskStore(settings.table_name, ttl_days=settings.task_ttl_days, offloader=offloader)
    runtime = Runtime(
        settings=settings,
        store=store,
        queue=queue,  # type: ignore[arg-type]
        parts=PartPresenter(blobs, settings.blob_url_seconds),
        offloader=offloader,
        _push_signer=push_signer,
    )
    if settings.execution_mode == "durable":
        from .adapters.lambda_durable import LambdaDurableRuns
        from .execution.durable import DurableQueue

        runtime.durable = durable if durable is not None else LambdaDurableRuns(settings.durable_function)
        if queue is None:
            runtime.queue = DurableQueue(store, runtime.durable)
    elif queue is None:
        if settings.queue_url:
            from .adapters.sqs_queue import SqsWorkQueue

            runtime.queue = SqsWorkQueue(settings.queue_url)
        else:
            from .execution.inline import InlineWorkQueue

            runtime.queue = InlineWorkQueue(runtime)
    return runtime


_lock = threading.Lock()
_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    """The process runtime, built from the environment on first call."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = build_runtime(Settings.from_env())
        return _runtime


def reset_runtime() -> None:
    global _runtime
    with _lock:
        _runtime = None
