"""The console's dev-only JSON API, for what A2A does not expose: a task's raw event log (with its
push configs' delivery cursors), its traces (the spans the stack's processes wrote:
``docs/tracing.md``), its webhook delivery attempts (from the local stack's
``A2A_PUSH_ATTEMPT_LOG``: :mod:`a2a_serverless.push.attempts`) and dead letters, the push
dead-letter queue and its redrive, and a proxy to other agents (:mod:`._proxy`).

Every call must carry ``X-A2A-Console: 1``: a page of another origin cannot send that header without
a CORS preflight, which this API never grants, so a website open in the same browser cannot drive
the proxy or the redrive. Its own-origin check trusts the request's ``Host``: the local stack serves
the console behind :mod:`a2a_serverless_dev._local_app`, which refuses a ``Host`` that is not
the stack's (a page whose name was pointed at 127.0.0.1 would otherwise be its own origin) and any
other origin. The events and attempts are read in the caller's own scope, as A2A would scope them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from a2a_serverless import telemetry
from a2a_serverless.auth import authenticate
from a2a_serverless.errors import A2AError
from a2a_serverless.json_types import Json, JsonValue
from a2a_serverless.ports.store import Scope
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.runtime import Runtime

from .._loggers import kit_logger
from ..traces import read_spans, task_traces
from ._proxy import proxy_endpoint
from ._static import CONSOLE_PATH, SECURITY_HEADERS

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

__all__ = ["API_PATH", "CONSOLE_HEADER", "api_routes"]

API_PATH = CONSOLE_PATH + "/api"
CONSOLE_HEADER = "x-a2a-console"
EVENT_PAGE = 100
ATTEMPTS_SHOWN = 500
"""A task's most recent delivery attempts the timeline gets (older ones are counted, not sent)."""

Endpoint = Callable[[Request], Awaitable[Response]]

_log = kit_logger(__name__)


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


@dataclass(frozen=True, slots=True)
class _Call:
    path: Mapping[str, str]
    body: JsonValue
    """A POST's JSON body (None: none)."""


Answer = Callable[[Runtime, Scope, _Call], tuple[JsonValue, int]]
"""What a scoped endpoint answers, and with which status."""


def _scoped(get_runtime: Callable[[], Runtime], answer: Answer) -> Endpoint:
    """A dev endpoint answered in the caller's scope (401 for an unauthenticated caller), in a thread
    (store and queue calls block; the API's event loop serves streams). A store or queue that does
    not answer (moto stopped, a queue deleted) is a 502 the page can show, not a 500."""

    async def endpoint(request: Request) -> Response:
        runtime = get_runtime()
        scope = _caller_scope(runtime, request)
        if scope is None:
            return _json({"error": "unauthenticated"}, 401)
        body: JsonValue = None
        if request.method == "POST" and (raw := await request.body()):
            try:
                body = json.loads(raw)
            except ValueError:
                return _json({"error": "the body is not JSON"}, 400)
        call = _Call({k: str(v) for k, v in request.path_params.items()}, body)
        try:
            result, status = await run_in_threadpool(answer, runtime, scope, call)
        except (BotoCoreError, ClientError) as exc:
            _log.warning("console API %s: AWS call failed", request.url.path, exc_info=True)
            what = (
                f"{exc.operation_name}: {exc.response.get('Error', {}).get('Code')}"
                if isinstance(exc, ClientError)
                else type(exc).__name__
            )
            return _json({"error": f"an AWS call of the local stack failed ({what})"}, 502)
        return _json(result, status)

    return endpoint


def _task_endpoint(get_runtime: Callable[[], Runtime], read: Callable[[Runtime, Scope, str], JsonValue]) -> Endpoint:
    """A dev endpoint about one task of the caller's: ``read`` answers it."""
    return _scoped(get_runtime, lambda runtime, scope, call: (read(runtime, scope, call.path["task_id"]), 200))


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


