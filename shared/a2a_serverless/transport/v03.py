"""The v0.3 bindings, mapped onto the v1.0 method table (A2A specification, section 3.6.2 Server Responsibilities).

There is one core: a v0.3 request is converted to the v1.0 request message at the edge
(:mod:`a2a_serverless.v03`), runs the same operation as its v1.0 twin, and the result is converted
back. This module only says which v0.3 name or path is which v1.0 method, and which converters
apply:

* JSON-RPC on the same ``POST /`` endpoint: the v0.3 method names (``message/send``...) are
  disjoint from the v1.0 ones (``SendMessage``...), so the name picks the version;
* REST under ``/v1`` (the v0.3 proto's HTTP rules), ProtoJSON of the v0.3 proto. ``v1`` is
  therefore not a tenant (``operations._context.RESERVED_TENANT``).

ListTasks has no v0.3 form. A v0.3 push-config list has no paging, so it returns every config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from .. import operations as ops
from ..errors import ExtendedAgentCardNotConfiguredError, UnsupportedOperationError
from ..json_types import Json, JsonValue
from ..methods import (
    CANCEL_TASK,
    CREATE_PUSH_CONFIG,
    DELETE_PUSH_CONFIG,
    GET_EXTENDED_CARD,
    GET_PUSH_CONFIG,
    GET_TASK,
    LIST_PUSH_CONFIGS,
    SEND_MESSAGE,
    SEND_STREAMING_MESSAGE,
    SUBSCRIBE_TO_TASK,
    Method,
    RestRoute,
)
from ..models import (
    AgentCard,
    GetExtendedAgentCardRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ProtoModel,
    StreamResponse,
    TaskPushNotificationConfig,
)
from ..operations import CallContext
from ..runtime import Runtime
from ..v03 import card as v03_card
from ..v03 import json_shapes as js
from ..v03 import rest_shapes as rs
from ..v03._common import history_length_in
from ..versions import ProtocolVersion
from .rows import Endpoint, RequestIn, Row, StreamRow

__all__ = ["JSONRPC_ROWS", "REST_ROWS", "legacy_extended_card", "list_all_push_configs"]

V03 = ProtocolVersion.V0_3
Req = TypeVar("Req", bound=ProtoModel)
Res = TypeVar("Res", bound=ProtoModel | None)


def list_all_push_configs(
    request: ListTaskPushNotificationConfigsRequest, ctx: CallContext, runtime: Runtime
) -> list[TaskPushNotificationConfig]:
    """Every config of the task, page after page (v0.3's list has no paging)."""
    configs: list[TaskPushNotificationConfig] = []
    page = request
    while True:
        response: ListTaskPushNotificationConfigsResponse = ops.list_push_configs(page, ctx, runtime)
        configs.extend(response.configs)
        if not response.next_page_token:
            return configs
        page = request.model_copy(update={"page_token": response.next_page_token})


def legacy_extended_card(request: GetExtendedAgentCardRequest, ctx: CallContext, runtime: Runtime) -> AgentCard:
    """GetExtendedAgentCard, with v0.3's error when there is none: v0.3 answered
    AuthenticatedExtendedCardNotConfigured (-32007), where v1.0 says UnsupportedOperation."""
    try:
        return ops.get_extended_card(request, ctx, runtime)
    except UnsupportedOperationError as exc:
        raise ExtendedAgentCardNotConfiguredError(exc.message) from None


def _params(convert: Callable[[JsonValue], Json]) -> RequestIn:
    """A v0.3 JSON-RPC params converter as a row's ``request_in`` (JSON-RPC has no path)."""

    def request_in(params: Json, _: Mapping[str, str]) -> Json:
        return convert(params)

    return request_in


def _without_metadata(convert: Callable[[JsonValue], Json]) -> Callable[[JsonValue], Json]:
    def params_in(params: JsonValue) -> Json:
        data = convert(params)
        data.pop("metadata", None)
        return data

    return params_in


def _card_out(card: AgentCard) -> Json:
    return v03_card.merged_card(card.to_wire())


def _push_list_out(configs: list[TaskPushNotificationConfig]) -> list[Json]:
    return [js.push_config_out(c) for c in configs]


def _nothing_in(_: JsonValue) -> Json:
    return {}


def _null_out(_: None) -> None:
    return None


def _empty_out(_: None) -> Json:
    return {}


def _rpc(
    name: str, method: Method[Req, Res], params_in: Callable[[JsonValue], Json], result_out: Callable[[Res], JsonValue]
) -> Endpoint:
    """A v0.3 JSON-RPC row that runs ``method``'s own operation."""
    assert method.call is not None
    return Row(
        name=name, method=method, version=V03, request_in=_params(params_in), call=method.call, result_out=result_out
    )


def _rpc_stream(name: str, method: Method[Req, StreamResponse], params_in: Callable[[JsonValue], Json]) -> Endpoint:
    assert method.stream is not None
    return StreamRow(
        name=name,
        method=method,
        version=V03,
        request_in=_params(params_in),
        stream=method.stream,
        result_out=js.stream_event_out,
    )


_PUSH = "tasks/pushNotificationConfig"

_PUSH_LIST_ALL: Row[ListTaskPushNotificationConfigsRequest, list[TaskPushNotificationConfig]] = Row(
    name=f"{_PUSH}/list",
    method=LIST_PUSH_CONFIGS,
    version=V03,
    request_in=_params(js.push_config_list_in),
    call=list_all_push_configs,
    result_out=_push_list_out,
)

_RPC_EXTENDED_CARD: Row[GetExtendedAgentCardRequest, AgentCard] = Row(
    name="agent/getAuthenticatedExtendedCard",
    method=GET_EXTENDED_CARD,
    version=V03,
    request_in=_params(_nothing_in),
    call=legacy_extended_card,
    result_out=_card_out,
)


JSONRPC_ROWS: tuple[Endpoint, ...] = (
    _rpc("message/send", SEND_MESSAGE, js.send_params_in, js.send_result_out),
    _rpc_stream("message/stream", SEND_STREAMING_MESSAGE, js.send_params_in),
    _rpc("tasks/get", GET_TASK, js.task_query_in, js.task_out),
    _rpc("tasks/cancel", CANCEL_TASK, js.task_id_params_in, js.task_out),
    _rpc_stream("tasks/resubscribe", SUBSCRIBE_TO_TASK, _without_metadata(js.task_id_params_in)),
    _rpc(f"{_PUSH}/set", CREATE_PUSH_CONFIG, js.push_config_set_in, js.push_config_out),
    _rpc(f"{_PUSH}/get", GET_PUSH_CONFIG, js.push_config_get_in, js.push_config_out),
    _PUSH_LIST_ALL,
    _rpc(f"{_PUSH}/delete", DELETE_PUSH_CONFIG, js.push_config_delete_in, _null_out),
    _RPC_EXTENDED_CARD,
)
"""The v0.3 JSON-RPC methods: the same ``POST /`` endpoint, names disjoint from v1.0's."""


# --------------------------------------------------------------------------- REST (/v1)


def _task_id(_: Json, path: Mapping[str, str]) -> Json:
    return {"id": path["id"]}


def _get_task_in(query: Json, path: Mapping[str, str]) -> Json:
    """``GET /v1/tasks/{id}?historyLength=N``; 0 is "no limit" in v0.3, as over JSON-RPC."""
    data = _task_id(query, path)
    history = history_length_in(query.get("historyLength", query.get("history_length")), "historyLength")
    if history is not None:
        data["historyLength"] = history
    return data


def _list_configs_in(query: Json, path: Mapping[str, str]) -> Json:
    data: Json = {"taskId": path["id"]}
    for camel, snake in (("pageSize", "page_size"), ("pageToken", "page_token")):
        if camel in query or snake in query:
            data[camel] = query.get(camel, query.get(snake))
    return data


def _config_path_in(_: Json, path: Mapping[str, str]) -> Json:
    return {"taskId": path["id"], "id": path["config_id"]}


def _send_in(body: Json, _: Mapping[str, str]) -> Json:
    return rs.send_request_in(body)


def _config_create_in(body: Json, path: Mapping[str, str]) -> Json:
    return rs.push_config_create_in(body, path["id"])


def _no_fields(_: Json, __: Mapping[str, str]) -> Json:
    return {}


def _configs_out(result: ListTaskPushNotificationConfigsResponse) -> Json:
    return rs.push_configs_out(result.configs, result.next_page_token)


def _rest(
    verb: str, path: str, method: Method[Req, Res], request_in: RequestIn, result_out: Callable[[Res], JsonValue]
) -> Endpoint:
    """A v0.3 REST row (always under ``/v1``, never under a tenant)."""
    assert method.call is not None
    return Row(
        name=method.name,
        method=method,
        version=V03,
        request_in=request_in,
        call=method.call,
        result_out=result_out,
        route=RestRoute(verb, path),
    )


def _rest_stream(verb: str, path: str, method: Method[Req, StreamResponse], request_in: RequestIn) -> Endpoint:
    assert method.stream is not None
    return StreamRow(
        name=method.name,
        method=method,
        version=V03,
        request_in=request_in,
        stream=method.stream,
        result_out=rs.stream_event_out,
        route=RestRoute(verb, path),
    )


_TASK = "/v1/tasks/{id}"
_CONFIGS = _TASK + "/pushNotificationConfigs"

_REST_EXTENDED_CARD: Row[GetExtendedAgentCardRequest, AgentCard] = Row(
    name=GET_EXTENDED_CARD.name,
    method=GET_EXTENDED_CARD,
    version=V03,
    request_in=_no_fields,
    call=legacy_extended_card,
    result_out=_card_out,
    route=RestRoute("GET", "/v1/card"),
)

REST_ROWS: tuple[Endpoint, ...] = (
    _rest("POST", "/v1/message:send", SEND_MESSAGE, _send_in, rs.send_result_out),
    _rest_stream("POST", "/v1/message:stream", SEND_STREAMING_MESSAGE, _send_in),
    _rest("POST", _TASK + ":cancel", CANCEL_TASK, _task_id, rs.task_out),
    _rest_stream("GET", _TASK + ":subscribe", SUBSCRIBE_TO_TASK, _task_id),
    _rest_stream("POST", _TASK + ":subscribe", SUBSCRIBE_TO_TASK, _task_id),
    _rest("GET", _TASK, GET_TASK, _get_task_in, rs.task_out),
    _rest("POST", _CONFIGS, CREATE_PUSH_CONFIG, _config_create_in, rs.push_config_out),
    _rest("GET", _CONFIGS, LIST_PUSH_CONFIGS, _list_configs_in, _configs_out),
    _rest("GET", _CONFIGS + "/{config_id}", GET_PUSH_CONFIG, _config_path_in, rs.push_config_out),
    _rest("DELETE", _CONFIGS + "/{config_id}", DELETE_PUSH_CONFIG, _config_path_in, _empty_out),
    _REST_EXTENDED_CARD,
)
"""The v0.3 REST binding: the v0.3 proto's HTTP rules under ``/v1``, ProtoJSON of the v0.3 proto."""
