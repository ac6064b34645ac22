"""Tracing: one OpenTelemetry trace per turn of a task, across the functions (docs/tracing.md).

Off by default, and then nothing here imports OpenTelemetry: every function checks the switch
(:mod:`._switch`, ``A2A_TRACING``) and does nothing more. On, a turn's trace is the A2A call's
server span, the enqueue, the worker's run with a span per commit and the executor's
``invoke_agent`` span (the agent's own spans nest under it), then per event-log item the
dispatcher's span and each delivery's, with its webhook POSTs. Context travels as a W3C
``traceparent`` with the work item, the event-log item and the delivery item.

The shared code calls these, one line each where it does the thing traced: the transport
(:func:`server_call`), SendMessage's enqueue (:func:`enqueue`), the worker (:func:`traced_run`,
:func:`invoke_agent`), the run log (:func:`commit`), the store's log item (:func:`traceparent`),
the dispatcher (:func:`dispatch`), the delivery (:func:`traced_delivery`, :func:`traced_post`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Coroutine, Iterator, Mapping
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from . import _names as n
from ._switch import (
    CONTENT_ENV,
    DIR_ENV,
    SWITCH_ENV,
    ServerCall,
    TracingConfigError,
    checked,
    reset,
    server_call,
    switch,
    traceparent,
)

__all__ = [
    "CONTENT_ENV",
    "DIR_ENV",
    "SWITCH_ENV",
    "CommitNote",
    "ServerCall",
    "TracingConfigError",
    "checked",
    "commit",
    "dispatch",
    "enqueue",
    "invoke_agent",
    "reset",
    "server_call",
    "traced_delivery",
    "traced_post",
    "traced_run",
    "traceparent",
    "tracing_on",
]

P = ParamSpec("P")
R = TypeVar("R")


def tracing_on() -> bool:
    return switch().on


def enqueue(task_id: str, message_id: str) -> contextlib.AbstractContextManager[str]:
    """Around queuing a work item; yields the ``traceparent`` the item carries ('' when off)."""
    if not switch().on:
        return contextlib.nullcontext("")
    from ._spans import enqueue_span

    return enqueue_span(task_id, message_id)


class _Work(Protocol):
    @property
    def tenant(self) -> str: ...
    @property
    def owner(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def message_id(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def trace(self) -> str: ...


W = TypeVar("W", bound=_Work)


def traced_run(
    run: Callable[Concatenate[Any, W, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Any, W, P], Coroutine[Any, Any, R]]:
    """The worker's run of a work item (``run(runtime, item, ...)``) as a consumer span that
    continues the item's trace."""

    @functools.wraps(run)
    async def traced(runtime: Any, item: W, /, *args: P.args, **kwargs: P.kwargs) -> R:
        current = switch()
        if not current.on:
            return await run(runtime, item, *args, **kwargs)
        from ._spans import entry_span

        attributes: dict[str, Any] = {n.A2A_TASK_ID: item.task_id, n.A2A_MESSAGE_ID: item.message_id}
        if item.tenant:
            attributes[n.A2A_TENANT] = item.tenant
        attributes[n.WORK_TURN] = item.turn
        if isinstance(receives := kwargs.get("receive_count"), int):
            attributes[n.WORK_RECEIVE_COUNT] = receives
        links = await _previous_turn(runtime, item) if item.turn > 1 else []
        with entry_span(n.SPAN_RUN, item.trace, attributes, content=current.content, links=links):
            return await run(runtime, item, *args, **kwargs)

    return traced


async def _previous_turn(runtime: Any, item: _Work) -> list[str]:
    """The trace of the task's turn before this one: the commit that logged its last event (the
    one the task was at when it accepted this message), where the store keeps it. One read of
    one log item per later turn, only while tracing is on."""
    import asyncio

    from ..ports import Scope

    scope = Scope(item.tenant, item.owner)
    try:
        events = await asyncio.to_thread(runtime.store.read_events, scope, item.task_id, item.turn - 1, 1)
    except Exception:  # a link is not worth failing a run for
        return []
    return [str(event.trace) for event in events if getattr(event, "trace", "")]


class _Executor(Protocol):
    def execute(self, context: Any, event_queue: Any, /) -> Coroutine[Any, Any, None]: ...


def invoke_agent(executor: _Executor, context: Any, events: Any) -> Coroutine[Any, Any, None]:
    """``executor.execute(context, events)``, inside the GenAI ``invoke_agent`` span when tracing."""
    current = switch()
    if not current.on:
        return executor.execute(context, events)
    from ._spans import invoke_agent as traced

    message = getattr(context, "message", None)
    attributes: dict[str, Any] = {n.A2A_TASK_ID: str(getattr(context, "task_id", ""))}
    if context_id := getattr(context, "context_id", ""):
        attributes[n.CONVERSATION_ID] = str(context_id)
    if message is not None:
        attributes[n.A2A_MESSAGE_ID] = str(getattr(message, "message_id", ""))
    text = None
    if current.content and message is not None:
        text = "".join(str(getattr(part, "text", "") or "") for part in getattr(message, "parts", ()))
    agent = str(getattr(executor, "name", "") or type(executor).__name__)
    return traced(lambda: executor.execute(context, events), agent=agent, attributes=attributes, input_text=text)


