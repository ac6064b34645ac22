"""The console's dev-only JSON API, for what A2A does not expose: a task's raw event log (with its
push configs' delivery cursors), its webhook delivery attempts (from the local stack's
``A2A_PUSH_ATTEMPT_LOG``: :mod:`a2a_serverless.push.attempts`) and dead letters, the push
dead-letter queue and its redrive, and a proxy to another agent (so the page keeps
``connect-src 'self'`` and works with agents that do not allow CORS).

Every call must carry ``X-A2A-Console: 1``: a page of another origin cannot send that header without
a CORS preflight, which this API never grants, so a website open in the same browser cannot drive
the proxy or the redrive. The events and attempts are read in the caller's own scope, as A2A would scope
them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ...auth import authenticate
from ...errors import A2AError
from ...json_types import Json, JsonValue
from ...ports.store import Scope
from ...runtime import Runtime
from ._static import CONSOLE_PATH, SECURITY_HEADERS

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

__all__ = ["API_PATH", "CONSOLE_HEADER", "api_routes"]

API_PATH = CONSOLE_PATH + "/api"
CONSOLE_HEADER = "x-a2a-console"
EVENT_PAGE = 100
DEAD_LETTER_PEEKS = 5
ATTEMPTS_SHOWN = 500
"""A task's most recent delivery attempts the timeline gets (older ones are counted, not sent)."""
_FORWARDED = ("content-type", "accept", "a2a-version", "a2a-extensions", "last-event-id", "authorization")
_PROXY_TIMEOUT = httpx.Timeout(30.0, read=None)

Endpoint = Callable[[Request], Awaitable[Response]]


def _json(body: JsonValue, status_code: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status_code, headers=SECURITY_HEADERS)


def _guarded(endpoint: Endpoint) -> Endpoint:
    async def guarded(request: Request) -> Response:
        if request.headers.get(CONSOLE_HEADER) != "1":
            return _json({"error": f"the console API needs the header {CONSOLE_HEADER}: 1"}, 403)
        origin = request.headers.get("origin")
        if origin and origin != f"{request.url.scheme}://{request.url.netloc}":
            return _json({"error": "the console API answers its own page only"}, 403)
        return await endpoint(request)

    return guarded


def _kind(wire: Json) -> tuple[str, str]:
    """The event's kind and, when it carries one, its time."""
    for kind in ("task", "statusUpdate", "artifactUpdate", "message"):
        if kind in wire:
            status = wire[kind].get("status") if isinstance(wire[kind], dict) else None
            return kind, str(status.get("timestamp", "")) if isinstance(status, dict) else ""
    return "unknown", ""


def _caller_scope(runtime: Runtime, request: Request) -> Scope | None:
    """The caller's scope, as A2A would scope its requests (None: not authenticated)."""
    settings = runtime.settings
    try:
        principal = authenticate(settings.auth_mode, settings.api_keys, request.headers, None)
    except A2AError:
        return None
    return Scope(tenant=request.query_params.get("tenant", ""), owner=principal.name)


def _task_endpoint(get_runtime: Callable[[], Runtime], read: Callable[[Runtime, Scope, str], JsonValue]) -> Endpoint:
    """A dev endpoint about one task of the caller's (401 for an unauthenticated caller): ``read``
    answers it, in a thread (store and queue calls block; the API's event loop serves streams)."""

    async def endpoint(request: Request) -> Response:
        runtime = get_runtime()
        scope = _caller_scope(runtime, request)
        if scope is None:
            return _json({"error": "unauthenticated"}, 401)
        return _json(await run_in_threadpool(read, runtime, scope, str(request.path_params["task_id"])))

    return endpoint


def _events(runtime: Runtime, scope: Scope, task_id: str) -> Json:
    rows: list[Json] = []
    after = 0
    while True:
        page = runtime.store.read_events(scope, task_id, after_seq=after, limit=EVENT_PAGE)
        for stored in page:
            wire = stored.event.to_wire()
            kind, time = _kind(wire)
            rows.append({"seq": stored.seq, "kind": kind, "time": time, "event": wire})
        if len(page) < EVENT_PAGE:
            break
        after = page[-1].seq
    push = []
    configs, _ = runtime.store.list_push_configs(scope, task_id)
    for config in configs:
        target = runtime.store.get_push_target(scope, task_id, config.id)
        push.append(
            {
                "id": config.id,
                "url": config.url,
                "deliveredSeq": target.delivered_seq if target else None,
            }
        )
    return {"taskId": task_id, "events": rows, "pushConfigs": push}


@cache
def _sqs() -> SQSClient:
    import boto3

    return boto3.client("sqs")


