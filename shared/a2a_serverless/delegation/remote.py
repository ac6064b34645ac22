"""``RemoteAgent``: another A2A agent, called from an executor by its card URL.

The card (A2A specification, section 8) is fetched on first use and kept for
:data:`CARD_TTL_SECONDS` in this process; it says where to call and over which binding
(:mod:`._wire`), and whether the agent streams. Every call carries ``A2A-Version: 1.0`` and the
configured credentials (:mod:`.credentials`), has a timeout, and is retried after a dropped
connection, a timeout, HTTP 5xx, 429 or 408 (``attempts`` in all, with backoff, honouring
``Retry-After``). A retried send cannot make a second remote task: it is the same message (the same
``messageId``, which A2A servers may dedupe on) with the same ``Idempotency-Key`` header.

Open it for a run (``async with RemoteAgent(url) as remote:``): its HTTP client belongs to the
event loop of the run (the worker runs each work item on a loop of its own)."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Self, TypeVar

import httpx
from pydantic import ValidationError

from ..json_types import Json
from ..models import (
    AgentCard,
    Message,
    ProtoModel,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from ..push._guard import AddressPolicy, BlockedAddressError
from ._http import allow_private_default, checked_url, guarded_client
from ._wire import Binding, CallFailed, Endpoint, Method, choose_endpoint, request_for, result_of, sse_data, unwrap
from .credentials import Credentials, headers_of

__all__ = ["CARD_TTL_SECONDS", "ENDED", "RemoteAgent", "RemoteAgentError", "track"]

CARD_TTL_SECONDS = 300.0
ENDED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)
"""The states a delegation waits for: final, or interrupted (the remote waits for us)."""

T = TypeVar("T")
M = TypeVar("M", bound=ProtoModel)

_cards: dict[str, tuple[float, AgentCard, Json]] = {}
_cards_lock = threading.Lock()


class RemoteAgentError(Exception):
    """A call to a remote agent failed for good. The message names the remote and says what
    happened in fixed words (safe to show a caller): never the remote's error text or a header."""


