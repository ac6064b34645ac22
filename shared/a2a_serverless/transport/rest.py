"""The HTTP+JSON binding (spec 11, digest 1.1): routes derived from the method table.

POST bodies are the request message (path fields win over body fields); GET and DELETE take the
remaining fields as camelCase query parameters. Every route also exists under ``/{tenant}``.
Errors use the ``{"error": {code, status, message, details}}`` shape, rendered in one place; on the
v0.3 routes (``/v1/...``) they use the v0.3 shape ``{code, message, data}`` with the reference 0.3
server's statuses (``_render.v03_rest_error``), unless the caller asked for A2A 1.x.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from functools import partial
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    UnsupportedOperationError,
)
from ..methods import METHODS, METHODS_BY_NAME, Method
from ..models import ProtoModel
from ..runtime import Runtime
from . import v03
from ._http import (
    V03,
    V1,
    asks_for_v1,
    call_context,
    check_url_text,
    negotiate_version,
    parse_json,
    read_body,
    request_id,
)
from ._render import rest_error, v03_rest_error, v03_rest_status
from .sse import last_event_id, sse_response

__all__ = ["REST_MEDIA_TYPE", "TENANT_PREFIX", "error_response", "rest_routes"]

logger = logging.getLogger(__name__)

REST_MEDIA_TYPE = "application/a2a+json"
TENANT_PREFIX = "/{tenant}"
"""Every v1.0 route is also served under this prefix (proto ``additional_bindings``)."""

RuntimeGetter = Callable[[], Runtime]


def error_response(error: A2AError, *, legacy: bool = False) -> JSONResponse:
    """The REST error response; ``legacy``: the v0.3 binding's (``{code, message, data}``, the
    reference 0.3 server's status, ``application/json`` as its successes)."""
    if legacy:
        return JSONResponse(
            v03_rest_error(error),
            status_code=v03_rest_status(error),
            media_type="application/json",
            headers=error.headers or None,
        )
    return JSONResponse(
        rest_error(error), status_code=error.http_status, media_type=REST_MEDIA_TYPE, headers=error.headers or None
    )


def rest_routes(get_runtime: RuntimeGetter, allowed: Collection[str] | None = None) -> list[Route]:
    """Starlette routes for every REST binding of every method (or of ``allowed`` ones), v1.0 and
    v0.3.

    Routes with a ``:verb`` suffix come before the plain ``/tasks/{id}`` so that GET
    ``/tasks/x:subscribe`` is never read as GetTask of ``x:subscribe``. The v0.3 routes (all under
    ``/v1``) come next, then the tenant forms, so a literal first segment (``tasks``,
    ``message:send``, ``v1``) always wins over a tenant name.
    """
    pairs = [(m, r) for m in METHODS for r in m.routes]
    pairs.sort(key=lambda mr: (":" not in mr[1].path.rsplit("/", 1)[-1], -mr[1].path.count("/")))
    routes = [_route("", method, route.verb, route.path, get_runtime, allowed) for method, route in pairs]
    routes.extend(
        _route("", METHODS_BY_NAME[legacy.target], legacy.verb, legacy.path, get_runtime, allowed, legacy)
        for legacy in v03.REST_ROUTES
    )
    routes.extend(
        _route(TENANT_PREFIX, method, route.verb, route.path, get_runtime, allowed) for method, route in pairs
    )
    return routes


def _route(
    prefix: str,
    method: Method,
    verb: str,
    path: str,
    get_runtime: RuntimeGetter,
    allowed: Collection[str] | None,
    legacy: v03.LegacyRoute | None = None,
) -> Route:
    endpoint = _endpoint(method, verb, get_runtime, allowed, legacy)
    name = f"{method.name}{prefix}" if legacy is None else f"{method.name}/v0.3"
    served = Route(prefix + path, endpoint, methods=[verb], name=name)
    # Starlette answers HEAD on every GET route by running it: HEAD /tasks would run ListTasks.
    # A2A defines no HEAD, so operation routes refuse it (405, Allow: GET); the agent card keeps
    # HEAD for caches and CDNs.
    if served.methods is not None:
        served.methods.discard("HEAD")
    return served


