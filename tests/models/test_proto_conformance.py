"""The pydantic models against the normative proto (``proto/a2a.proto``, package ``lf.a2a.v1``).

a. Descriptor checks: one model per proto message with exactly the proto's field names, and no
   model that is not a proto message; enums by name and number; oneofs, Value fields and presence.
b. Property-based round trips: hypothesis builds random *valid* protobuf messages straight from the
   descriptors; protobuf's own ProtoJSON (``json_format``) must survive a trip through the models
   unchanged, and what the models emit must parse back into the very same protobuf message with
   unknown fields rejected.
c. Focused unit tests of the ProtoJSON rules (A2A specification, sections 5.5 to 5.7) the models must follow.
"""

from __future__ import annotations

import base64
import enum
import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import pytest
from google.protobuf import json_format, timestamp_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import a2a_serverless.models as models
from a2a_serverless.models import (
    AgentCapabilities,
    AgentCard,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    ProtoModel,
    Role,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)
from a2a_serverless.models._base import ProtoEnum

if TYPE_CHECKING:
    from conftest import A2AProto

TIMESTAMP = "google.protobuf.Timestamp"
STRUCT = "google.protobuf.Struct"
VALUE = "google.protobuf.Value"
MS_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def _model_classes() -> dict[str, type[ProtoModel]]:
    """Every ProtoModel subclass defined in ``a2a_serverless.models``."""
    found: dict[str, type[ProtoModel]] = {}
    stack = list(ProtoModel.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("a2a_serverless.models"):
            found[cls.__name__] = cls
    return found


def _model_for(name: str) -> type[ProtoModel]:
    model = getattr(models, name, None)
    assert isinstance(model, type), f"a2a_serverless.models.{name} is missing"
    assert issubclass(model, ProtoModel), f"a2a_serverless.models.{name} is not a ProtoModel"
    return model


# --------------------------------------------------------------------------------------------------
# a. Descriptor checks
# --------------------------------------------------------------------------------------------------


def test_model_fields_match_proto(a2a_proto: A2AProto, proto_message_name: str) -> None:
    descriptor = a2a_proto.message(proto_message_name)
    model = _model_for(proto_message_name)
    assert set(model.model_fields) == {f.name for f in descriptor.fields}
    for field in descriptor.fields:
        assert model.model_fields[field.name].alias == field.json_name, field.full_name


def test_model_oneofs_and_value_fields_match_proto(a2a_proto: A2AProto, proto_message_name: str) -> None:
    descriptor = a2a_proto.message(proto_message_name)
    model = _model_for(proto_message_name)
    oneofs = {
        o.name: tuple(f.name for f in o.fields)
        for o in descriptor.oneofs
        if not any(a2a_proto.is_proto3_optional(f) for f in o.fields)
    }
    assert model._oneofs == oneofs
    value_fields = {f.name for f in descriptor.fields if f.message_type and f.message_type.full_name == VALUE}
    assert model._value_fields == value_fields


def test_model_presence_matches_proto(a2a_proto: A2AProto, proto_message_name: str) -> None:
    """REQUIRED singular fields are required; fields with presence default to None (unset)."""
    descriptor = a2a_proto.message(proto_message_name)
    model = _model_for(proto_message_name)
    for field in descriptor.fields:
        info = model.model_fields[field.name]
        if field.is_repeated:
            # A REQUIRED array may be tolerated when missing (skills: the A2A specification's own example in
            # section 8.4.1 has none) or not (parts).
            assert a2a_proto.is_required(field) or not info.is_required(), field.full_name
        elif a2a_proto.is_required(field) and field.name not in model._always_emit:
            assert info.is_required(), field.full_name
        else:
            assert not info.is_required(), field.full_name
            has_presence = field.message_type is not None or field.containing_oneof is not None
            assert (info.default is None) == has_presence, field.full_name


def test_every_model_is_a_proto_message(a2a_proto: A2AProto) -> None:
    classes = _model_classes()
    assert set(classes) - set(a2a_proto.message_names) == set()
    for name, cls in classes.items():
        assert getattr(models, name) is cls, f"{name} is not exported from a2a_serverless.models"


@pytest.mark.parametrize("enum_cls", [TaskState, Role], ids=["TaskState", "Role"])
def test_enum_members_match_proto(a2a_proto: A2AProto, enum_cls: type[ProtoEnum]) -> None:
    values = a2a_proto.file.enum_types_by_name[enum_cls.__name__].values
    assert [(m.name, m.value, m.number) for m in enum_cls] == [(v.name, v.name, v.number) for v in values]


def test_every_model_enum_is_a_proto_enum(a2a_proto: A2AProto) -> None:
    enums = {
        obj.__name__
        for obj in vars(models).values()
        if isinstance(obj, type) and issubclass(obj, enum.Enum) and obj is not ProtoEnum
    }
    assert enums == set(a2a_proto.enum_names)


# --------------------------------------------------------------------------------------------------
# b. Property-based round trips: random valid protobuf messages -> ProtoJSON -> models -> back
# --------------------------------------------------------------------------------------------------

MAX_ITEMS = 2  # repeated fields and maps
TEXT = st.text(st.characters(codec="utf-8"), max_size=8)
NON_EMPTY_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)  # python-protobuf stores every number as a double
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
JSON_OBJECTS = st.dictionaries(TEXT, JSON_VALUES, max_size=3)
# The whole google.protobuf.Timestamp range, at the millisecond precision the wire carries.
DATETIMES = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999_000))
EPOCH = datetime(1970, 1, 1)