class RemoteAgent:
    """Another A2A agent, by its card URL (``https://host/.well-known/agent-card.json``).

    ``credentials``: the headers to send (:mod:`.credentials`); none by default. ``binding``:
    insist on ``"JSONRPC"`` or ``"HTTP+JSON"`` instead of the card's preference. ``timeout``: each
    call's limit in seconds (a stream's: until it answers; its events then come as they come).
    ``attempts``: tries per call. ``poll_interval``: GetTask polling of an agent that does not
    stream starts there and backs off to ``max_poll_interval``. ``allow_private``: admit http and
    private addresses (default: ``A2A_ALLOW_PRIVATE_WEBHOOKS``, on in the local stack only)."""

    def __init__(
        self,
        card_url: str,
        *,
        credentials: Credentials | None = None,
        binding: Binding | None = None,
        timeout: float = 30.0,
        attempts: int = 3,
        poll_interval: float = 0.25,
        max_poll_interval: float = 5.0,
        allow_private: bool | None = None,
        address_allowed: AddressPolicy | None = None,
    ) -> None:
        self._allow_private = allow_private_default() if allow_private is None else allow_private
        try:
            self.card_url = checked_url(card_url, allow_private=self._allow_private)
        except ValueError as exc:
            raise RemoteAgentError(f"The remote agent at {card_url} cannot be called: {exc}.") from None
        self.name = card_url
        """The agent's name from its card once fetched (its card URL until then): messages use it."""
        self._credentials = credentials
        self._binding = binding
        self._timeout = timeout
        self._attempts = max(1, attempts)
        self._poll = (poll_interval, max_poll_interval)
        self._address_allowed = address_allowed
        self._client: httpx.AsyncClient | None = None
        self._ids = itertools.count(1)
        self._ordinals: dict[str, int] = {}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def _http(self) -> httpx.AsyncClient:
        """The client, made on first use (in the run's event loop)."""
        if self._client is None:
            self._client = guarded_client(allow_private=self._allow_private, address_allowed=self._address_allowed)
        return self._client

    # ------------------------------------------------------------------ the card

    async def card(self) -> AgentCard:
        """The agent's card (fetched, or from this process's cache)."""
        return (await self._card())[0]

    async def _card(self) -> tuple[AgentCard, Endpoint]:
        with _cards_lock:
            cached = _cards.get(self.card_url)
        if cached is None or cached[0] < time.monotonic():
            response = await self._attempt(lambda: self._get_card(), "fetching its card")
            try:
                raw = response.json()
                card = AgentCard.model_validate(raw)
            except ValueError:
                raise RemoteAgentError(f"The remote agent at {self.card_url} serves no valid agent card.") from None
            cached = (time.monotonic() + CARD_TTL_SECONDS, card, raw)
            with _cards_lock:
                _cards[self.card_url] = cached
        _, card, raw = cached
        self.name = card.name
        try:
            endpoint = choose_endpoint(card, raw, self._binding)
            checked_url(endpoint.url, allow_private=self._allow_private)
        except ValueError as exc:
            raise RemoteAgentError(f"The remote agent {self.name!r} cannot be called: {exc}.") from None
        return card, endpoint

    async def _get_card(self) -> httpx.Response:
        headers = {"A2A-Version": "1.0", **await headers_of(self._credentials)}
        response = await self._http.get(self.card_url, headers=headers, timeout=self._timeout)
        if response.status_code != 200:
            raise CallFailed(f"its card answered HTTP {response.status_code}", retryable=response.status_code >= 500)
        return response

    # ------------------------------------------------------------------ the operations

    def call_key(self, scope: str) -> str:
        """The next call's idempotency key in ``scope`` (a run: our task and message ids): the same
        for the same call of a re-run, so its send is recognised by the remote as a re-send."""
        ordinal = self._ordinals.get(scope, 0) + 1
        self._ordinals[scope] = ordinal
        digest = hashlib.sha256(f"{self.card_url}\n{scope}\n{ordinal}".encode()).hexdigest()
        return f"a2a-delegation-{digest[:40]}"

    async def send(
        self, message: Message, *, idempotency_key: str | None = None, push: TaskPushNotificationConfig | None = None
    ) -> Task | Message:
        """SendMessage, answered at once (``returnImmediately``): the remote's task as it stands,
        or its message-only reply. ``push``: where the remote sends its task's updates."""
        configuration: Json = {"returnImmediately": True}
        if push is not None:
            configuration["taskPushNotificationConfig"] = push.to_wire()
        params: Json = {"message": message.to_wire(), "configuration": configuration}
        result = await self._call("SendMessage", params, idempotency_key)
        answer = self._valid(SendMessageResponse, result)
        reply = answer.task or answer.message
        assert reply is not None  # the model requires one of them
        return reply

    async def get_task(self, task_id: str, history_length: int | None = 0) -> Task:
        params: Json = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return self._valid(Task, await self._call("GetTask", params))

    async def cancel_task(self, task_id: str) -> Task:
        return self._valid(Task, await self._call("CancelTask", {"id": task_id}))

    async def stream(self, message: Message, *, idempotency_key: str | None = None) -> AsyncIterator[StreamResponse]:
        """The remote's events for ``message`` until its task is final or interrupted (or its
        message-only reply): SendStreamingMessage when its card says it streams, else SendMessage
        and GetTask polling (each change as a Task snapshot). A stream that breaks once it has begun
        goes on by polling, so no event is lost: artifacts then come whole."""
        card, _ = await self._card()
        last: Task | None = None
        if card.capabilities.streaming:
            async for event in self._streamed(message, idempotency_key):
                last = track(last, event)
                yield event
                if event.message is not None or (last is not None and last.status.state in ENDED):
                    return
        else:
            reply = await self.send(message, idempotency_key=idempotency_key)
            yield StreamResponse(message=reply) if isinstance(reply, Message) else StreamResponse(task=reply)
            if isinstance(reply, Message):
                return
            last = reply
        if last is None:
            raise RemoteAgentError(f"The remote agent {self.name!r} ended its stream without a task.")
        async for snapshot in self._polled(last):
            yield StreamResponse(task=snapshot)

    async def _streamed(self, message: Message, key: str | None) -> AsyncIterator[StreamResponse]:
        _, endpoint = await self._card()
        call = request_for(endpoint, "SendStreamingMessage", {"message": message.to_wire()}, next(self._ids))
        for attempt in range(1, self._attempts + 1):
            began = False
            try:
                headers = {**await self._headers(key), "Accept": "text/event-stream"}
                timeout = httpx.Timeout(self._timeout, read=None)
                request = self._http.build_request(
                    call.method, call.url, json=call.body, headers=headers, timeout=timeout
                )
                async with asyncio.timeout(self._timeout):
                    response = await self._http.send(request, stream=True)
                try:
                    if response.status_code >= 300 or "text/event-stream" not in response.headers.get(
                        "content-type", ""
                    ):
                        await response.aread()
                        result_of(endpoint, response)  # raises the error it carries
                        raise CallFailed("it answered a stream with one JSON body", retryable=False)
                    async for kind, data in sse_data(response):
                        if kind == "error":
                            raise CallFailed("its stream ended with an error", retryable=False)
                        began = True
                        yield _event(unwrap(endpoint, _json(data)))
                finally:
                    await response.aclose()
                return
            except (httpx.TransportError, TimeoutError, CallFailed) as exc:
                if began and not isinstance(exc, CallFailed):
                    return  # the caller goes on by polling
                self._give_up_unless_retryable(exc, attempt, "streaming a message")
                await asyncio.sleep(_backoff(attempt, exc))

    async def _polled(self, last: Task) -> AsyncIterator[Task]:
        delay, ceiling = self._poll
        while last.status.state not in ENDED:
            await asyncio.sleep(delay)
            delay = min(ceiling, delay * 1.5)
            task = await self.get_task(last.id)
            if task != last:
                last = task
                yield task

    # ------------------------------------------------------------------ one call, retried

    async def _call(self, method: Method, params: Json, key: str | None = None) -> Json:
        _, endpoint = await self._card()
        call = request_for(endpoint, method, params, next(self._ids))

        async def once() -> Json:
            headers = await self._headers(key)
            response = await self._http.request(
                call.method, call.url, json=call.body, params=call.params, headers=headers, timeout=self._timeout
            )
            return result_of(endpoint, response)

        return await self._attempt(once, _WHAT[method])

    async def _attempt(self, once: Callable[[], Awaitable[T]], what: str) -> T:
        for attempt in range(1, self._attempts + 1):
            try:
                async with asyncio.timeout(self._timeout):
                    return await once()
            except (httpx.TransportError, TimeoutError, CallFailed) as exc:
                self._give_up_unless_retryable(exc, attempt, what)
                await asyncio.sleep(_backoff(attempt, exc))
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _give_up_unless_retryable(self, exc: Exception, attempt: int, what: str) -> None:
        if isinstance(exc, BlockedAddressError):
            raise RemoteAgentError(f"The remote agent {self.name!r} is at an address that is not allowed.") from None
        retryable = exc.retryable if isinstance(exc, CallFailed) else True
        if not retryable or attempt >= self._attempts:
            if isinstance(exc, CallFailed):
                why = exc.reason
            elif isinstance(exc, TimeoutError | httpx.TimeoutException):
                why = f"it did not answer within {self._timeout:g} s"
            else:
                why = f"the connection failed ({type(exc).__name__})"
            raise RemoteAgentError(f"The remote agent {self.name!r} failed {what}: {why}.") from None

    def _valid(self, model: type[M], data: Json) -> M:
        try:
            return model.model_validate(data)
        except ValidationError:
            raise RemoteAgentError(f"The remote agent {self.name!r} answered with an invalid A2A response.") from None

    async def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"A2A-Version": "1.0", **await headers_of(self._credentials)}
        if key is not None:
            headers["Idempotency-Key"] = key
        return headers