def _endpoint(
    method: Method,
    verb: str,
    get_runtime: RuntimeGetter,
    allowed: Collection[str] | None,
    legacy: v03.LegacyRoute | None,
) -> Callable[[Request], Awaitable[Response]]:
    render: Callable[[Any], Any] = legacy.result_out if legacy is not None else _to_wire

    async def endpoint(request: Request) -> Response:
        runtime = get_runtime()
        # A v0.3 route answers errors in the v0.3 shape, except to a caller that asked for 1.x
        # (a 1.0 client that took /v1 for a tenant: it is told VersionNotSupported in its shape).
        legacy_errors = legacy is not None and not asks_for_v1(request)
        try:
            if allowed is not None and method.name not in allowed:
                raise UnsupportedOperationError(f"{method.name} is not served by this function")
            check_url_text(request)
            version = negotiate_version(
                request,
                V1 if legacy is None else V03,
                what=f"{request.method} {request.url.path[:128]}",
                lenient_missing=runtime.settings.lenient_missing_version,
            )
            path_params = {str(k): str(v) for k, v in request.path_params.items()}
            tenant = path_params.pop("tenant", "")
            ctx = call_context(request, runtime, tenant=tenant, version=version)
            fields = await _request_data(request, verb, runtime)
            data = (
                _with_path_fields(fields, path_params, tenant)
                if legacy is None
                else legacy.request_in(fields, path_params)
            )
            try:
                parsed = method.request.model_validate(data)
            except ValidationError as exc:
                raise InvalidParamsError.from_validation(exc) from None
            if method.streaming:
                stream = await run_in_threadpool(
                    partial(method.operation, parsed, ctx, runtime, last_event_id=last_event_id(request))
                )
                return sse_response(
                    stream,
                    render,
                    v03_rest_error if legacy is not None else rest_error,
                    ping_seconds=runtime.settings.stream_ping_seconds,
                    request_id=request_id(request),
                )
            operation = legacy.operation if legacy is not None and legacy.operation is not None else method.operation
            result = await run_in_threadpool(operation, parsed, ctx, runtime)
            return JSONResponse(render(result), media_type=REST_MEDIA_TYPE if legacy is None else "application/json")
        except A2AError as exc:
            return _safe_error_response(request, exc, method.name, legacy=legacy_errors)
        except Exception:
            rid = request_id(request)
            logger.exception("unexpected error in REST handler", extra={"request_id": rid, "method": method.name})
            return error_response(InternalError(metadata={"requestId": rid} if rid else None), legacy=legacy_errors)

    endpoint.__name__ = f"rest_{method.function}" if legacy is None else f"rest_v03_{method.function}"
    return endpoint


def _to_wire(result: ProtoModel | None) -> dict[str, Any]:
    return {} if result is None else result.to_wire()


def _safe_error_response(request: Request, error: A2AError, method: str, *, legacy: bool = False) -> Response:
    """``error_response``, or a generic 500 if the error cannot be rendered (its metadata or
    message carrying a string that is not encodable): never an exception out of the handler."""
    try:
        return error_response(error, legacy=legacy)
    except Exception:
        rid = request_id(request)
        logger.exception("could not render an A2A error", extra={"request_id": rid, "method": method})
        return error_response(InternalError(metadata={"requestId": rid} if rid else None), legacy=legacy)


def _with_path_fields(data: dict[str, Any], path_params: dict[str, Any], tenant: str) -> dict[str, Any]:
    """The request message: body (or query) fields, with the fields bound in the path winning.

    A path field may also arrive in the body or the query under either ProtoJSON spelling
    (``task_id`` or ``taskId``, digest 2.1), and the model would prefer the camelCase one, so both
    are dropped before the path value is set: ``POST /tasks/A/pushNotificationConfigs
    {"taskId": "B"}`` acts on task A (digest 1.1: "the path wins"). The tenant comes from the
    ``/{tenant}`` prefix only (empty without one), as the call context does.
    """
    bound = {**{str(k): v for k, v in path_params.items()}, "tenant": tenant}
    spellings = {*bound, *(to_camel(name) for name in bound)}  # the models' own alias generator
    return {**{k: v for k, v in data.items() if k not in spellings}, **bound}


async def _request_data(request: Request, verb: str, runtime: Runtime) -> dict[str, Any]:
    if verb in ("GET", "DELETE"):
        return {key: value for key, value in request.query_params.items() if key != "A2A-Version"}
    raw = await read_body(request, runtime.settings.max_body_bytes)
    body = parse_json(raw) if raw.strip() else {}
    if not isinstance(body, dict):
        raise InvalidRequestError("The request body must be a JSON object")
    return body
