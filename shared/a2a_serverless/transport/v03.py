"""The v0.3 bindings, mapped onto the v1.0 method table (digest 7.3).

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import operations as ops
from ..errors import ExtendedAgentCardNotConfiguredError, UnsupportedOperationError
from ..models import (
    AgentCard,
    GetExtendedAgentCardRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)
from ..operations import CallContext
from ..runtime import Runtime
from ..v03 import card as v03_card
from ..v03 import json_shapes as js
from ..v03 import rest_shapes as rs
from ..v03._common import history_length_in

__all__ = ["JSONRPC_METHODS", "REST_ROUTES", "LegacyMethod", "LegacyRoute"]

Convert = Callable[[Any], Any]
PathConvert = Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class LegacyMethod:
    """A v0.3 JSON-RPC method: its v1.0 twin, and how params and results convert."""

    name: str
    target: str
    """The v1.0 method (row of :data:`a2a_serverless.methods.METHODS`) that serves it."""
    params_in: Convert
    """v0.3 params (any JSON) -> the v1.0 request as a ProtoJSON dict; raises InvalidParams."""
    result_out: Convert
    """The v1.0 result (or each streamed event) -> the v0.3 JSON."""
    operation: Callable[..., Any] | None = None
    """Replaces the v1.0 operation where v0.3 semantics differ (the unpaged config list)."""


@dataclass(frozen=True, slots=True)
class LegacyRoute:
    """A v0.3 REST route (always under ``/v1``, never under a tenant)."""

    verb: str
    path: str
    target: str
    request_in: PathConvert
    """(body or query fields, path parameters) -> the v1.0 request as a ProtoJSON dict."""
    result_out: Convert
    operation: Callable[..., Any] | None = None


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


def _without_metadata(convert: Convert) -> Convert:
    def params_in(params: Any) -> dict[str, Any]:
        data: dict[str, Any] = convert(params)
        data.pop("metadata", None)
        return data

    return params_in


def _card_out(card: AgentCard) -> dict[str, Any]:
    return v03_card.merged_card(card.to_wire())


def _push_list_out(configs: list[TaskPushNotificationConfig]) -> list[dict[str, Any]]:
    return [js.push_config_out(c) for c in configs]


def _send_result_out(result: SendMessageResponse) -> dict[str, Any]:
    return js.send_result_out(result)


def _stream_out(event: StreamResponse) -> dict[str, Any]:
    return js.stream_event_out(event)


def _task_out(task: Task) -> dict[str, Any]:
    return js.task_out(task)


_PUSH = "tasks/pushNotificationConfig"

JSONRPC_METHODS: dict[str, LegacyMethod] = {
    m.name: m
    for m in (
        LegacyMethod("message/send", "SendMessage", js.send_params_in, _send_result_out),
        LegacyMethod("message/stream", "SendStreamingMessage", js.send_params_in, _stream_out),
        LegacyMethod("tasks/get", "GetTask", js.task_query_in, _task_out),
        LegacyMethod("tasks/cancel", "CancelTask", js.task_id_params_in, _task_out),
        LegacyMethod("tasks/resubscribe", "SubscribeToTask", _without_metadata(js.task_id_params_in), _stream_out),
        LegacyMethod(f"{_PUSH}/set", "CreateTaskPushNotificationConfig", js.push_config_set_in, js.push_config_out),
        LegacyMethod(f"{_PUSH}/get", "GetTaskPushNotificationConfig", js.push_config_get_in, js.push_config_out),
        LegacyMethod(
            f"{_PUSH}/list",
            "ListTaskPushNotificationConfigs",
            js.push_config_list_in,
            _push_list_out,
            operation=list_all_push_configs,
        ),
        LegacyMethod(f"{_PUSH}/delete", "DeleteTaskPushNotificationConfig", js.push_config_delete_in, lambda _: None),
        LegacyMethod(
            "agent/getAuthenticatedExtendedCard",
            "GetExtendedAgentCard",
            lambda _: {},
            _card_out,
            operation=legacy_extended_card,
        ),
    )
}


# --------------------------------------------------------------------------- REST (/v1)


def _task_id(path: dict[str, str]) -> dict[str, Any]:
    return {"id": path["id"]}


def _get_task_in(query: dict[str, Any], path: dict[str, str]) -> dict[str, Any]:
    """``GET /v1/tasks/{id}?historyLength=N``; 0 is "no limit" in v0.3, as over JSON-RPC."""
    data = _task_id(path)
    history = history_length_in(query.get("historyLength", query.get("history_length")), "historyLength")
    if history is not None:
        data["historyLength"] = history
    return data


def _list_configs_in(query: dict[str, Any], path: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {"taskId": path["id"]}
    for camel, snake in (("pageSize", "page_size"), ("pageToken", "page_token")):
        if camel in query or snake in query:
            data[camel] = query.get(camel, query.get(snake))
    return data


def _config_path_in(_: dict[str, Any], path: dict[str, str]) -> dict[str, Any]:
    return {"taskId": path["id"], "id": path["config_id"]}


_TASK = "/v1/tasks/{id}"
_CONFIGS = _TASK + "/pushNotificationConfigs"

REST_ROUTES: tuple[LegacyRoute, ...] = (
    LegacyRoute(
        "POST", "/v1/message:send", "SendMessage", lambda body, _: rs.send_request_in(body), rs.send_result_out
    ),
    LegacyRoute(
        "POST",
        "/v1/message:stream",
        "SendStreamingMessage",
        lambda body, _: rs.send_request_in(body),
        rs.stream_event_out,
    ),
    LegacyRoute("POST", _TASK + ":cancel", "CancelTask", lambda _, path: _task_id(path), rs.task_out),
    LegacyRoute("GET", _TASK + ":subscribe", "SubscribeToTask", lambda _, path: _task_id(path), rs.stream_event_out),
    LegacyRoute("POST", _TASK + ":subscribe", "SubscribeToTask", lambda _, path: _task_id(path), rs.stream_event_out),
    LegacyRoute("GET", _TASK, "GetTask", _get_task_in, rs.task_out),
    LegacyRoute(
        "POST",
        _CONFIGS,
        "CreateTaskPushNotificationConfig",
        lambda body, path: rs.push_config_create_in(body, path["id"]),
        rs.push_config_out,
    ),
    LegacyRoute(
        "GET",
        _CONFIGS,
        "ListTaskPushNotificationConfigs",
        _list_configs_in,
        lambda result: rs.push_configs_out(result.configs, result.next_page_token),
    ),
    LegacyRoute("GET", _CONFIGS + "/{config_id}", "GetTaskPushNotificationConfig", _config_path_in, rs.push_config_out),
    LegacyRoute("DELETE", _CONFIGS + "/{config_id}", "DeleteTaskPushNotificationConfig", _config_path_in, lambda _: {}),
    LegacyRoute("GET", "/v1/card", "GetExtendedAgentCard", lambda _, __: {}, _card_out, legacy_extended_card),
)
