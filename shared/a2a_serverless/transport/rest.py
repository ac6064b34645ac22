"""The HTTP+JSON binding (A2A specification, section 11 HTTP+JSON/REST Protocol Binding): routes derived from the
method table.

POST bodies are the request message, declared JSON (``_http.read_json_body``; an empty one is an
empty message), path fields winning over body fields; GET and DELETE take the
remaining fields as camelCase query parameters. Every route also exists under ``/{tenant}``.
Errors use the ``{"error": {code, status, message, details}}`` shape, rendered in one place; on the
v0.3 routes (``/v1/...``) they use the v0.3 shape ``{code, message, data}`` with the reference 0.3
server's statuses (``_render.v03_rest_error``), unless the caller asked for A2A 1.x.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import A2AError, InvalidRequestError, UnsupportedOperationError
from ..json_types import Json
from ..runtime import Runtime
from ..versions import ProtocolVersion
from ._http import check_url_text, parse_json, read_json_body, request_id
from ._render import internal_error, rest_error, v03_rest_error, v03_rest_status
from .rows import REST_MEDIA_TYPE, V1_REST_ROWS, Endpoint, Framing, asks_for_v1, invoke
from .v03 import REST_ROWS as V03_REST_ROWS

__all__ = ["REST_MEDIA_TYPE", "TENANT_PREFIX", "error_response", "rest_routes"]

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
    """Starlette routes for every REST row (or the rows of ``allowed`` methods), v1.0 and v0.3.

    Routes with a ``:verb`` suffix come before the plain ``/tasks/{id}`` so that GET
    ``/tasks/x:subscribe`` is never read as GetTask of ``x:subscribe``. The v0.3 routes (all under
    ``/v1``) come next, then the tenant forms, so a literal first segment (``tasks``,
    ``message:send``, ``v1``) always wins over a tenant name.
    """
    rows = sorted(V1_REST_ROWS, key=lambda row: (":" not in _path(row).rsplit("/", 1)[-1], -_path(row).count("/")))
    routes = [_route("", row, get_runtime, allowed) for row in rows]
    routes.extend(_route("", row, get_runtime, allowed) for row in V03_REST_ROWS)
    routes.extend(_route(TENANT_PREFIX, row, get_runtime, allowed) for row in rows)
    return routes


def _path(row: Endpoint) -> str:
    assert row.route is not None  # a REST row
    return row.route.path


def _route(prefix: str, row: Endpoint, get_runtime: RuntimeGetter, allowed: Collection[str] | None) -> Route:
    assert row.route is not None  # a REST row
    legacy = row.version == ProtocolVersion.V0_3
    name = f"{row.method.name}/v0.3" if legacy else f"{row.method.name}{prefix}"
    served = Route(prefix + row.route.path, _endpoint(row, get_runtime, allowed), methods=[row.route.verb], name=name)
    # Starlette answers HEAD on every GET route by running it: HEAD /tasks would run ListTasks.
    # A2A defines no HEAD, so operation routes refuse it (405, Allow: GET); the agent card keeps
    # HEAD for caches and CDNs.
    if served.methods is not None:
        served.methods.discard("HEAD")
    return served


def _endpoint(
    row: Endpoint, get_runtime: RuntimeGetter, allowed: Collection[str] | None
) -> Callable[[Request], Awaitable[Response]]:
    legacy = row.version == ProtocolVersion.V0_3
    method = row.method.name
    framing = Framing(result=lambda body: body, stream_error=v03_rest_error if legacy else rest_error)

    async def endpoint(request: Request) -> Response:
        runtime = get_runtime()
        # A v0.3 route answers errors in the v0.3 shape, except to a caller that asked for 1.x
        # (a 1.0 client that took /v1 for a tenant: it is told VersionNotSupported in its shape).
        legacy_errors = legacy and not asks_for_v1(request)
        try:
            if allowed is not None and method not in allowed:
                raise UnsupportedOperationError(f"{method} is not served by this function")
            check_url_text(request)
            path = {str(k): str(v) for k, v in request.path_params.items()}
            tenant = path.get("tenant", "")

            async def fields() -> Json:
                return await _request_data(request, runtime)

            return await invoke(
                row,
                request,
                runtime,
                what=f"{request.method} {request.url.path[:128]}",
                fields=fields,
                path=path,
                tenant=tenant,
                framing=framing,
            )
        except A2AError as exc:
            return _safe_error_response(request, exc, method, legacy=legacy_errors)
        except Exception:
            error = internal_error(request_id(request), "unexpected error in REST handler", method=method)
            return error_response(error, legacy=legacy_errors)

    endpoint.__name__ = f"rest_v03_{row.method.function}" if legacy else f"rest_{row.method.function}"
    return endpoint


def _safe_error_response(request: Request, error: A2AError, method: str, *, legacy: bool = False) -> Response:
    """``error_response``, or a generic 500 if the error cannot be rendered (its metadata or
    message carrying a string that is not encodable): never an exception out of the handler."""
    try:
        return error_response(error, legacy=legacy)
    except Exception:
        internal = internal_error(request_id(request), "could not render an A2A error", method=method)
        return error_response(internal, legacy=legacy)


async def _request_data(request: Request, runtime: Runtime) -> Json:
    if request.method in ("GET", "DELETE"):
        return {key: value for key, value in request.query_params.items() if key != "A2A-Version"}
    raw = await read_json_body(request, runtime.settings.max_body_bytes)
    body = parse_json(raw) if raw.strip() else {}
    if not isinstance(body, dict):
        raise InvalidRequestError("The request body must be a JSON object")
    return body
