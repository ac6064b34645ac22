"""Every v0.3 input converter on hostile input: a dict or InvalidParamsError, never anything else.

Two kinds of junk: arbitrary values (non-objects, wrong types, nesting), and valid inputs with one
node replaced by junk or one key removed, which reaches every branch of the converters. Whatever a
converter returns must in turn give the v1.0 model either a value or a ``ValidationError``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03pb
from a2a.compat.v0_3 import conversions, proto_utils
from a2a.types import a2a_pb2 as v1pb
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from v03_strategies import (
    junk,
    messages,
    mutated,
    names,
    parse_strict,
    push_configs,
    send_requests,
    stream_events,
    tasks,
)

from a2a_serverless.errors import InvalidParamsError
from a2a_serverless.models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)
from a2a_serverless.v03 import json_shapes as js
from a2a_serverless.v03 import rest_shapes as rs


def _jsonrpc_send(wire: dict[str, Any]) -> Any:
    compat = conversions.to_compat_send_message_request(parse_strict(wire, v1pb.SendMessageRequest()), request_id=1)
    return compat.params.model_dump(mode="json", by_alias=True, exclude_none=True)


def _rest_send(wire: dict[str, Any]) -> Any:
    compat = conversions.to_compat_send_message_request(parse_strict(wire, v1pb.SendMessageRequest()), request_id=1)
    body = v03pb.SendMessageRequest(
        request=proto_utils.ToProto.message(compat.params.message),
        configuration=proto_utils.ToProto.message_send_configuration(compat.params.configuration),
    )
    return json_format.MessageToDict(body)


def _rest_create(wire: dict[str, Any]) -> Any:
    return {"configId": wire["id"], "config": rs.push_config_out(TaskPushNotificationConfig.model_validate(wire))}


ids = st.fixed_dictionaries({"id": names}, optional={"metadata": st.dictionaries(names, names)})
config_ids = st.fixed_dictionaries({"id": names}, optional={"pushNotificationConfigId": names})
both_ids = st.fixed_dictionaries({"id": names, "pushNotificationConfigId": names})

# (name, converter, v1.0 model of its result, valid v0.3 inputs)
CONVERTERS: list[tuple[str, Callable[[Any], Any], type[BaseModel], st.SearchStrategy[Any]]] = [
    ("json send_params_in", js.send_params_in, SendMessageRequest, send_requests().map(_jsonrpc_send)),
    (
        "json task_query_in",
        js.task_query_in,
        GetTaskRequest,
        st.fixed_dictionaries({"id": names}, optional={"historyLength": st.integers(0, 9)}),
    ),
    ("json task_id_params_in", js.task_id_params_in, CancelTaskRequest, ids),
    (
        "json push_config_set_in",
        js.push_config_set_in,
        TaskPushNotificationConfig,
        push_configs().map(lambda w: js.push_config_out(TaskPushNotificationConfig.model_validate(w))),
    ),
    ("json push_config_get_in", js.push_config_get_in, GetTaskPushNotificationConfigRequest, config_ids),
    ("json push_config_list_in", js.push_config_list_in, ListTaskPushNotificationConfigsRequest, ids),
    ("json push_config_delete_in", js.push_config_delete_in, DeleteTaskPushNotificationConfigRequest, both_ids),
    ("json message_in", js.message_in, Message, messages().map(lambda w: js.message_out(Message.model_validate(w)))),
    ("json task_in", js.task_in, Task, tasks().map(lambda w: js.task_out(Task.model_validate(w)))),
    (
        "json stream_event_in",
        js.stream_event_in,
        StreamResponse,
        stream_events().map(lambda w: js.stream_event_out(StreamResponse.model_validate(w))),
    ),
    ("rest send_request_in", rs.send_request_in, SendMessageRequest, send_requests(rest=True).map(_rest_send)),
    (
        "rest push_config_create_in",
        lambda body: rs.push_config_create_in(body, "task-1"),
        TaskPushNotificationConfig,
        push_configs().map(_rest_create),
    ),
    (
        "rest message_in",
        rs.message_in,
        Message,
        messages(rest=True).map(lambda w: rs.message_out(Message.model_validate(w))),
    ),
    ("rest task_in", rs.task_in, Task, tasks(rest=True).map(lambda w: rs.task_out(Task.model_validate(w)))),
    (
        "rest stream_event_in",
        rs.stream_event_in,
        StreamResponse,
        stream_events(rest=True).map(lambda w: rs.stream_event_out(StreamResponse.model_validate(w))),
    ),
]
PARAMS = [pytest.param(convert, model, valid, id=name) for name, convert, model, valid in CONVERTERS]
SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


def check(convert: Callable[[Any], Any], model: type[BaseModel], value: Any) -> None:
    refused: InvalidParamsError | None = None
    try:
        out = convert(value)
    except InvalidParamsError as exc:
        refused = exc
    if refused is not None:
        assert refused.violations
        assert all(isinstance(v.field, str) and v.field and v.description for v in refused.violations)
        return
    assert isinstance(out, dict)
    with contextlib.suppress(ValidationError):
        model.model_validate(out)


@pytest.mark.parametrize(("convert", "model", "valid"), PARAMS)
def test_valid_input_converts(
    convert: Callable[[Any], Any], model: type[BaseModel], valid: st.SearchStrategy[Any]
) -> None:
    @SETTINGS
    @given(valid)
    def run(value: Any) -> None:
        model.model_validate(convert(value))

    run()


@pytest.mark.parametrize(("convert", "model", "valid"), PARAMS)
def test_arbitrary_junk(convert: Callable[[Any], Any], model: type[BaseModel], valid: st.SearchStrategy[Any]) -> None:
    @SETTINGS
    @given(junk)
    def run(value: Any) -> None:
        check(convert, model, value)

    run()


@pytest.mark.parametrize(("convert", "model", "valid"), PARAMS)
def test_valid_input_with_one_node_broken(
    convert: Callable[[Any], Any], model: type[BaseModel], valid: st.SearchStrategy[Any]
) -> None:
    @SETTINGS
    @given(mutated(valid))
    def run(value: Any) -> None:
        check(convert, model, value)

    run()


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("convert", "model", "valid"), PARAMS)
def test_deep_nesting(convert: Callable[[Any], Any], model: type[BaseModel], valid: st.SearchStrategy[Any]) -> None:
    deep = _deep(sys.getrecursionlimit() * 4)
    for value in (deep, {"message": deep, "kind": deep, "status": {"state": deep}}, {"config": deep}):
        check(convert, model, value)