# Model-level limits tighter than int32 (requests.py): outside them is InvalidParams by design.
INT_RANGES = {
    "lf.a2a.v1.SendMessageConfiguration.history_length": (0, INT32_MAX),
    "lf.a2a.v1.GetTaskRequest.history_length": (0, INT32_MAX),
    "lf.a2a.v1.ListTasksRequest.history_length": (0, INT32_MAX),
    "lf.a2a.v1.ListTasksRequest.page_size": (1, 100),
    "lf.a2a.v1.ListTaskPushNotificationConfigsRequest.page_size": (0, 100),
}

# Strings that travel in HTTP headers (models/_base.py): what no header can carry is InvalidParams by
# design, so the valid ones are printable ASCII (media type, token, credentials) or free of control
# characters (file name, webhook URL).
_PRINTABLE_ASCII = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
_NO_CONTROL = st.characters(codec="utf-8", exclude_categories=("Cc",))
STRING_FIELDS = {
    "lf.a2a.v1.Part.media_type": st.text(_PRINTABLE_ASCII, max_size=8),
    "lf.a2a.v1.Part.filename": st.text(_NO_CONTROL, max_size=8),
    "lf.a2a.v1.TaskPushNotificationConfig.url": st.text(_NO_CONTROL, min_size=1, max_size=8),
    "lf.a2a.v1.TaskPushNotificationConfig.token": st.text(_PRINTABLE_ASCII, max_size=8),
    "lf.a2a.v1.AuthenticationInfo.scheme": st.text(_PRINTABLE_ASCII, min_size=1, max_size=8),
    "lf.a2a.v1.AuthenticationInfo.credentials": st.text(_PRINTABLE_ASCII, max_size=8),
}


def _is_map(field: FieldDescriptor) -> bool:
    return field.is_repeated and field.message_type is not None and field.message_type.GetOptions().map_entry


