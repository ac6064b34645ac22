"""Running the template's functions, in whichever process hosts them: their handlers imported and
their event sources polled (SQS, the table's stream, schedules). The stack (:mod:`.stack`) uses it
in one process, each function process (:mod:`._processes`) for its function. The gateway app and
its server are :mod:`._gateway`'s: a function process never imports the app, uvicorn or Starlette.

The stack's clients of moto come from one boto3 session (:func:`aws_client`), so each service's
model is read once per process, not once per client.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast, overload

from ._environment import moto_session
from ._imports import ImportPathError, import_object
from ._template import (
    ScheduleEventSource,
    SqsEventSource,
    StreamEventSource,
    dynamodb_event_sources,
    schedule_event_sources,
    sqs_event_sources,
)
from .pollers import Handler, SqsPoller, Turns, running
from .resources import LocalResources
from .schedule_pollers import SchedulePoller
from .stream_pollers import StreamPoller

if TYPE_CHECKING:
    from boto3.session import Session
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

    from a2a_serverless.json_types import JsonValue

__all__ = [
    "LOCAL_SQS_CONCURRENCY",
    "STOP_GRACE_SECONDS",
    "EventSources",
    "StackError",
    "aws_client",
    "concurrency",
    "import_callable",
    "import_handler",
    "start_pollers",
]


LOCAL_SQS_CONCURRENCY = 10
"""Invocations at once for an SQS source whose template sets no limit (no ``ScalingConfig``
``MaximumConcurrency``, no ``ReservedConcurrentExecutions``): Lambda would scale to the account's
limit; a laptop stops here."""


def concurrency(source: SqsEventSource, workers: int | None) -> int:
    """How many invocations of ``source`` run at once: ``workers`` when given (``--workers``), else
    what the template allows, as Lambda does (the worker's ``WorkerMaxConcurrency``)."""
    if workers is not None:
        return workers
    return source.max_concurrency or LOCAL_SQS_CONCURRENCY


class StackError(RuntimeError):
    """The stack cannot start; the message says why, in one line."""


STOP_GRACE_SECONDS = 2
"""On Ctrl-C: how long open streams, and then the invocations in flight, get to finish before they
are cut off, as a Lambda environment that is shut down cuts its invocation (a run's work item comes
back, its lease lapses). Twice this and moto's stop: one Ctrl-C ends the stack within about 5 s."""


@overload
def aws_client(service: Literal["dynamodb"], endpoint: str, *, connections: int = ...) -> DynamoDBClient: ...
@overload
def aws_client(
    service: Literal["dynamodbstreams"], endpoint: str, *, connections: int = ...
) -> DynamoDBStreamsClient: ...
@overload
def aws_client(service: Literal["sqs"], endpoint: str, *, connections: int = ...) -> SQSClient: ...
@overload
def aws_client(service: Literal["s3"], endpoint: str, *, connections: int = ...) -> S3Client: ...
def aws_client(
    service: str, endpoint: str, *, connections: int = 10
) -> DynamoDBClient | DynamoDBStreamsClient | SQSClient | S3Client:
    """A client of ``service`` on the stack's moto (these clients exist before the process
    environment is set), with ``connections`` in its pool (botocore's default is 10)."""
    from botocore.config import Config

    with _session_lock:  # a boto3 session is not thread-safe; the clients it makes are
        # The stubs type client() per literal service name; the overloads above carry that through.
        client: DynamoDBClient | DynamoDBStreamsClient | SQSClient | S3Client = _session().client(  # type: ignore[call-overload]
            service, endpoint_url=endpoint, config=Config(max_pool_connections=max(connections, 10))
        )
    return client


_session_lock = threading.Lock()


@functools.cache
def _session() -> Session:
    """One session for the process's clients of moto: its loader reads a service's model once
    (a fresh session per client read it again: about 0.1 s of CPU each)."""
    return moto_session()


def import_handler(path: str) -> Handler:
    # The template names it as a Lambda handler: it is trusted to be one, as Lambda trusts it.
    return cast("Handler", import_callable(path, "the template's handler"))


def import_callable(path: str, what: str) -> Callable[..., object]:
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
    def of(cls, template: Mapping[str, JsonValue], function_id: str | None = None) -> EventSources:
        def mine(source: SqsEventSource | StreamEventSource | ScheduleEventSource) -> bool:
            return function_id is None or source.function_id == function_id

        return cls(
            [s for s in sqs_event_sources(template) if mine(s)],
            [s for s in dynamodb_event_sources(template) if mine(s)],
            [s for s in schedule_event_sources(template) if mine(s)],
        )

    def functions(self) -> list[str]:
        ids = {s.function_id for s in self.sqs} | {s.function_id for s in self.streams}
        return sorted(ids | {s.function_id for s in self.schedules})

    def describe(self, workers: int | None) -> str:
        return ", ".join(
            [f"{concurrency(s, workers)} x {s.queue_id} -> {s.function_id} ({s.handler})" for s in self.sqs]
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
    workers: int | None,
    resolve: Callable[[str], Handler],
    abandon: Callable[[], bool] = lambda: False,
    on_stop: Callable[[], None] = lambda: None,
) -> None:
    """Start the pollers of ``sources`` inside ``stack`` (stopped when it closes, each invocation in
    flight given ``STOP_GRACE_SECONDS``): as many invocations at once per SQS source as
    :func:`concurrency` says, one per stream source (a shard's records in order, as on Lambda) and
    one per schedule."""
    grace = STOP_GRACE_SECONDS
    counts = [concurrency(s, workers) for s in sources.sqs]
    queues = [
        poller_for(s, resources, endpoint, resolve(s.handler), prefix, n)
        for s, n in zip(sources.sqs, counts, strict=True)
    ]
    streams = [stream_poller_for(s, resources, endpoint, resolve(s.handler), prefix) for s in sources.streams]
    schedules = [schedule_poller_for(s, resolve(s.handler), prefix) for s in sources.schedules]
    stack.enter_context(running(queues, counts, abandon=abandon, grace_seconds=grace, on_stop=on_stop))
    stack.enter_context(running(streams, 1, abandon=abandon, grace_seconds=grace))
    stack.enter_context(running(schedules, 1, abandon=abandon, grace_seconds=grace))


def poller_for(
    source: SqsEventSource, resources: LocalResources, endpoint: str, handler: Handler, prefix: str, slots: int = 1
) -> Callable[[], SqsPoller]:
    """The pollers of one SQS source, ``slots`` of them at most, sharing one client (boto3's clients
    are thread-safe) with a connection for each one's long poll, and taking turns at the queue
    (:class:`.pollers.Turns`: one long poll while it is idle)."""
    sqs = aws_client("sqs", endpoint, connections=slots)
    turns = Turns(slots)

    def make() -> SqsPoller:
        return SqsPoller(
            sqs=sqs,
            source=source,
            queue_url=resources.queue_urls[source.queue_id],
            queue_arn=resources.queue_arns[source.queue_id],
            handler=handler,
            function_name=f"{prefix}-{source.function_id}",
            turns=turns,
        )

    return make


def stream_poller_for(
    source: StreamEventSource, resources: LocalResources, endpoint: str, handler: Handler, prefix: str
) -> Callable[[], StreamPoller]:
    def make() -> StreamPoller:
        on_failure = resources.queue_urls[source.on_failure_queue_id] if source.on_failure_queue_id else None
        return StreamPoller(
            streams=aws_client("dynamodbstreams", endpoint),
            sqs=aws_client("sqs", endpoint),
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