class CommitNote:
    """What a commit's span learns once it is written (nothing, when tracing is off)."""

    def stored(self, last_seq: int) -> None:
        """The commit holds the events up to ``last_seq``."""


class _LiveCommit(CommitNote):
    def __init__(self, span: Any) -> None:
        self._span = span

    def stored(self, last_seq: int) -> None:
        self._span.set_attribute(n.COMMIT_LAST_SEQ, last_seq)


_OFF_COMMIT = contextlib.nullcontext(CommitNote())


def commit(events: int, size: int) -> contextlib.AbstractContextManager[CommitNote]:
    """Around one group commit of a run's ``events`` (``size`` bytes of JSON) to the store."""
    if not switch().on:
        return _OFF_COMMIT
    return _live_commit(events, size)


@contextlib.contextmanager
def _live_commit(events: int, size: int) -> Iterator[CommitNote]:
    from ._spans import commit_span

    with commit_span(events, size) as span:
        yield _LiveCommit(span)


def dispatch(
    trace: str, *, task_id: str, up_to_seq: int, records: int, links: list[str]
) -> contextlib.AbstractContextManager[str]:
    """The dispatcher's handling of one task's stream records: continues the trace of the newest
    commit (``trace``), linked to the batch's other commits (``links``); yields the ``traceparent``
    its delivery items carry."""
    if not switch().on:
        return contextlib.nullcontext("")
    from ._spans import dispatch_span

    attributes = {n.A2A_TASK_ID: task_id, n.PUSH_UP_TO_SEQ: up_to_seq, n.STREAM_RECORDS: records}
    return dispatch_span(trace, links, attributes)


class _Delivery(Protocol):
    @property
    def task_id(self) -> str: ...
    @property
    def config_id(self) -> str: ...
    @property
    def up_to_seq(self) -> int: ...
    @property
    def trace(self) -> str: ...


class _Delivered(Protocol):
    @property
    def outcome(self) -> str: ...
    @property
    def delivered(self) -> int: ...


D = TypeVar("D", bound=_Delivery)
DR = TypeVar("DR", bound=_Delivered)


def traced_delivery(deliver: Callable[Concatenate[D, P], DR]) -> Callable[Concatenate[D, P], DR]:
    """A delivery of an item (``deliver(item, ..., attempt=n)``) as a consumer span continuing the
    dispatcher's trace; its POSTs (:func:`traced_post`) nest under it."""

    @functools.wraps(deliver)
    def traced(item: D, /, *args: P.args, **kwargs: P.kwargs) -> DR:
        if not switch().on:
            return deliver(item, *args, **kwargs)
        from ._spans import entry_span

        attributes: dict[str, Any] = {
            n.A2A_TASK_ID: item.task_id,
            n.PUSH_CONFIG_ID: item.config_id,
            n.PUSH_UP_TO_SEQ: item.up_to_seq,
        }
        if isinstance(attempt := kwargs.get("attempt"), int):
            attributes[n.PUSH_ATTEMPT] = attempt
        with entry_span(n.SPAN_DELIVER, item.trace, attributes, content=False) as span:
            result = deliver(item, *args, **kwargs)
            span.set_attribute(n.PUSH_OUTCOME, str(result.outcome))
            span.set_attribute(n.PUSH_DELIVERED, result.delivered)
            return result

    return traced


class _Sent(Protocol):
    @property
    def outcome(self) -> str: ...
    @property
    def status(self) -> int | None: ...


S = TypeVar("S", bound=_Sent)
SEQUENCE_HEADER = "X-A2A-Event-Sequence"


def traced_post(
    send: Callable[[Any, str, bytes, Mapping[str, str]], S],
) -> Callable[[Any, str, bytes, Mapping[str, str]], S]:
    """A webhook POST (``send(self, url, body, headers)``) as a client span: the host, the event's
    sequence number, the status and the outcome (never the URL's path or query, nor a header)."""

    @functools.wraps(send)
    def traced(sender: Any, url: str, body: bytes, headers: Mapping[str, str]) -> S:
        if not switch().on:
            return send(sender, url, body, headers)
        from urllib.parse import urlsplit

        from ._spans import post_span

        try:
            parts = urlsplit(url)
            host, port = parts.hostname or "", parts.port
        except ValueError:
            host, port = "", None
        with post_span(host, port, str(headers.get(SEQUENCE_HEADER, ""))) as span:
            result = send(sender, url, body, headers)
            if result.status is not None:
                span.set_attribute(n.HTTP_STATUS, result.status)
            span.set_attribute(n.PUSH_OUTCOME, result.outcome)
            if result.outcome != "delivered":
                from opentelemetry.trace import Status, StatusCode

                span.set_attribute(n.ERROR_TYPE, str(result.status or "_OTHER"))
                span.set_status(Status(StatusCode.ERROR, result.outcome))
            return result

    return traced