_WHAT: dict[Method, str] = {
    "SendMessage": "sending a message",
    "SendStreamingMessage": "streaming a message",
    "GetTask": "reading its task",
    "CancelTask": "canceling its task",
}


def _backoff(attempt: int, exc: Exception) -> float:
    """Seconds before the next try: the server's Retry-After (at most 10 s), else 0.2, 0.4, 0.8..."""
    if isinstance(exc, CallFailed) and exc.retry_after is not None:
        return min(float(exc.retry_after), 10.0)
    return min(0.2 * 2.0 ** (attempt - 1), 5.0)


def _json(data: str) -> object:
    try:
        return json.loads(data)
    except ValueError:
        raise CallFailed("its stream sent an event that is not JSON", retryable=False) from None


def _event(data: Json) -> StreamResponse:
    try:
        return StreamResponse.model_validate(data)
    except ValidationError:
        raise CallFailed("its stream sent an invalid A2A event", retryable=False) from None


def track(last: Task | None, event: StreamResponse) -> Task | None:
    """The remote task as far as the events tell (its id and state)."""
    if event.task is not None:
        return event.task
    update = event.status_update
    if update is not None:
        base = last or Task(id=update.task_id, context_id=update.context_id, status=update.status)
        return base.model_copy(update={"status": update.status})
    return last