def _peek_dead_letters(sqs: SQSClient, url: str, scope: Scope | None = None, task_id: str = "") -> list[Json]:
    """What the dead-letter queue holds (``task_id`` given: that task's in ``scope`` only)."""
    from ...push.delivery import DeliveryItem

    seen: dict[str, Json | None] = {}
    for _ in range(DEAD_LETTER_PEEKS):
        # Visibility 0: a look that leaves every message where it is, visible to a redrive.
        answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0)
        fresh = [m for m in answer.get("Messages", []) if m["MessageId"] not in seen]
        if not fresh:
            break
        for message in fresh:
            try:
                item = DeliveryItem.from_json(message["Body"])
            except (ValueError, KeyError, TypeError):
                seen[message["MessageId"]] = (
                    None if task_id else {"messageId": message["MessageId"], "unreadable": True}
                )
                continue
            mine = not task_id or (item.task_id == task_id and item.scope == scope)
            seen[message["MessageId"]] = (
                {
                    "messageId": message["MessageId"],
                    "taskId": item.task_id,
                    "configId": item.config_id,
                    "fromSeq": item.from_seq,
                    "upToSeq": item.up_to_seq,
                    "lastError": item.last_error,
                }
                if mine
                else None
            )
    return [row for row in seen.values() if row is not None]


def _dead_letters(get_runtime: Callable[[], Runtime], sqs: Callable[[], SQSClient]) -> Endpoint:
    async def dead_letters(request: Request) -> Response:
        url = get_runtime().settings.push_dead_letter_queue_url
        if not url:
            return _json({"configured": False, "deadLetters": []})
        return _json({"configured": True, "deadLetters": await run_in_threadpool(_peek_dead_letters, sqs(), url)})

    return dead_letters


def _push_attempts(sqs: Callable[[], SQSClient]) -> Callable[[Runtime, Scope, str], Json]:
    def push_attempts(runtime: Runtime, scope: Scope, task_id: str) -> Json:
        settings = runtime.settings
        attempts: list[Json] = []
        if settings.push_attempt_log:
            from ...push.attempts import read_attempts

            attempts = [
                row
                for row in read_attempts(settings.push_attempt_log)
                if row.get("taskId") == task_id
                and row.get("tenant") == scope.tenant
                and row.get("owner") == scope.owner
            ]
        dead: list[Json] = []
        if settings.push_dead_letter_queue_url:
            dead = _peek_dead_letters(sqs(), settings.push_dead_letter_queue_url, scope, task_id)
        return {
            "taskId": task_id,
            "recorded": bool(settings.push_attempt_log),
            "attempts": attempts[-ATTEMPTS_SHOWN:],
            "omitted": max(0, len(attempts) - ATTEMPTS_SHOWN),
            "deadLetters": dead,
        }

    return push_attempts


def _redrive(get_runtime: Callable[[], Runtime], sqs: Callable[[], SQSClient]) -> Endpoint:
    async def redrive(request: Request) -> Response:
        settings = get_runtime().settings
        if not settings.push_dead_letter_queue_url or not settings.push_queue_url:
            return _json({"error": "this stack has no push dead-letter queue"}, 404)
        from ...push.redrive import redrive as move

        report = await run_in_threadpool(move, sqs(), settings.push_dead_letter_queue_url, settings.push_queue_url)
        return _json({"moved": report.moved, "unreadable": report.unreadable, "reasons": report.reasons})

    return redrive


def _upstream_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=_PROXY_TIMEOUT, follow_redirects=True)


async def _proxy(request: Request) -> Response:
    """Forward the request to the URL in ``X-A2A-Target`` (http or https), streaming the answer."""
    target = request.headers.get("x-a2a-target", "")
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return _json({"error": "X-A2A-Target must be an http(s) URL"}, 400)
    headers = {name: request.headers[name] for name in _FORWARDED if name in request.headers}
    client = _upstream_client()
    try:
        upstream = await client.send(
            client.build_request(request.method, target, headers=headers, content=await request.body()), stream=True
        )
    except httpx.HTTPError as exc:
        await client.aclose()
        return _json({"error": f"cannot reach {parts.scheme}://{parts.netloc}: {type(exc).__name__}"}, 502)

    async def body() -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()
            await client.aclose()

    answer_headers = dict(SECURITY_HEADERS)
    answer_headers["Content-Type"] = upstream.headers.get("content-type", "application/octet-stream")
    return StreamingResponse(body(), status_code=upstream.status_code, headers=answer_headers)


def api_routes(get_runtime: Callable[[], Runtime], *, sqs: Callable[[], SQSClient] = _sqs) -> list[BaseRoute]:
    """``sqs`` builds the SQS client of the dead-letter endpoints (tests inject moto's)."""
    return [
        Route(API_PATH + "/tasks/{task_id}/events", _guarded(_task_endpoint(get_runtime, _events)), methods=["GET"]),
        Route(
            API_PATH + "/tasks/{task_id}/push-attempts",
            _guarded(_task_endpoint(get_runtime, _push_attempts(sqs))),
            methods=["GET"],
        ),
        Route(API_PATH + "/dead-letters", _guarded(_dead_letters(get_runtime, sqs)), methods=["GET"]),
        Route(API_PATH + "/dead-letters:redrive", _guarded(_redrive(get_runtime, sqs)), methods=["POST"]),
        Route(API_PATH + "/proxy", _guarded(_proxy), methods=["GET", "POST"]),
    ]
