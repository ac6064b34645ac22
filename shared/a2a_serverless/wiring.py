"""The wiring: the process's :class:`~.runtime.Runtime`, built from the settings.

This is the one place that chooses adapters (DynamoDB or memory store, SQS or in-process queue,
durable executions, S3 blobs, the SSM-backed push signer, the card signing key) and imports the
executor. It does no I/O
at import: ``get_runtime()`` builds the runtime from the environment on first use and caches it
for warm invocations; tests build their own with ``build_runtime(settings, ...)`` and pass it
explicitly (``create_app(runtime)``), so no test depends on process globals.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

from .blobs import PartOffloader, PartPresenter
from .config import ConfigError, Settings
from .ports import TaskStore, WorkQueue
from .ports.agent_state import AgentStateStore
from .ports.durable import DurableRuns
from .runtime import Runtime

if TYPE_CHECKING:
    from a2a.server.agent_execution import AgentExecutor as SdkAgentExecutor

    from .card.signing import CardSigner
    from .execution.api import AgentExecutor
    from .push.signing import NotificationSigner

__all__ = ["build_runtime", "get_runtime", "load_executor", "reset_runtime"]


def load_executor(path: str) -> AgentExecutor:
    """Import ``package.module:Class`` and instantiate it. Raises ``ConfigError`` with a clear
    message when the path does not name an importable AgentExecutor class."""
    from .execution._path import executor_target
    from .execution.api import AgentExecutor

    target: object = executor_target(path)  # any import failure: one ConfigError line
    try:
        executor = target() if isinstance(target, type) else target
    except Exception as exc:
        raise ConfigError(f"executor {path!r}: creating it failed ({type(exc).__name__}: {exc})") from exc
    if isinstance(executor, AgentExecutor):
        return executor
    if _is_sdk_executor(executor):
        # An unmodified a2a-sdk executor: run it through the adapter, never with our types.
        from .execution.sdk_adapter import SdkExecutorAdapter

        return SdkExecutorAdapter(cast("SdkAgentExecutor", executor))  # the adapter checks it
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
    card_signer: CardSigner | None = None,
    agent_state: AgentStateStore | None = None,
) -> Runtime:
    """Wire adapters for ``settings``; explicit ``store``/``queue``/``push_signer`` win (tests,
    benchmarks). An explicit store keeps its own large-part handling: pass the ``offloader`` it
    stores parts with, so runs store theirs alike and responses can read them back."""
    if store is None:
        store, offloader = _store(settings, offloader)
    durable = _durable_runs(settings, durable)
    if queue is None:
        queue = _work_queue(settings, store, durable)
    if queue is None:
        from .adapters.memory_queues import InlineWorkQueue

        queue = InlineWorkQueue(lambda: runtime)  # the runtime it is part of, made just below
    if agent_state is None:
        agent_state = _agent_state_store(settings, store)
    runtime = Runtime(
        settings=settings,
        store=store,
        queue=queue,
        parts=PartPresenter(offloader.blobs if offloader is not None else None, settings.blob_url_seconds),
        offloader=offloader,
        durable=durable,
        agent_state=agent_state,
        make_executor=lambda: load_executor(settings.executor),
        make_push_signer=(lambda: push_signer) if push_signer is not None else lambda: _ssm_signer(settings),
        make_card_signer=(lambda: card_signer) if card_signer is not None else lambda: _card_signer(settings),
    )
    return runtime


def _store(settings: Settings, offloader: PartOffloader | None) -> tuple[TaskStore, PartOffloader | None]:
    """The configured store and the offloader it stores large parts with: ``offloader`` when given,
    else in memory with the memory store, and in S3 with DynamoDB when a bucket is configured."""
    if settings.store == "memory":
        from .adapters.memory_blobs import MemoryBlobStore
        from .adapters.memory_store import MemoryTaskStore

        offloader = offloader or PartOffloader(MemoryBlobStore(), settings.blob_threshold_bytes)
        return MemoryTaskStore(offloader=offloader), offloader
    from .adapters.dynamodb.store import DynamoDBTaskStore

    if offloader is None and settings.blob_bucket:
        from .adapters.s3_blobs import S3BlobStore

        offloader = PartOffloader(S3BlobStore(settings.blob_bucket), settings.blob_threshold_bytes)
    return DynamoDBTaskStore(settings.table_name, ttl_days=settings.task_ttl_days, offloader=offloader), offloader


def _durable_runs(settings: Settings, durable: DurableRuns | None) -> DurableRuns | None:
    """In durable mode, ``durable`` or Lambda's durable executions; else None."""
    if settings.execution_mode != "durable":
        return None
    from .adapters.lambda_durable import LambdaDurableRuns

    return durable if durable is not None else LambdaDurableRuns(settings.durable_function)


def _work_queue(settings: Settings, store: TaskStore, durable: DurableRuns | None) -> WorkQueue | None:
    """The configured work queue: the durable executions in durable mode, else SQS when a queue is
    configured; None when neither (then the runtime runs its work in process)."""
    if durable is not None:
        from .durable.queue import DurableQueue

        return DurableQueue(store, durable)
    if settings.queue_url:
        from .adapters.sqs import SqsWorkQueue

        return SqsWorkQueue(settings.queue_url)
    return None


def _agent_state_store(settings: Settings, store: TaskStore) -> AgentStateStore:
    """Agent state beside the tasks: in memory with the memory store, else in the tasks table."""
    from .adapters.memory_store import MemoryTaskStore

    if settings.store == "memory" or isinstance(store, MemoryTaskStore):
        from .adapters.memory_agent_state import MemoryAgentStateStore

        return MemoryAgentStateStore()
    from .adapters.dynamodb.agent_state import DynamoDBAgentStateStore

    return DynamoDBAgentStateStore(settings.table_name, ttl_days=settings.task_ttl_days)


def _card_signer(settings: Settings) -> CardSigner:
    """The card signer of the configured key: the KMS key on AWS, a PEM file locally."""
    from .adapters.card_keys import KmsSigningKey, PemSigningKey
    from .card.signing import CardSigner

    if settings.card_signing_key_file:
        return CardSigner(PemSigningKey(settings.card_signing_key_file))
    return CardSigner(KmsSigningKey(settings.card_signing_key))


def _ssm_signer(settings: Settings) -> NotificationSigner:
    from .push.signing import NotificationSigner, SsmKeySource

    return NotificationSigner(
        SsmKeySource(settings.push_signing_key_parameter),
        issuer=settings.public_url,
        ttl_seconds=settings.push_token_ttl_seconds,
    )


_lock = threading.Lock()
_runtime: Runtime | None = None


def get_runtime(settings: Settings | None = None) -> Runtime:
    """The process runtime, built on first call from ``settings`` (a cold start's, already checked)
    or else from the environment."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = build_runtime(settings if settings is not None else Settings.from_env())
        return _runtime


def reset_runtime() -> None:
    global _runtime
    with _lock:
        _runtime = None
