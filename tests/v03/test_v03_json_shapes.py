"""The v0.3 JSON-RPC conversions (``a2a_serverless.v03.json_shapes``) against independent oracles.

* Every output validates as the v0.3 SDK's pydantic model of the JSON-RPC shape.
* The reference SDK's own conversion (``a2a.compat.v0_3.conversions``) of the same value agrees
  with ours, both ways, compared as v1.0 protobuf ProtoJSON.
* v1.0 -> v0.3 -> v1.0 gives back every value both versions can express (hypothesis).
* Focused examples of each mapping rule, and of each malformed input naming its v0.3 path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as v1pb
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from v03_strategies import messages, parse_strict, pb_dict, push_configs, send_requests, stream_events, tasks

from a2a_serverless.errors import InvalidParamsError
from a2a_serverless.models import (
    Message,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)
from a2a_serverless.v03 import json_shapes as js

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def dump(model: Any) -> dict[str, Any]:
    """What a v0.3 SDK client sends for one of its pydantic models."""
    result: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return result


def violation(call: Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(InvalidParamsError) as caught:
        call()
    assert len(caught.value.violations) == 1
    found = caught.value.violations[0]
    return found.field, found.description


# --------------------------------------------------------------------------- outputs


@SETTINGS
@given(tasks())
def test_task_out_is_a_v03_task_and_the_reference_reads_it_back(wire: dict[str, Any]) -> None:
    out = js.task_out(Task.model_validate(wire))
    parsed = v03.Task.model_validate(out)
    assert out["kind"] == "task"
    assert "contextId" in out
    assert pb_dict(conversions.to_core_task(parsed)) == pb_dict(parse_strict(wire, v1pb.Task()))


@SETTINGS
@given(messages())
def test_message_out_agrees_with_the_reference_conversion(wire: dict[str, Any]) -> None:
    out = js.message_out(Message.model_validate(wire))
    assert out["kind"] == "message"
    reference = conversions.to_compat_message(parse_strict(wire, v1pb.Message()))
    assert v03.Message.model_validate(out) == reference


@SETTINGS
@given(stream_events())
def test_stream_event_out_is_a_v03_streaming_result(wire: dict[str, Any]) -> None:
    out = js.stream_event_out(StreamResponse.model_validate(wire))
    response = v03.SendStreamingMessageSuccessResponse(id=1, result=out)
    assert pb_dict(conversions.to_core_stream_response(response)) == pb_dict(parse_strict(wire, v1pb.StreamResponse()))
    expected_kind = {"task": "task", "message": "message", "statusUpdate": "status-update"}.get(
        next(iter(wire)), "artifact-update"
    )
    assert out["kind"] == expected_kind


@SETTINGS
@given(tasks() | messages())
def test_send_result_out_is_the_bare_task_or_message(payload: dict[str, Any]) -> None:
    key = "task" if "status" in payload else "message"
    out = js.send_result_out(SendMessageResponse.model_validate({key: payload}))
    response = v03.SendMessageSuccessResponse(id=1, result=out)
    expected = v1pb.SendMessageResponse()
    json_format.ParseDict({key: payload}, expected)
    assert pb_dict(conversions.to_core_send_message_response(v03.SendMessageResponse(root=response))) == pb_dict(
        expected
    )


@SETTINGS
@given(push_configs())
def test_push_config_out_agrees_with_the_reference_conversion(wire: dict[str, Any]) -> None:
    out = js.push_config_out(TaskPushNotificationConfig.model_validate(wire))
    reference = conversions.to_compat_task_push_notification_config(
        parse_strict(wire, v1pb.TaskPushNotificationConfig())
    )
    assert v03.TaskPushNotificationConfig.model_validate(out) == reference


@pytest.mark.parametrize(
    ("state", "v03_state", "final"),
    [
        ("TASK_STATE_SUBMITTED", "submitted", False),
        ("TASK_STATE_WORKING", "working", False),
        ("TASK_STATE_INPUT_REQUIRED", "input-required", True),
        ("TASK_STATE_AUTH_REQUIRED", "auth-required", True),
        ("TASK_STATE_COMPLETED", "completed", True),
        ("TASK_STATE_CANCELED", "canceled", True),
        ("TASK_STATE_FAILED", "failed", True),
        ("TASK_STATE_REJECTED", "rejected", True),
    ],
)
def test_status_update_state_and_final(state: str, v03_state: str, final: bool) -> None:
    event = StreamResponse.model_validate(
        {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": state}, "metadata": {"k": 1}}}
    )
    assert js.stream_event_out(event) == {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "status": {"state": v03_state},
        "final": final,
        "metadata": {"k": 1},
    }


def test_task_out_example() -> None:
    task = Task.model_validate(
        {
            "id": "t1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-01-02T03:04:05.678Z"},
            "artifacts": [
                {
                    "artifactId": "a",
                    "parts": [
                        {"text": "hi", "mediaType": "text/plain", "filename": "x.txt"},
                        {"raw": "aGk=", "mediaType": "application/octet-stream", "filename": "f.bin"},
                        {"url": "https://f", "metadata": {"m": 1}},
                        {"data": {"a": 1}, "mediaType": "application/json"},
                        {"data": [1, 2], "metadata": {"m": 2}},
                    ],
                }
            ],
            "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "q"}], "referenceTaskIds": ["t0"]}],
        }
    )
    assert js.task_out(task) == {
        "kind": "task",
        "id": "t1",
        "contextId": "",
        "status": {"state": "completed", "timestamp": "2025-01-02T03:04:05.678Z"},
        "artifacts": [
            {
                "artifactId": "a",
                "parts": [
                    {"kind": "text", "text": "hi"},
                    {
                        "kind": "file",
                        "file": {"bytes": "aGk=", "mimeType": "application/octet-stream", "name": "f.bin"},
                    },
                    {"kind": "file", "file": {"uri": "https://f"}, "metadata": {"m": 1}},
                    {"kind": "data", "data": {"a": 1}},
                    {"kind": "data", "data": {"value": [1, 2]}, "metadata": {"m": 2, "data_part_compat": True}},
                ],
            }
        ],
        "history": [
            {
                "kind": "message",
                "messageId": "m",
                "role": "user",
                "parts": [{"kind": "text", "text": "q"}],
                "referenceTaskIds": ["t0"],
            }
        ],
    }


def test_push_config_out_example() -> None:
    config = TaskPushNotificationConfig.model_validate(
        {
            "tenant": "acme",
            "id": "c1",
            "taskId": "t1",
            "url": "https://hook",
            "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "secret"},
        }
    )
    assert js.push_config_out(config) == {
        "taskId": "t1",
        "pushNotificationConfig": {
            "id": "c1",
            "url": "https://hook",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    }


# --------------------------------------------------------------------------- inputs vs the reference


@SETTINGS
@given(send_requests())
def test_send_params_in_agrees_with_the_reference(wire: dict[str, Any]) -> None:
    compat = conversions.to_compat_send_message_request(parse_strict(wire, v1pb.SendMessageRequest()), request_id=1)
    ours = js.send_params_in(dump(compat.params))
    reference = conversions.to_core_send_message_request(compat)
    assert pb_dict(parse_strict(SendMessageRequest.model_validate(ours).to_wire(), v1pb.SendMessageRequest())) == (
        pb_dict(reference)
    )
    # and the whole trip gives the original request back
    assert SendMessageRequest.model_validate(ours).to_wire() == SendMessageRequest.model_validate(wire).to_wire()


@SETTINGS
@given(push_configs())
def test_push_config_set_in_agrees_with_the_reference(wire: dict[str, Any]) -> None:
    core = parse_strict(wire, v1pb.TaskPushNotificationConfig())
    compat = conversions.to_compat_create_task_push_notification_config_request(core, request_id=1)
    ours = js.push_config_set_in(dump(compat.params))
    assert pb_dict(parse_strict(ours, v1pb.TaskPushNotificationConfig())) == pb_dict(
        conversions.to_core_create_task_push_notification_config_request(compat)
    )


def test_push_config_requests_agree_with_the_reference() -> None:
    get = v1pb.GetTaskPushNotificationConfigRequest(task_id="t", id="c")
    compat_get = conversions.to_compat_get_task_push_notification_config_request(get, request_id=1)
    assert js.push_config_get_in(dump(compat_get.params)) == {"taskId": "t", "id": "c"}
    delete = v1pb.DeleteTaskPushNotificationConfigRequest(task_id="t", id="c")
    compat_delete = conversions.to_compat_delete_task_push_notification_config_request(delete, request_id=1)
    assert js.push_config_delete_in(dump(compat_delete.params)) == {"taskId": "t", "id": "c"}
    listing = v1pb.ListTaskPushNotificationConfigsRequest(task_id="t")
    compat_list = conversions.to_compat_list_task_push_notification_config_request(listing, request_id=1)
    assert js.push_config_list_in(dump(compat_list.params)) == {"taskId": "t"}


def test_task_requests_agree_with_the_reference() -> None:
    get = v1pb.GetTaskRequest(id="t", history_length=3)
    assert js.task_query_in(dump(conversions.to_compat_get_task_request(get, request_id=1).params)) == {
        "id": "t",
        "historyLength": 3,
    }
    cancel = v1pb.CancelTaskRequest(id="t")
    cancel.metadata.update({"k": "v"})
    compat_cancel = conversions.to_compat_cancel_task_request(cancel, request_id=1)
    assert js.task_id_params_in(dump(compat_cancel.params)) == {"id": "t", "metadata": {"k": "v"}}


# --------------------------------------------------------------------------- round trips


@SETTINGS
@given(messages())
def test_message_round_trip(wire: dict[str, Any]) -> None:
    original = Message.model_validate(wire)
    assert Message.model_validate(js.message_in(js.message_out(original))).to_wire() == original.to_wire()


@SETTINGS
@given(tasks())
def test_task_round_trip(wire: dict[str, Any]) -> None:
    original = Task.model_validate(wire)
    assert Task.model_validate(js.task_in(js.task_out(original))).to_wire() == original.to_wire()


@SETTINGS
@given(stream_events())
def test_stream_event_round_trip(wire: dict[str, Any]) -> None:
    original = StreamResponse.model_validate(wire)
    assert StreamResponse.model_validate(js.stream_event_in(js.stream_event_out(original))).to_wire() == wire


@SETTINGS
@given(push_configs())
def test_push_config_round_trip(wire: dict[str, Any]) -> None:
    original = TaskPushNotificationConfig.model_validate(wire)
    back = TaskPushNotificationConfig.model_validate(js.push_config_set_in(js.push_config_out(original)))
    assert back.to_wire() == original.to_wire()


# --------------------------------------------------------------------------- mapping rules


def _send(configuration: dict[str, Any] | None = None, **message: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}
    }
    params["message"].update(message)
    if configuration is not None:
        params["configuration"] = configuration
    return params


@pytest.mark.parametrize(
    ("configuration", "expected"),
    [
        (None, None),
        ({}, {}),
        ({"blocking": True}, {"returnImmediately": False}),
        ({"blocking": False}, {"returnImmediately": True}),
        ({"historyLength": 0}, {}),
        (
            {"historyLength": 4, "acceptedOutputModes": ["text/plain"]},
            {"historyLength": 4, "acceptedOutputModes": ["text/plain"]},
        ),
    ],
)
def test_send_configuration(configuration: dict[str, Any] | None, expected: dict[str, Any] | None) -> None:
    # Absent ``blocking`` is blocking: returnImmediately stays unset (false).
    assert js.send_params_in(_send(configuration)).get("configuration") == expected


def test_inline_push_config_keeps_no_id_when_it_has_none() -> None:
    out = js.send_params_in(
        _send(
            {
                "pushNotificationConfig": {
                    "url": "https://hook",
                    "token": "tok",
                    "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"},
                }
            }
        )
    )
    assert out["configuration"] == {
        "taskPushNotificationConfig": {
            "url": "https://hook",
            "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "c"},
        }
    }


@pytest.mark.parametrize(("given_id", "expected"), [(None, "t1"), ("", "t1"), ("c1", "c1")])
def test_push_config_set_defaults_the_config_id_to_the_task_id(given_id: str | None, expected: str) -> None:
    config: dict[str, Any] = {"url": "https://hook"}
    if given_id is not None:
        config["id"] = given_id
    out = js.push_config_set_in({"taskId": "t1", "pushNotificationConfig": config})
    assert out == {"taskId": "t1", "id": expected, "url": "https://hook"}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"id": "t1"}, {"taskId": "t1", "id": "t1"}),
        ({"id": "t1", "pushNotificationConfigId": "c1", "metadata": {}}, {"taskId": "t1", "id": "c1"}),
        ({"id": "t1", "pushNotificationConfigId": None}, {"taskId": "t1", "id": "t1"}),
    ],
)
def test_push_config_get(params: dict[str, Any], expected: dict[str, Any]) -> None:
    assert js.push_config_get_in(params) == expected


def test_task_query_drops_metadata_and_zero_history() -> None:
    assert js.task_query_in({"id": "t", "historyLength": 0, "metadata": {"a": 1}}) == {"id": "t"}
    assert js.task_id_params_in({"id": "t", "metadata": {"a": 1}}) == {"id": "t", "metadata": {"a": 1}}


def test_message_in_maps_every_part_kind() -> None:
    message = {
        "kind": "message",
        "messageId": "m",
        "role": "agent",
        "contextId": "c",
        "taskId": "t",
        "referenceTaskIds": ["t0"],
        "extensions": ["urn:x"],
        "metadata": {"k": "v"},
        "parts": [
            {"kind": "text", "text": "hi", "metadata": {"a": 1}},
            {"kind": "file", "file": {"bytes": "aGk", "mimeType": "image/png", "name": "p.png"}},
            {"kind": "file", "file": {"uri": "https://f"}},
            {"kind": "data", "data": {"x": 1}},
            {"kind": "data", "data": {"value": "s"}, "metadata": {"data_part_compat": True}},
            {"kind": "data", "data": {"value": 1}, "metadata": {"data_part_compat": True, "b": 2}},
            {"text": "no kind"},
        ],
    }
    assert js.message_in(message) == {
        "messageId": "m",
        "contextId": "c",
        "taskId": "t",
        "role": "ROLE_AGENT",
        "parts": [
            {"text": "hi", "metadata": {"a": 1}},
            {"raw": "aGk=", "mediaType": "image/png", "filename": "p.png"},
            {"url": "https://f"},
            {"data": {"x": 1}},
            {"data": "s"},
            {"data": 1, "metadata": {"b": 2}},
            {"text": "no kind"},
        ],
        "metadata": {"k": "v"},
        "extensions": ["urn:x"],
        "referenceTaskIds": ["t0"],
    }


def test_only_the_exact_wrapped_shape_is_unwrapped() -> None:
    # A client's own data_part_compat beside other data, or not exactly true, is kept as sent.
    for part in (
        {"kind": "data", "data": {"value": 1, "other": 2}, "metadata": {"data_part_compat": True}},
        {"kind": "data", "data": {"value": 1}, "metadata": {"data_part_compat": "yes"}},
    ):
        assert js.message_in(_send(parts=[part])["message"])["parts"] == [
            {"data": part["data"], "metadata": part["metadata"]}
        ]


def test_v03_state_unknown_is_refused() -> None:
    task = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "unknown"}}
    assert violation(lambda: js.task_in(task)) == ("task.status.state", '"unknown" has no v1.0 equivalent')


# --------------------------------------------------------------------------- malformed input


def _with(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    params = base if base is not None else _send()
    keys = path.split(".")
    target = params
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
    if isinstance(target, list):
        target[int(keys[-1])] = value
    else:
        target[keys[-1]] = value
    return params


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("message", "x", "message"),
        ("message", None, "message"),
        ("message.kind", "task", "message.kind"),
        ("message.role", "system", "message.role"),
        ("message.role", ["user"], "message.role"),
        ("message.role", None, "message.role"),
        ("message.parts", {"kind": "text"}, "message.parts"),
        ("message.parts.0", "hi", "message.parts[0]"),
        ("message.parts.0.kind", "image", "message.parts[0].kind"),
        ("message.parts.0.kind", {}, "message.parts[0].kind"),
        ("message.parts.0.text", 5, "message.parts[0].text"),
        ("message.parts.0.metadata", [1], "message.parts[0].metadata"),
        ("message.parts.0", {"kind": "file", "file": {}}, "message.parts[0].file"),
        ("message.parts.0", {"kind": "file", "file": {"bytes": "aGk=", "uri": "u"}}, "message.parts[0].file"),
        ("message.parts.0", {"kind": "file", "file": {"bytes": "***"}}, "message.parts[0].file.bytes"),
        ("message.parts.0", {"kind": "file", "file": {"bytes": 5}}, "message.parts[0].file.bytes"),
        ("message.parts.0", {"kind": "file", "file": {"uri": 5}}, "message.parts[0].file.uri"),
        ("message.parts.0", {"kind": "file", "file": {"uri": "u", "mimeType": 1}}, "message.parts[0].file.mimeType"),
        ("message.parts.0", {"kind": "file", "file": {"uri": "u", "name": []}}, "message.parts[0].file.name"),
        ("message.parts.0", {"kind": "file", "file": "u"}, "message.parts[0].file"),
        ("message.parts.0", {"kind": "data", "data": [1]}, "message.parts[0].data"),
        ("message.parts.0", {"kind": "data"}, "message.parts[0].data"),
        ("message.parts.0", {}, "message.parts[0].kind"),
        ("message.parts.0", {"text": "a", "data": {}}, "message.parts[0].kind"),
        ("configuration", [], "configuration"),
        ("configuration.blocking", "yes", "configuration.blocking"),
        ("configuration.historyLength", "many", "configuration.historyLength"),
        ("configuration.historyLength", True, "configuration.historyLength"),
        ("configuration.historyLength", 1.5, "configuration.historyLength"),
        ("configuration.pushNotificationConfig", "https://hook", "configuration.pushNotificationConfig"),
        ("configuration.pushNotificationConfig", {}, "configuration.pushNotificationConfig.url"),
        ("configuration.pushNotificationConfig", {"url": 1}, "configuration.pushNotificationConfig.url"),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "id": 1},
            "configuration.pushNotificationConfig.id",
        ),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "token": {}},
            "configuration.pushNotificationConfig.token",
        ),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "authentication": {"schemes": []}},
            "configuration.pushNotificationConfig.authentication.schemes",
        ),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "authentication": {"schemes": "Bearer"}},
            "configuration.pushNotificationConfig.authentication.schemes",
        ),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "authentication": {"schemes": [3]}},
            "configuration.pushNotificationConfig.authentication.schemes[0]",
        ),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "authentication": {"schemes": ["B"], "credentials": 1}},
            "configuration.pushNotificationConfig.authentication.credentials",
        ),
        (
            "configuration.pushNotificationConfig",
            {"url": "u", "authentication": "Bearer"},
            "configuration.pushNotificationConfig.authentication",
        ),
    ],
)
def test_send_params_violations_name_the_v03_path(path: str, value: Any, field: str) -> None:
    assert violation(lambda: js.send_params_in(_with(path, value)))[0] == field


@pytest.mark.parametrize(
    ("convert", "params", "field"),
    [
        (js.send_params_in, [], "params"),
        (js.task_query_in, "t", "params"),
        (js.task_query_in, {"id": "t", "historyLength": "x"}, "historyLength"),
        (js.task_id_params_in, None, "params"),
        (js.push_config_set_in, {"pushNotificationConfig": {"url": "u"}}, "taskId"),
        (js.push_config_set_in, {"taskId": 5, "pushNotificationConfig": {"url": "u"}}, "taskId"),
        (js.push_config_set_in, {"taskId": "t"}, "pushNotificationConfig"),
        (js.push_config_get_in, {}, "id"),
        (js.push_config_get_in, {"id": "t", "pushNotificationConfigId": 1}, "pushNotificationConfigId"),
        (js.push_config_list_in, {"id": ""}, "id"),
        (js.push_config_delete_in, {"id": "t"}, "pushNotificationConfigId"),
        (js.push_config_delete_in, {"pushNotificationConfigId": "c"}, "id"),
        (js.task_in, {"kind": "message"}, "task.kind"),
        (js.task_in, {"id": "t", "status": "done"}, "task.status"),
        (js.task_in, {"id": "t", "status": {"state": "done"}}, "task.status.state"),
        (js.task_in, {"id": "t", "status": {}}, "task.status.state"),
        (js.task_in, {"id": "t", "status": {"state": "working"}, "artifacts": {}}, "task.artifacts"),
        (js.task_in, {"id": "t", "status": {"state": "working"}, "history": [1]}, "task.history[0]"),
        (js.stream_event_in, {"kind": "update"}, "result.kind"),
        (js.stream_event_in, {"kind": "artifact-update", "artifact": None}, "result.artifact"),
    ],
)
def test_other_violations_name_the_v03_path(convert: Callable[[Any], Any], params: Any, field: str) -> None:
    assert violation(lambda: convert(params))[0] == field