class ProtoStrategies:
    """Hypothesis strategies for valid ``lf.a2a.v1`` protobuf messages, derived from the descriptors.

    Valid means what the spec requires: REQUIRED strings non-empty, REQUIRED enums not UNSPECIFIED,
    REQUIRED messages set, REQUIRED arrays (``parts``, ``skills``...) non-empty, exactly one member of
    every oneof (``Part.content``, ``payload``, ``scheme``, ``flow``). proto3 ``optional`` fields and
    scalar oneof members are unset or set to any value, the default included; JSON in Struct/Value
    is small and random (null included); timestamps span 0001-9999 at millisecond precision.
    """

    def __init__(self, proto: A2AProto) -> None:
        self.proto = proto
        self._cache: dict[str, st.SearchStrategy[Any]] = {}

    def message(self, descriptor: Descriptor) -> st.SearchStrategy[Any]:
        if descriptor.full_name not in self._cache:
            self._cache[descriptor.full_name] = self._build(descriptor)
        return self._cache[descriptor.full_name]

    def _build(self, descriptor: Descriptor) -> st.SearchStrategy[Any]:
        cls = self.proto.message_class(descriptor)
        oneofs = [o for o in descriptor.oneofs if not any(self.proto.is_proto3_optional(f) for f in o.fields)]
        plain = [f for f in descriptor.fields if self.proto.real_oneof(f) is None]

        @st.composite
        def build(draw: st.DrawFn) -> Any:
            msg = cls()
            for oneof in oneofs:
                member = draw(st.sampled_from(list(oneof.fields)))
                # A set scalar member may hold its default ({"text": ""}); a message member must be set.
                value = draw(self.value(member, required=member.message_type is not None))
                self._set(msg, member, value)
            for field in plain:
                if self.proto.is_proto3_optional(field) and not draw(st.booleans()):
                    continue
                value = draw(self.value(field, required=self.proto.is_required(field)))
                if value is not None:
                    self._set(msg, field, value)
            return msg

        return build()

    def value(self, field: FieldDescriptor, *, required: bool) -> st.SearchStrategy[Any]:
        """A value for ``field``; None means "leave unset" (only drawn when not required)."""
        if _is_map(field):
            entry = field.message_type
            key = self.singular(entry.fields_by_name["key"], required=False)
            value = self.singular(entry.fields_by_name["value"], required=False)
            return st.dictionaries(key, value, max_size=MAX_ITEMS)
        if field.is_repeated:
            return st.lists(self.singular(field, required=required), min_size=int(required), max_size=MAX_ITEMS)
        strategy = self.singular(field, required=required)
        if field.message_type is not None and not required:
            return st.none() | strategy
        return strategy

    def singular(self, field: FieldDescriptor, *, required: bool) -> st.SearchStrategy[Any]:
        if field.message_type is not None:
            name = field.message_type.full_name
            if name == TIMESTAMP:
                return DATETIMES.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
            if name == STRUCT:
                return JSON_OBJECTS
            if name == VALUE:
                return JSON_VALUES
            return self.message(field.message_type)
        if field.enum_type is not None:
            numbers = [v.number for v in field.enum_type.values]
            return st.sampled_from(numbers[1:] if required else numbers)
        if field.type == FieldDescriptor.TYPE_STRING:
            return STRING_FIELDS.get(field.full_name, NON_EMPTY_TEXT if required else TEXT)
        if field.type == FieldDescriptor.TYPE_BYTES:
            return st.binary(max_size=16)
        if field.type == FieldDescriptor.TYPE_BOOL:
            return st.booleans()
        if field.type == FieldDescriptor.TYPE_INT32:
            low, high = INT_RANGES.get(field.full_name, (INT32_MIN, INT32_MAX))
            return st.integers(low, high)
        raise NotImplementedError(f"no strategy for {field.full_name} (type {field.type})")

    @staticmethod
    def _set(msg: Any, field: FieldDescriptor, value: Any) -> None:
        if _is_map(field):
            target = getattr(msg, field.name)
            for key, item in value.items():
                if field.message_type.fields_by_name["value"].message_type is None:
                    target[key] = item
                else:
                    target[key].CopyFrom(item)
        elif field.is_repeated:
            target = getattr(msg, field.name)
            for item in value:
                if field.message_type is None:
                    target.append(item)
                else:
                    target.add().CopyFrom(item)
        elif field.message_type is None:
            setattr(msg, field.name, value)
        else:
            target = getattr(msg, field.name)
            name = field.message_type.full_name
            if name == TIMESTAMP:
                delta = value - EPOCH
                target.seconds = delta.days * 86400 + delta.seconds
                target.nanos = delta.microseconds * 1000
            elif name in (STRUCT, VALUE):
                json_format.ParseDict(value, target)
            else:
                target.CopyFrom(value)
            target.SetInParent()  # an empty message (e.g. {} or MutualTlsSecurityScheme()) is still set


def _canonical_timestamp(text: str) -> str:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromJsonString(text)
    return stamp.ToJsonString()