def _trace(runtime: Runtime, scope: Scope, task_id: str) -> Json:
    """The task's traces, one per turn (:mod:`a2a_serverless_dev.traces`), holding only the
    task's own spans (never another task's that shares a trace id, another owner's among them): none
    when the task is not the caller's, or tracing is off (``enabled``)."""
    directory = os.environ.get(telemetry.DIR_ENV, "")
    on = bool(directory) and telemetry.tracing_on()
    if not on or runtime.store.get_head(scope, task_id) is None:
        return {"taskId": task_id, "enabled": on, "traces": []}
    traces: list[JsonValue] = list(task_traces(read_spans(directory), task_id, tenant=scope.tenant))
    return {"taskId": task_id, "enabled": True, "traces": traces}


@cache
def _sqs() -> SQSClient:
    import boto3

    return boto3.client("sqs")


def _letter(item: DeliveryItem) -> Json:
    """A dead letter, or a delivery a redrive moved, as the console shows it."""
    return {
        "taskId": item.task_id,
        "configId": item.config_id,
        "fromSeq": item.from_seq,
        "upToSeq": item.up_to_seq,
        "lastError": item.last_error,
        "redrive": item.redrive,
    }


def _peek_dead_letters(sqs: SQSClient, url: str, scope: Scope, task_id: str = "") -> tuple[list[Json], bool]:
    """The dead letters of ``scope`` (``task_id`` given: of that task), each left visible on the
    queue, and whether every message of the queue could be read (:mod:`...push.redrive`)."""
    from a2a_serverless.push.redrive import read_dead_letters

    read = read_dead_letters(sqs, url, long_poll_seconds=0)  # moto answers exactly without waiting
    rows: list[Json] = [
        {"messageId": letter.message_id, **_letter(letter.item)}
        for letter in read.letters
        if letter.item is not None and letter.item.scope == scope and (not task_id or letter.item.task_id == task_id)
    ]
    return rows, read.complete


def _dead_letters(sqs: Callable[[], SQSClient]) -> Answer:
    def dead_letters(runtime: Runtime, scope: Scope, call: _Call) -> tuple[JsonValue, int]:
        url = runtime.settings.push_dead_letter_queue_url
        if not url:
            return {"configured": False, "deadLetters": []}, 200
        rows, complete = _peek_dead_letters(sqs(), url, scope)
        return {"configured": True, "deadLetters": rows, "complete": complete}, 200

    return dead_letters


def _push_attempts(sqs: Callable[[], SQSClient]) -> Callable[[Runtime, Scope, str], Json]:
    def push_attempts(runtime: Runtime, scope: Scope, task_id: str) -> Json:
        settings = runtime.settings
        attempts: list[Json] = []
        if settings.push_attempt_log:
            from a2a_serverless.push.attempts import read_attempts

            attempts = [
                row
                for row in read_attempts(settings.push_attempt_log)
                if row.get("taskId") == task_id
                and row.get("tenant") == scope.tenant
                and row.get("owner") == scope.owner
            ]
        dead: list[Json] = []
        if settings.push_dead_letter_queue_url:
            dead, _ = _peek_dead_letters(sqs(), settings.push_dead_letter_queue_url, scope, task_id)
        return {
            "taskId": task_id,
            "recorded": bool(settings.push_attempt_log),
            "attempts": attempts[-ATTEMPTS_SHOWN:],
            "omitted": max(0, len(attempts) - ATTEMPTS_SHOWN),
            "deadLetters": dead,
        }

    return push_attempts


_NO_QUEUE: tuple[JsonValue, int] = ({"error": "this stack has no push dead-letter queue"}, 404)


