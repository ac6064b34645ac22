"""The v0.3 REST conversions (``a2a_serverless.v03.rest_shapes``) against independent oracles.

* Every output parses with protobuf's strict ``ParseDict`` into the v0.3 proto message (as the v0.3
  SDK REST client parses responses: unknown fields are errors), and the SDK's own reading of it
  (``proto_utils.FromProto`` then ``conversions.to_core_*``) is the v1.0 value we started from.
* Inputs are produced the way the v0.3 SDK REST client produces them (pydantic -> ``ToProto`` ->
  ``MessageToDict``, proto names or camelCase), and must read as the reference server reads them.
* v1.0 -> v0.3 -> v1.0 gives back every value the v0.3 proto can express (hypothesis).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03pb
from a2a.compat.v0_3 import conversions, proto_utils
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as v1pb
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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
from a2a_serverless.v03 import rest_shapes as rs

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def sdk_reads_task(out: dict[str, Any]) -> dict[str, Any]:
    """How the v0.3 SDK client reads a Task body, as a v1.0 ProtoJSON dict."""
    return pb_dict(conversions.to_core_task(proto_utils.FromProto.task(parse_strict(out, v03pb.Task()))))


def v1_pb(wire: dict[str, Any], message: Any) -> dict[str, Any]:
    return pb_dict(parse_strict(wire, message))


def violation(call: Callable[[], Any]) -> str:
    with pytest.raises(InvalidParamsError) as caught:
        call()
    assert len(caught.value.violations) == 1
    return caught.value.violations[0].field


# --------------------------------------------------------------------------- outputs


@SETTINGS
@given(tasks(rest=True))
def test_task_out_is_v03_protojson_and_the_sdk_reads_it_back(wire: dict[str, Any]) -> None:
    assert sdk_reads_task(rs.task_out(Task.model_validate(wire))) == v1_pb(wire, v1pb.Task())


@SETTINGS
@given(messages(rest=True))
def test_message_out_is_v03_protojson_and_the_sdk_reads_it_back(wire: dict[str, Any]) -> None:
    out = rs.message_out(Message.model_validate(wire))
    read = conversions.to_core_message(proto_utils.FromProto.message(parse_strict(out, v03pb.Message())))
    assert pb_dict(read) == v1_pb(wire, v1pb.Message())


@SETTINGS
@given(tasks(rest=True) | messages(rest=True))
def test_send_result_out_is_a_v03_send_message_response(payload: dict[str, Any]) -> None:
    key = "task" if "status" in payload else "message"
    out = rs.send_result_out(SendMessageResponse.model_validate({key: payload}))
    assert list(out) == [key]
    read = proto_utils.FromProto.task_or_message(parse_strict(out, v03pb.SendMessageResponse()))
    core = conversions.to_core_task(read) if key == "task" else conversions.to_core_message(read)  # type: ignore[arg-type]
    assert pb_dict(core) == v1_pb(payload, v1pb.Task() if key == "task" else v1pb.Message())


@SETTINGS
@given(stream_events(rest=True))
def test_stream_event_out_is_a_v03_stream_response(wire: dict[str, Any]) -> None:
    out = rs.stream_event_out(StreamResponse.model_validate(wire))
    parsed = parse_strict(out, v03pb.StreamResponse())
    read = conversions.to_core_stream_response(
        v03.SendStreamingMessageSuccessResponse(id=1, result=proto_utils.FromProto.stream_response(parsed))
    )
    assert pb_dict(read) == v1_pb(wire, v1pb.StreamResponse())
    if "statusUpdate" in wire:
        state = wire["statusUpdate"]["status"]["state"]
        assert out["statusUpdate"]["final"] is (state not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"))


@SETTINGS
@given(push_configs())
def test_push_config_out_is_v03_protojson(wire: dict[str, Any]) -> None:
    out = rs.push_config_out(TaskPushNotificationConfig.model_validate(wire))
    read = conversions.to_core_task_push_notification_config(
        proto_utils.FromProto.task_push_notification_config(parse_strict(out, v03pb.TaskPushNotificationConfig()))
    )
    assert pb_dict(read) == v1_pb(wire, v1pb.TaskPushNotificationConfig())


@SETTINGS
@given(st.lists(push_configs(), max_size=3), st.sampled_from(["", "next"]))
def test_push_configs_out_is_a_v03_list_response(configs: list[dict[str, Any]], token: str) -> None:
    out = rs.push_configs_out([TaskPushNotificationConfig.model_validate(c) for c in configs], token)
    parsed = parse_strict(out, v03pb.ListTaskPushNotificationConfigResponse())
    assert len(parsed.configs) == len(configs)
    assert parsed.next_page_token == token


def test_outputs_drop_what_the_v03_proto_cannot_hold() -> None:
    message = Message.model_validate(
        {
            "messageId": "m",
            "role": "ROLE_USER",
            "referenceTaskIds": ["t0"],
            "parts": [
                {"text": "hi", "mediaType": "text/plain", "filename": "a.txt"},
                {"data": 7, "filename": "n.json"},
                {"raw": "aGk=", "mediaType": "text/plain", "filename": "hi.txt"},
            ],
        }
    )
    assert rs.message_out(message) == {
        "messageId": "m",
        "role": "ROLE_USER",
        "content": [
            {"text": "hi"},
            {"data": {"data": {"value": 7}}, "metadata": {"data_part_compat": True}},
            # The v0.3 SDKs put the base64 text into the bytes field: base64("aGk=").
            {"file": {"fileWithBytes": "YUdrPQ==", "mimeType": "text/plain", "name": "hi.txt"}},
        ],
    }


def test_canceled_is_spelled_with_two_ls() -> None:
    task = Task.model_validate({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELED"}})
    assert rs.task_out(task) == {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELLED"}}
    assert rs.task_in(rs.task_out(task))["status"] == {"state": "TASK_STATE_CANCELED"}


def test_push_config_out_example() -> None:
    config = TaskPushNotificationConfig.model_validate(
        {"tenant": "x", "id": "c1", "taskId": "t1", "url": "https://hook", "authentication": {"scheme": "Bearer"}}
    )
    assert rs.push_config_out(config) == {
        "name": "tasks/t1/pushNotificationConfigs/c1",
        "pushNotificationConfig": {"id": "c1", "url": "https://hook", "authentication": {"schemes": ["Bearer"]}},
    }


# --------------------------------------------------------------------------- inputs, as the SDK client sends them


def sdk_send_body(wire: dict[str, Any], *, proto_names: bool) -> dict[str, Any]:
    """The body the v0.3 SDK REST client posts for a request."""
    compat = conversions.to_compat_send_message_request(parse_strict(wire, v1pb.SendMessageRequest()), request_id=0)
    body = v03pb.SendMessageRequest(
        request=proto_utils.ToProto.message(compat.params.message),
        configuration=proto_utils.ToProto.message_send_configuration(compat.params.configuration),
        metadata=proto_utils.ToProto.metadata(compat.params.metadata),
    )
    return json_format.MessageToDict(body, preserving_proto_field_name=proto_names)


def normalized(request: dict[str, Any]) -> dict[str, Any]:
    """A send request without ``returnImmediately`` (see test_blocking_and_configuration) and
    without an empty configuration (all defaults, as the SDK client always sends one)."""
    configuration = {k: v for k, v in request.get("configuration", {}).items() if k != "returnImmediately"}
    rest = {k: v for k, v in request.items() if k != "configuration"}
    return {**rest, "configuration": configuration} if configuration else rest


@SETTINGS
@given(send_requests(rest=True), st.booleans())
def test_send_request_in_reads_what_the_sdk_client_sends(wire: dict[str, Any], proto_names: bool) -> None:
    body = sdk_send_body(wire, proto_names=proto_names)
    ours = SendMessageRequest.model_validate(rs.send_request_in(body)).to_wire()
    reference = conversions.to_core_send_message_request(
        v03.SendMessageRequest(
            id=0, params=proto_utils.FromProto.message_send_params(parse_strict(body, v03pb.SendMessageRequest()))
        )
    )
    # The reference server reads the same request...
    assert normalized(pb_dict(parse_strict(ours, v1pb.SendMessageRequest()))) == normalized(pb_dict(reference))
    # ...which is the one the client sent; it blocks exactly when the body says so (a proto3 bool:
    # a configuration without ``blocking`` is false, as the v0.3 reference server reads it).
    expected = SendMessageRequest.model_validate(wire).to_wire()
    assert normalized(ours) == normalized(expected)
    if "configuration" in body:
        blocks = bool(body["configuration"].get("blocking"))
        assert ours.get("configuration", {}).get("returnImmediately", False) is not blocks


@pytest.mark.parametrize(
    ("configuration", "expected"),
    [
        (None, None),
        # a proto3 bool: omitted means false, so a configuration without it does not block (what
        # the a2a-sdk 0.3 client sends when it polls, and how the v0.3 reference server reads it)
        ({}, {"returnImmediately": True}),
        ({"blocking": True}, {"returnImmediately": False}),
        ({"blocking": False}, {"returnImmediately": True}),
        (
            {"history_length": 0, "accepted_output_modes": ["a/b"], "blocking": True},
            {"acceptedOutputModes": ["a/b"], "returnImmediately": False},
        ),
        ({"historyLength": "3", "blocking": True}, {"historyLength": 3, "returnImmediately": False}),
        (
            {"pushNotification": {"url": "https://h", "authentication": {"schemes": ["Bearer"]}}, "blocking": True},
            {
                "taskPushNotificationConfig": {"url": "https://h", "authentication": {"scheme": "Bearer"}},
                "returnImmediately": False,
            },
        ),
        (
            {"push_notification": {"id": "c", "url": "https://h", "token": "t"}, "blocking": True},
            {"taskPushNotificationConfig": {"id": "c", "url": "https://h", "token": "t"}, "returnImmediately": False},
        ),
    ],
)
def test_blocking_and_configuration(configuration: dict[str, Any] | None, expected: dict[str, Any] | None) -> None:
    body: dict[str, Any] = {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]}}
    if configuration is not None:
        body["configuration"] = configuration
    assert rs.send_request_in(body).get("configuration") == expected


def test_message_in_accepts_proto_names_numbers_and_json_names() -> None:
    body = {
        "request": {
            "message_id": "m",
            "context_id": "c",
            "task_id": "t",
            "role": 2,
            "content": [
                {"text": "hi", "metadata": {"a": 1}},
                {"file": {"file_with_uri": "https://f", "mime_type": "image/png", "name": "p.png"}},
                {"file": {"fileWithBytes": base64.b64encode(b"aGk=").decode()}},
                {"data": {"data": {"value": [1]}}, "metadata": {"data_part_compat": True}},
                {"data": {}},
            ],
            "extensions": ["urn:x"],
            "metadata": {"k": "v"},
        },
        "metadata": {"top": True},
    }
    assert rs.send_request_in(body) == {
        "message": {
            "messageId": "m",
            "contextId": "c",
            "taskId": "t",
            "role": "ROLE_AGENT",
            "parts": [
                {"text": "hi", "metadata": {"a": 1}},
                {"url": "https://f", "mediaType": "image/png", "filename": "p.png"},
                {"raw": "aGk="},
                {"data": [1]},
                {"data": {}},
            ],
            "metadata": {"k": "v"},
            "extensions": ["urn:x"],
        },
        "metadata": {"top": True},
    }


@pytest.mark.parametrize(
    ("sent", "content"),
    [
        (base64.b64encode(base64.b64encode(b"\x00\xffbinary")).decode(), b"\x00\xffbinary"),  # SDK convention
        (base64.b64encode(b"\x00\xff binary").decode(), b"\x00\xff binary"),  # encoded once: not base64 inside
        (base64.urlsafe_b64encode(b"aGk").decode().rstrip("="), b"hi"),  # URL-safe, unpadded, inner unpadded
        ("", b""),
    ],
)
def test_file_bytes(sent: str, content: bytes) -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "content": [{"file": {"fileWithBytes": sent}}]}
    assert rs.message_in(message)["parts"] == [{"raw": base64.b64encode(content).decode()}]


# --------------------------------------------------------------------------- push config creation


def sdk_create_body(config: dict[str, Any], *, proto_names: bool = True) -> dict[str, Any]:
    """The body the v0.3 SDK REST client posts to create a push config."""
    core = parse_strict(config, v1pb.TaskPushNotificationConfig())
    compat = conversions.to_compat_create_task_push_notification_config_request(core, request_id=0)
    request = v03pb.CreateTaskPushNotificationConfigRequest(
        parent=f"tasks/{core.task_id}",
        config_id=compat.params.push_notification_config.id,
        config=proto_utils.ToProto.task_push_notification_config(compat.params),
    )
    return json_format.MessageToDict(request, preserving_proto_field_name=proto_names)


@SETTINGS
@given(push_configs(), st.booleans(), st.booleans())
def test_push_config_create_reads_what_the_sdk_client_sends(
    wire: dict[str, Any], with_id: bool, proto_names: bool
) -> None:
    if not with_id:
        wire = {k: v for k, v in wire.items() if k != "id"}
    body = sdk_create_body(wire, proto_names=proto_names)
    ours = TaskPushNotificationConfig.model_validate(rs.push_config_create_in(body, wire["taskId"]))
    assert ours.to_wire() == {**wire, "id": wire.get("id", wire["taskId"])}


def test_sdk_client_names_an_id_less_config_none() -> None:
    body = sdk_create_body({"taskId": "t1", "url": "https://h"})
    assert body["config"]["name"] == "tasks/t1/pushNotificationConfigs/None"
    assert rs.push_config_create_in(body, "t1") == {"taskId": "t1", "url": "https://h", "id": "t1"}


@pytest.mark.parametrize(
    ("body", "expected_id"),
    [
        (
            {
                "configId": "a",
                "config": {
                    "name": "tasks/t/pushNotificationConfigs/c",
                    "pushNotificationConfig": {"id": "b", "url": "u"},
                },
            },
            "a",
        ),
        (
            {
                "config_id": "",
                "config": {
                    "name": "tasks/t/pushNotificationConfigs/c",
                    "pushNotificationConfig": {"id": "b", "url": "u"},
                },
            },
            "b",
        ),
        ({"config": {"name": "tasks/t/pushNotificationConfigs/c", "pushNotificationConfig": {"url": "u"}}}, "c"),
        ({"config": {"name": "bogus", "push_notification_config": {"url": "u"}}}, "path-task"),
        ({"name": "tasks/other/pushNotificationConfigs/c", "pushNotificationConfig": {"url": "u"}}, "c"),
        ({"pushNotificationConfig": {"id": "b", "url": "u"}}, "b"),
        ({"push_notification_config": {"url": "u"}}, "path-task"),
    ],
)
def test_push_config_create_id_precedence(body: dict[str, Any], expected_id: str) -> None:
    # The path's task id wins over ``parent`` and ``name``.
    assert rs.push_config_create_in({"parent": "tasks/else", **body}, "path-task") == {
        "taskId": "path-task",
        "url": "u",
        "id": expected_id,
    }


# --------------------------------------------------------------------------- round trips


@SETTINGS
@given(messages(rest=True))
def test_message_round_trip(wire: dict[str, Any]) -> None:
    original = Message.model_validate(wire)
    assert Message.model_validate(rs.message_in(rs.message_out(original))).to_wire() == original.to_wire()


@SETTINGS
@given(tasks(rest=True))
def test_task_round_trip(wire: dict[str, Any]) -> None:
    original = Task.model_validate(wire)
    assert Task.model_validate(rs.task_in(rs.task_out(original))).to_wire() == original.to_wire()


@SETTINGS
@given(stream_events(rest=True))
def test_stream_event_round_trip(wire: dict[str, Any]) -> None:
    original = StreamResponse.model_validate(wire)
    assert StreamResponse.model_validate(rs.stream_event_in(rs.stream_event_out(original))).to_wire() == wire


@SETTINGS
@given(push_configs())
def test_push_config_round_trip(wire: dict[str, Any]) -> None:
    original = TaskPushNotificationConfig.model_validate(wire)
    back = rs.push_config_create_in(rs.push_config_out(original), original.task_id)
    assert TaskPushNotificationConfig.model_validate(back).to_wire() == original.to_wire()


def test_round_trip_through_protobuf_text() -> None:
    """What the SDK emits for our output (``MessageToDict``, camelCase) reads back the same."""
    task = Task.model_validate(
        {
            "id": "t",
            "contextId": "c",
            "status": {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "name?"}]},
            },
        }
    )
    reparsed = json_format.MessageToDict(parse_strict(rs.task_out(task), v03pb.Task()))
    assert reparsed["status"]["message"]["content"] == [{"text": "name?"}]
    assert Task.model_validate(rs.task_in(reparsed)).to_wire() == task.to_wire()


# --------------------------------------------------------------------------- malformed input


_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "(body)"),
        ({}, "message"),
        ({"message": "hi"}, "message"),
        ({"message": {**_MESSAGE, "role": "ROLE_UNSPECIFIED"}}, "message.role"),
        ({"message": {**_MESSAGE, "role": 0}}, "message.role"),
        ({"message": {**_MESSAGE, "role": True}}, "message.role"),
        ({"message": {**_MESSAGE, "role": "user"}}, "message.role"),
        ({"message": {**_MESSAGE, "content": {"text": "hi"}}}, "message.content"),
        ({"message": {**_MESSAGE, "content": [{}]}}, "message.content[0]"),
        ({"message": {**_MESSAGE, "content": [{"text": "a", "data": {}}]}}, "message.content[0]"),
        ({"message": {**_MESSAGE, "content": [{"text": 1}]}}, "message.content[0].text"),
        ({"message": {**_MESSAGE, "content": [{"text": "a", "metadata": 1}]}}, "message.content[0].metadata"),
        ({"message": {**_MESSAGE, "content": [{"file": {}}]}}, "message.content[0].file"),
        ({"message": {**_MESSAGE, "content": [{"file": "f"}]}}, "message.content[0].file"),
        (
            {"message": {**_MESSAGE, "content": [{"file": {"fileWithBytes": "!!"}}]}},
            "message.content[0].file.fileWithBytes",
        ),
        ({"message": {**_MESSAGE, "content": [{"file": {"fileWithUri": 3}}]}}, "message.content[0].file.fileWithUri"),
        (
            {"message": {**_MESSAGE, "content": [{"file": {"fileWithUri": "u", "fileWithBytes": ""}}]}},
            "message.content[0].file",
        ),
        (
            {"message": {**_MESSAGE, "content": [{"file": {"fileWithUri": "u", "name": 1}}]}},
            "message.content[0].file.name",
        ),
        ({"message": {**_MESSAGE, "content": [{"data": []}]}}, "message.content[0].data"),
        ({"message": {**_MESSAGE, "content": [{"data": {"data": 5}}]}}, "message.content[0].data.data"),
        ({"message": _MESSAGE, "configuration": 1}, "configuration"),
        ({"message": _MESSAGE, "configuration": {"blocking": "no"}}, "configuration.blocking"),
        ({"message": _MESSAGE, "configuration": {"historyLength": "x"}}, "configuration.historyLength"),
        ({"message": _MESSAGE, "configuration": {"pushNotification": {}}}, "configuration.pushNotification.url"),
        (
            {"message": _MESSAGE, "configuration": {"pushNotification": {"url": "u", "authentication": {}}}},
            "configuration.pushNotification.authentication.schemes",
        ),
    ],
)
def test_send_request_violations_name_the_v03_path(body: Any, field: str) -> None:
    assert violation(lambda: rs.send_request_in(body)) == field


@pytest.mark.parametrize(
    ("convert", "data", "field"),
    [
        (lambda b: rs.push_config_create_in(b, "t"), "x", "(body)"),
        (lambda b: rs.push_config_create_in(b, "t"), {"config": []}, "config"),
        (lambda b: rs.push_config_create_in(b, "t"), {"config": {}}, "config.pushNotificationConfig"),
        (lambda b: rs.push_config_create_in(b, "t"), {"configId": 1, "config": {}}, "configId"),
        (
            lambda b: rs.push_config_create_in(b, "t"),
            {"config": {"name": 5, "pushNotificationConfig": {"url": "u"}}},
            "config.name",
        ),
        (
            lambda b: rs.push_config_create_in(b, "t"),
            {"pushNotificationConfig": {"url": ""}},
            "pushNotificationConfig.url",
        ),
        (rs.task_in, {"id": "t", "status": {"state": "TASK_STATE_UNSPECIFIED"}}, "task.status.state"),
        (rs.task_in, {"id": "t", "status": {"state": 0}}, "task.status.state"),
        (rs.task_in, {"id": "t", "status": {"state": "TASK_STATE_CANCELED"}}, "task.status.state"),
        (rs.task_in, {"id": "t", "status": {"state": "completed"}}, "task.status.state"),
        (rs.task_in, {"id": "t", "status": {"state": 9}}, "task.status.state"),
        (rs.task_in, {"id": "t", "status": {"state": 3, "update": 1}}, "task.status.message"),
        (rs.stream_event_in, {}, "(body)"),
        (rs.stream_event_in, {"task": {}, "msg": {}}, "(body)"),
        (rs.stream_event_in, {"statusUpdate": []}, "statusUpdate"),
        (rs.stream_event_in, {"artifactUpdate": {"artifact": {"parts": [{}]}}}, "artifactUpdate.artifact.parts[0]"),
    ],
)
def test_other_violations_name_the_v03_path(convert: Callable[[Any], Any], data: Any, field: str) -> None:
    assert violation(lambda: convert(data)) == field


def test_states_by_number() -> None:
    for number, state in enumerate(
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_REJECTED",
            "TASK_STATE_AUTH_REQUIRED",
        ],
        start=1,
    ):
        assert rs.task_in({"id": "t", "status": {"state": number}})["status"] == {"state": state}