def _canonical_json_value(value: Any) -> Any:
    """Numbers in Struct/Value as doubles (that is all protobuf keeps); bools stay bools."""
    if isinstance(value, dict):
        return {k: _canonical_json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical_json_value(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def _canonical(descriptor: Descriptor, obj: dict[str, Any], model_timestamps: list[str] | None = None) -> Any:
    """``obj`` (ProtoJSON of ``descriptor``) with timestamps and Struct numbers in canonical form."""
    out = dict(obj)
    for field in descriptor.fields:
        if field.json_name not in out or field.message_type is None:
            continue

        def convert(value: Any, field: FieldDescriptor = field) -> Any:
            name = field.message_type.full_name
            if name == TIMESTAMP:
                if model_timestamps is not None:
                    model_timestamps.append(value)
                return _canonical_timestamp(value)
            if name in (STRUCT, VALUE):
                return _canonical_json_value(value)
            return _canonical(field.message_type, value, model_timestamps)

        value = out[field.json_name]
        if _is_map(field):
            entry_value = field.message_type.fields_by_name["value"]
            if entry_value.message_type is not None:
                out[field.json_name] = {k: convert(v, entry_value) for k, v in value.items()}
        elif field.is_repeated:
            out[field.json_name] = [convert(v) for v in value]
        else:
            out[field.json_name] = convert(value)
    return out


def _same_json(a: Any, b: Any) -> bool:
    """Equality that, unlike ``==``, tells ``true`` from ``1.0`` and ``1`` from ``1.0``."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


_STRATEGIES: dict[int, ProtoStrategies] = {}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_round_trip_against_protobuf(a2a_proto: A2AProto, proto_message_name: str, data: st.DataObject) -> None:
    strategies = _STRATEGIES.setdefault(id(a2a_proto), ProtoStrategies(a2a_proto))
    descriptor = a2a_proto.message(proto_message_name)
    model_cls = _model_for(proto_message_name)
    original = data.draw(strategies.message(descriptor), label=proto_message_name)

    # protobuf's ProtoJSON -> model -> ProtoJSON is the identity (up to timestamp/number spelling).
    proto_json = json_format.MessageToDict(original)
    model = model_cls.from_wire(proto_json)
    wire = model.to_wire()
    expected = dict(proto_json)
    if proto_message_name == "ListTasksResponse":  # the spec makes all four fields always present
        expected = {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0, **expected}
    emitted_timestamps: list[str] = []
    assert _same_json(_canonical(descriptor, wire, emitted_timestamps), _canonical(descriptor, expected))
    for stamp in emitted_timestamps:
        assert MS_TIMESTAMP.fullmatch(stamp), f"timestamp not in UTC millisecond form: {stamp!r}"
    assert json.loads(model.to_json()) == wire

    # The original proto field names (snake_case) parse to the same model.
    snake = json_format.MessageToDict(original, preserving_proto_field_name=True)
    assert _same_json(model_cls.from_wire(snake).to_wire(), wire)

    # What the model emits is valid ProtoJSON with no unknown field, and it is the same message.
    reparsed = json_format.ParseDict(wire, a2a_proto.message_class(descriptor)(), ignore_unknown_fields=False)
    assert reparsed == original


# --------------------------------------------------------------------------------------------------
# c. Wire rules
# --------------------------------------------------------------------------------------------------

TEXT_PART = {"text": "hi"}
USER_MESSAGE = {"messageId": "m1", "role": "ROLE_USER", "parts": [TEXT_PART]}
WORKING = {"state": "TASK_STATE_WORKING"}


def _keys(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        pytest.param(
            Message(
                message_id="m1",
                context_id="c1",
                task_id="t1",
                role=Role.ROLE_AGENT,
                parts=[Part(text="x", media_type="text/plain")],
                reference_task_ids=["t0"],
            ),
            {
                "messageId": "m1",
                "contextId": "c1",
                "taskId": "t1",
                "role": "ROLE_AGENT",
                "parts": [{"text": "x", "mediaType": "text/plain"}],
                "referenceTaskIds": ["t0"],
            },
            id="message",
        ),
        pytest.param(
            TaskArtifactUpdateEvent.from_wire(
                {
                    "task_id": "t1",
                    "context_id": "c1",
                    "artifact": {"artifact_id": "a1", "parts": [TEXT_PART]},
                    "last_chunk": True,
                }
            ),
            {
                "taskId": "t1",
                "contextId": "c1",
                "artifact": {"artifactId": "a1", "parts": [TEXT_PART]},
                "lastChunk": True,
            },
            id="artifact-update",
        ),
        pytest.param(
            SendMessageConfiguration(accepted_output_modes=["text/plain"], return_immediately=True),
            {"acceptedOutputModes": ["text/plain"], "returnImmediately": True},
            id="send-configuration",
        ),
    ],
)
def test_output_is_camel_case(model: ProtoModel, expected: dict[str, Any]) -> None:
    wire = model.to_wire()
    assert wire == expected
    assert not any("_" in key for key in _keys(wire))
    assert json.loads(model.to_json()) == expected


@pytest.mark.parametrize(
    ("model_cls", "snake", "camel"),
    [
        pytest.param(
            Message,
            {
                "message_id": "m1",
                "context_id": "c1",
                "role": "ROLE_USER",
                "parts": [{"media_type": "a/b", "text": ""}],
            },
            {
                "messageId": "m1",
                "contextId": "c1",
                "role": "ROLE_USER",
                "parts": [{"mediaType": "a/b", "text": ""}],
            },
            id="message",
        ),
        pytest.param(
            models.ListTaskPushNotificationConfigsRequest,
            {"task_id": "t1", "page_size": 5, "page_token": "p"},
            {"taskId": "t1", "pageSize": 5, "pageToken": "p"},
            id="tck-list-push-configs",
        ),
        pytest.param(
            ListTasksRequest,
            {"context_id": "c", "history_length": 0, "status_timestamp_after": "2025-01-01T00:00:00Z"},
            {"contextId": "c", "historyLength": 0, "statusTimestampAfter": "2025-01-01T00:00:00.000Z"},
            id="list-tasks",
        ),
        pytest.param(
            AgentCapabilities,
            {"push_notifications": True, "extended_agent_card": False},
            {"pushNotifications": True, "extendedAgentCard": False},
            id="capabilities",
        ),
    ],
)
def test_snake_case_input_accepted(model_cls: type[ProtoModel], snake: dict[str, Any], camel: dict[str, Any]) -> None:
    assert model_cls.from_wire(snake).to_wire() == camel
    assert model_cls.from_wire(camel).to_wire() == camel


@pytest.mark.parametrize(
    ("model_cls", "data", "expected"),
    [
        pytest.param(Part, {"text": "a", "kind": "text"}, {"text": "a"}, id="v03-kind"),
        pytest.param(
            models.TaskStatusUpdateEvent,
            {"taskId": "t", "contextId": "c", "status": WORKING, "final": True},
            {"taskId": "t", "contextId": "c", "status": WORKING},
            id="v03-final",
        ),
        pytest.param(
            Task,
            {"id": "t", "status": {**WORKING, "future": {"x": 1}}, "generation": "3"},
            {"id": "t", "status": WORKING},
            id="nested-and-future",
        ),
    ],
)
def test_unknown_fields_ignored(model_cls: type[ProtoModel], data: dict[str, Any], expected: dict[str, Any]) -> None:
    assert model_cls.from_wire(data).to_wire() == expected


@pytest.mark.parametrize(
    ("model_cls", "data"),
    [
        pytest.param(Message, {**USER_MESSAGE, "role": "user"}, id="role-user"),
        pytest.param(Message, {**USER_MESSAGE, "role": "agent"}, id="role-agent"),
        pytest.param(Message, {**USER_MESSAGE, "role": "role_user"}, id="role-lowercase"),
        pytest.param(TaskStatus, {"state": "completed"}, id="state-completed"),
        pytest.param(TaskStatus, {"state": "input-required"}, id="state-input-required"),
        pytest.param(TaskStatus, {"state": "TASK_STATE_CANCELLED"}, id="state-v03-cancelled"),
        pytest.param(ListTasksRequest, {"status": "working"}, id="filter-working"),
        # UNSPECIFIED in a REQUIRED enum counts as missing.
        pytest.param(Message, {**USER_MESSAGE, "role": "ROLE_UNSPECIFIED"}, id="role-unspecified"),
        pytest.param(Message, {**USER_MESSAGE, "role": 0}, id="role-0"),
        pytest.param(TaskStatus, {"state": "TASK_STATE_UNSPECIFIED"}, id="state-unspecified"),
        pytest.param(TaskStatus, {"state": 99}, id="state-out-of-range"),
        pytest.param(TaskStatus, {"state": True}, id="state-bool"),
    ],
)
def test_invalid_enum_values_rejected(model_cls: type[ProtoModel], data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model_cls.from_wire(data)


@pytest.mark.parametrize(
    ("model_cls", "data", "expected"),
    [
        pytest.param(Message, {**USER_MESSAGE, "role": 1}, USER_MESSAGE, id="role"),
        pytest.param(TaskStatus, {"state": 3}, {"state": "TASK_STATE_COMPLETED"}, id="state"),
        pytest.param(TaskStatus, {"state": 8}, {"state": "TASK_STATE_AUTH_REQUIRED"}, id="state-last"),
        pytest.param(ListTasksRequest, {"status": 0}, {}, id="filter-unspecified-omitted"),
        pytest.param(ListTasksRequest, {"status": 5}, {"status": "TASK_STATE_CANCELED"}, id="filter"),
    ],
)
def test_enum_numbers_accepted(model_cls: type[ProtoModel], data: dict[str, Any], expected: dict[str, Any]) -> None:
    assert model_cls.from_wire(data).to_wire() == expected


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"text": "a", "url": "https://x"}, id="text+url"),
        pytest.param({"text": "a", "data": None}, id="text+null-data"),
        pytest.param({"raw": "AA==", "data": {}}, id="raw+data"),
        pytest.param({"text": "", "raw": ""}, id="empty-text+empty-raw"),
        pytest.param({}, id="none"),
        pytest.param({"mediaType": "text/plain", "filename": "a.txt"}, id="only-common-fields"),
        pytest.param({"kind": "file", "file": {"uri": "https://x/a.pdf"}}, id="v03-file-part"),
        pytest.param({"text": None}, id="null-text-is-unset"),
    ],
)
def test_part_needs_exactly_one_content(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Part.from_wire(data)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(None, id="null"),
        pytest.param({}, id="empty-object"),
        pytest.param({"k": {"n": None, "l": [1.5, "s", True]}}, id="object"),
        pytest.param([], id="empty-array"),
        pytest.param([1, "a", None, False], id="array"),
        pytest.param("text", id="string"),
        pytest.param("", id="empty-string"),
        pytest.param(0, id="zero"),
        pytest.param(-2.5, id="number"),
        pytest.param(False, id="false"),
    ],
)
def test_part_data_is_any_json_value(a2a_proto: A2AProto, value: Any) -> None:
    part = Part.from_wire({"data": value, "mediaType": "application/json"})
    assert part.to_wire() == {"data": value, "mediaType": "application/json"}
    proto = json_format.ParseDict(part.to_wire(), a2a_proto.message_class(a2a_proto.message("Part"))())
    assert proto.WhichOneof("content") == "data"


def test_null_data_part_built_in_python_is_a_data_part() -> None:
    assert Part(data=None).to_wire() == {"data": None}
    assert Message.from_wire({**USER_MESSAGE, "parts": [{"data": None}]}).to_wire()["parts"] == [{"data": None}]


@pytest.mark.parametrize(
    "encoded",
    [
        pytest.param("+/8=", id="standard"),
        pytest.param("+/8", id="standard-unpadded"),
        pytest.param("-_8=", id="url-safe"),
        pytest.param("-_8", id="url-safe-unpadded"),
    ],
)
def test_raw_accepts_any_base64_and_emits_standard_padded(encoded: str) -> None:
    part = Part.from_wire({"raw": encoded, "filename": "b.bin"})
    assert part.raw == b"\xfb\xff"
    assert part.to_wire() == {"raw": "+/8=", "filename": "b.bin"}
    assert base64.b64decode(part.to_wire()["raw"], validate=True) == b"\xfb\xff"


def test_empty_raw_is_a_set_raw_part() -> None:
    assert Part.from_wire({"raw": ""}).to_wire() == {"raw": ""}


@pytest.mark.parametrize(
    "encoded", ["not base64!", "A", "AA=A", 12], ids=["punctuation", "short", "inner-pad", "number"]
)
def test_raw_rejects_invalid_base64(encoded: Any) -> None:
    with pytest.raises(ValidationError):
        Part.from_wire({"raw": encoded})


@pytest.mark.parametrize(
    ("text", "emitted"),
    [
        pytest.param("2025-01-01T02:00:00+02:00", "2025-01-01T00:00:00.000Z", id="positive-offset"),
        pytest.param("2024-12-31T19:00:00.5-05:00", "2025-01-01T00:00:00.500Z", id="negative-offset"),
        pytest.param("2025-01-01T00:00:00Z", "2025-01-01T00:00:00.000Z", id="seconds-only"),
        pytest.param("2025-01-01T00:00:00.123456789Z", "2025-01-01T00:00:00.123Z", id="nanoseconds"),
        pytest.param("2025-06-30T23:59:59.999+00:00", "2025-06-30T23:59:59.999Z", id="zero-offset"),
        pytest.param("0005-03-01T00:00:00Z", "0005-03-01T00:00:00.000Z", id="four-digit-year"),
        pytest.param("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z", id="max"),
    ],
)
def test_timestamps_normalized_to_utc_milliseconds(text: str, emitted: str) -> None:
    status = TaskStatus.from_wire({**WORKING, "timestamp": text})
    assert status.to_wire() == {**WORKING, "timestamp": emitted}
    # protobuf reads the same instant (truncated to the millisecond) from both spellings.
    given_ts, emitted_ts = timestamp_pb2.Timestamp(), timestamp_pb2.Timestamp()
    given_ts.FromJsonString(text)
    given_ts.nanos -= given_ts.nanos % 1_000_000
    emitted_ts.FromJsonString(emitted)
    assert given_ts == emitted_ts


def test_timestamp_built_in_python_with_offset_is_emitted_in_utc() -> None:
    when = datetime(2025, 1, 1, 5, 30, 0, 250_999, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    status = TaskStatus(state=TaskState.TASK_STATE_WORKING, timestamp=when)
    assert status.to_wire()["timestamp"] == "2025-01-01T00:00:00.250Z"
    assert TaskStatus.from_wire(status.to_wire()).timestamp == datetime(2025, 1, 1, 0, 0, 0, 250_000, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("2025-01-01T00:00:00", id="no-offset"),
        pytest.param("yesterday", id="not-a-timestamp"),
        pytest.param("0001-01-01T00:00:00+01:00", id="before-0001"),
        pytest.param("9999-12-31T23:59:59-01:00", id="after-9999"),
        pytest.param(1735689600, id="number"),
    ],
)
def test_invalid_timestamps_rejected(text: Any) -> None:
    with pytest.raises(ValidationError):
        TaskStatus.from_wire({**WORKING, "timestamp": text})


@pytest.mark.parametrize(
    ("model_cls", "data"),
    [
        pytest.param(SendMessageConfiguration, {"historyLength": 0}, id="send-history-length-0"),
        pytest.param(models.GetTaskRequest, {"id": "t", "historyLength": 0}, id="get-history-length-0"),
        pytest.param(ListTasksRequest, {"historyLength": 0, "includeArtifacts": False}, id="list-defaults"),
        pytest.param(AgentCapabilities, {"streaming": False}, id="streaming-false"),
        pytest.param(
            AgentCapabilities,
            {"streaming": False, "pushNotifications": False, "extendedAgentCard": False},
            id="all-capabilities-false",
        ),
        pytest.param(
            AgentCard,
            {
                "name": "n",
                "description": "d",
                "version": "1",
                "capabilities": {},
                "documentationUrl": "",
                "iconUrl": "",
            },
            id="card-empty-urls",
        ),
    ],
)
def test_optional_fields_emitted_when_set_to_default(model_cls: type[ProtoModel], data: dict[str, Any]) -> None:
    assert model_cls.from_wire(data).to_wire() == data


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        pytest.param(SendMessageConfiguration(), {}, id="send-configuration"),
        pytest.param(ListTasksRequest(), {}, id="list-tasks"),
        pytest.param(AgentCapabilities(), {}, id="capabilities"),
        pytest.param(
            TaskArtifactUpdateEvent.from_wire(
                {
                    "taskId": "t",
                    "contextId": "c",
                    "artifact": {"artifactId": "a", "parts": [TEXT_PART], "name": ""},
                    "append": False,
                    "lastChunk": False,
                }
            ),
            {"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [TEXT_PART]}},
            id="artifact-update-defaults",
        ),
        pytest.param(
            Task.from_wire(
                {
                    "id": "t",
                    "contextId": "",
                    "status": {**WORKING, "message": None},
                    "artifacts": [{"artifactId": "a", "parts": [TEXT_PART], "name": "", "extensions": []}],
                    "history": [],
                }
            ),
            {"id": "t", "status": WORKING, "artifacts": [{"artifactId": "a", "parts": [TEXT_PART]}]},
            id="no-presence-defaults",
        ),
    ],
)
def test_unset_and_default_fields_omitted(model: ProtoModel, expected: dict[str, Any]) -> None:
    assert model.to_wire() == expected


def test_optional_fields_keep_presence() -> None:
    assert SendMessageConfiguration(history_length=0).to_wire() == {"historyLength": 0}
    assert SendMessageConfiguration().to_wire() == {}
    assert AgentCapabilities(streaming=False).to_wire() == {"streaming": False}
    assert AgentCapabilities().to_wire() == {}


@pytest.mark.parametrize(
    "data",
    [pytest.param({}, id="empty"), pytest.param({"nextPageToken": None, "tasks": None}, id="nulls")],
)
def test_list_tasks_response_always_emits_its_four_fields(data: dict[str, Any]) -> None:
    expected = {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}
    assert ListTasksResponse.from_wire(data).to_wire() == expected
    assert ListTasksResponse().to_wire() == expected


def test_list_tasks_response_tasks_use_normal_omission() -> None:
    response = ListTasksResponse(tasks=[Task.from_wire({"id": "t", "status": WORKING})], page_size=50)
    assert response.to_wire() == {
        "tasks": [{"id": "t", "status": WORKING}],
        "nextPageToken": "",
        "pageSize": 50,
        "totalSize": 0,
    }


@pytest.mark.parametrize(
    ("model_cls", "data", "expected"),
    [
        pytest.param(
            Task,
            {
                "id": "t",
                "contextId": None,
                "status": WORKING,
                "artifacts": None,
                "history": None,
                "metadata": None,
            },
            {"id": "t", "status": WORKING},
            id="task",
        ),
        pytest.param(TaskStatus, {**WORKING, "message": None, "timestamp": None}, WORKING, id="status"),
        pytest.param(AgentCapabilities, {"streaming": None, "extensions": None}, {}, id="capabilities"),
        pytest.param(Part, {"text": None, "data": None}, {"data": None}, id="value-null-stays"),
    ],
)
def test_null_means_default_except_for_value(
    model_cls: type[ProtoModel], data: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert model_cls.from_wire(data).to_wire() == expected


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"id": None, "status": WORKING}, id="required-string"),
        pytest.param({"id": "t", "status": None}, id="required-message"),
    ],
)
def test_null_required_field_is_missing(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Task.from_wire(data)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({"taskId": "t", "pageSize": "10"}, 10, id="numeric-string"),
        pytest.param({"taskId": "t", "pageSize": 10.0}, 10, id="integral-float"),
    ],
)
def test_int32_accepts_protojson_number_forms(data: dict[str, Any], expected: int) -> None:
    assert models.ListTaskPushNotificationConfigsRequest.from_wire(data).page_size == expected


@pytest.mark.parametrize("page_size", [2**31, -(2**31) - 1, 1.5, "ten"], ids=["over", "under", "fraction", "word"])
def test_int32_rejects_out_of_range_and_non_integers(page_size: Any) -> None:
    with pytest.raises(ValidationError):
        ListTasksResponse.from_wire({"pageSize": page_size})