def _redrive(sqs: Callable[[], SQSClient]) -> Answer:
    """Move the caller's dead letters back onto the delivery queue (:func:`...push.redrive.redrive`)."""

    def redrive(runtime: Runtime, scope: Scope, call: _Call) -> tuple[JsonValue, int]:
        settings = runtime.settings
        if not settings.push_dead_letter_queue_url or not settings.push_queue_url:
            return _NO_QUEUE
        from a2a_serverless.push.redrive import redrive as move

        report = move(
            sqs(), settings.push_dead_letter_queue_url, settings.push_queue_url, scope=scope, long_poll_seconds=0
        )
        moved: list[JsonValue] = [_letter(item) for item in report.moved]
        reasons: Json = dict(report.reasons)
        return {"redriveId": report.redrive_id, "moved": moved, "reasons": reasons}, 200

    return redrive


def _redrive_outcomes(sqs: Callable[[], SQSClient]) -> Answer:
    """What became of the deliveries a redrive moved (the body: its ``redriveId`` and ``moved``
    items): delivered, failed again, or pending (:func:`...push.redrive.outcomes`)."""

    def redrive_outcomes(runtime: Runtime, scope: Scope, call: _Call) -> tuple[JsonValue, int]:
        settings = runtime.settings
        if not settings.push_dead_letter_queue_url or not settings.push_queue_url:
            return _NO_QUEUE
        from a2a_serverless.push.redrive import outcomes

        asked = _moved_items(call.body, scope)
        if asked is None:
            return {"error": "give the redriveId and the moved items a redrive answered"}, 400
        redrive_id, moved = asked
        found = outcomes(
            sqs(),
            settings.push_dead_letter_queue_url,
            settings.push_queue_url,
            redrive_id,
            moved,
            scope=scope,
            long_poll_seconds=0,
        )
        rows: list[JsonValue] = [
            {**_letter(o.item), "outcome": o.outcome.value, "returned": [_letter(back) for back in o.returned]}
            for o in found
        ]
        return {"outcomes": rows}, 200

    return redrive_outcomes


def _moved_items(body: JsonValue, scope: Scope) -> tuple[str, list[DeliveryItem]] | None:
    """The redrive id and moved items of a body, in the caller's scope (None: not that shape)."""
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("redriveId"), str)
        or not isinstance(body.get("moved"), list)
    ):
        return None
    redrive_id, items = str(body["redriveId"]), []
    for row in body["moved"]:
        if not isinstance(row, dict):
            return None
        try:
            items.append(
                DeliveryItem(
                    scope.tenant,
                    scope.owner,
                    str(row["taskId"]),
                    str(row["configId"]),
                    up_to_seq=int(row["upToSeq"]),
                    from_seq=int(row.get("fromSeq") or 0),
                    redrive=redrive_id,
                )
            )
        except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: int(1e400)
            return None
    return redrive_id, items


def api_routes(get_runtime: Callable[[], Runtime], *, sqs: Callable[[], SQSClient] = _sqs) -> list[BaseRoute]:
    """``sqs`` builds the SQS client of the dead-letter endpoints (tests inject moto's)."""
    return [
        Route(API_PATH + "/tasks/{task_id}/events", _guarded(_task_endpoint(get_runtime, _events)), methods=["GET"]),
        Route(API_PATH + "/tasks/{task_id}/trace", _guarded(_task_endpoint(get_runtime, _trace)), methods=["GET"]),
        Route(
            API_PATH + "/tasks/{task_id}/push-attempts",
            _guarded(_task_endpoint(get_runtime, _push_attempts(sqs))),
            methods=["GET"],
        ),
        Route(API_PATH + "/dead-letters", _guarded(_scoped(get_runtime, _dead_letters(sqs))), methods=["GET"]),
        Route(API_PATH + "/dead-letters:redrive", _guarded(_scoped(get_runtime, _redrive(sqs))), methods=["POST"]),
        Route(
            API_PATH + "/dead-letters:redrive-outcomes",
            _guarded(_scoped(get_runtime, _redrive_outcomes(sqs))),
            methods=["POST"],
        ),
        Route(API_PATH + "/proxy", _guarded(proxy_endpoint(get_runtime)), methods=["GET", "POST"]),
    ]
