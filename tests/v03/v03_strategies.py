"""Hypothesis strategies and oracle helpers shared by the v0.3 conversion tests.

The strategies build v1.0 *wire* dicts (what ``to_wire()`` emits) of the values that both versions
can express, so a v1.0 -> v0.3 -> v1.0 trip must give them back unchanged:

* no ``data_part_compat`` key in part metadata (the wrapping marker);
* ``mediaType``/``filename`` only on file parts (v0.3 text and data parts have no such fields);
* metadata absent or non-empty (an empty object beside a wrapped data value comes back absent);
* for REST, no ``referenceTaskIds`` (not in the v0.3 proto).

Numbers stay within 2**53 so protobuf's ``Struct`` (doubles) holds them exactly.
"""

from __future__ import annotations

import base64
import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message as PbMessage
from hypothesis import strategies as st

from a2a_serverless.models import format_timestamp
from testkit.json_paths import node_paths

EXACT = 2**53

names = st.text(min_size=1, max_size=8)
# Ids that go into a REST resource name ("tasks/{id}/pushNotificationConfigs/{id}") have no "/".
resource_ids = names.filter(lambda s: "/" not in s)
optional_text = st.none() | names
# Strings that travel in HTTP headers (a2a_serverless.models._base): printable ASCII (media type,
# token, credentials) or without control characters (file name, webhook URL).
header_names = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=8)
optional_header_text = st.none() | header_names
plain_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cc",)), min_size=1, max_size=8)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-EXACT, EXACT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
metadata = st.none() | st.dictionaries(
    st.text(max_size=6).filter(lambda k: k != "data_part_compat"), json_values, min_size=1, max_size=3
)
timestamps = st.integers(0, 200 * 365 * 24 * 3600 * 1000).map(
    lambda ms: format_timestamp(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms))
)
STATES = (
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
)


def _without_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None and v != [] and v is not False}


@st.composite
def parts(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "raw", "url", "data"]))
    part: dict[str, Any]
    if kind == "text":
        part = {"text": draw(st.text(max_size=10))}
    elif kind == "data":
        part = {"data": draw(json_values)}
    else:
        content = base64.b64encode(draw(st.binary(max_size=12))).decode() if kind == "raw" else draw(names)
        media_type, filename = draw(optional_header_text), draw(st.none() | plain_names)
        part = _without_none(**{kind: content, "mediaType": media_type, "filename": filename})
    return {**part, **_without_none(metadata=draw(metadata))}


@st.composite
def messages(draw: st.DrawFn, *, rest: bool = False) -> dict[str, Any]:
    return _without_none(
        messageId=draw(names),
        contextId=draw(optional_text),
        taskId=draw(optional_text),
        role=draw(st.sampled_from(["ROLE_USER", "ROLE_AGENT"])),
        parts=draw(st.lists(parts(), min_size=1, max_size=3)),
        metadata=draw(metadata),
        extensions=draw(st.lists(names, max_size=2)),
        referenceTaskIds=None if rest else draw(st.lists(names, max_size=2)),
    )


@st.composite
def statuses(draw: st.DrawFn, *, rest: bool = False) -> dict[str, Any]:
    return _without_none(
        state=draw(st.sampled_from(STATES)),
        message=draw(st.none() | messages(rest=rest)),
        timestamp=draw(st.none() | timestamps),
    )


@st.composite
def artifacts(draw: st.DrawFn) -> dict[str, Any]:
    return _without_none(
        artifactId=draw(names),
        name=draw(optional_text),
        description=draw(optional_text),
        parts=draw(st.lists(parts(), min_size=1, max_size=3)),
        metadata=draw(metadata),
        extensions=draw(st.lists(names, max_size=2)),
    )


@st.composite
def tasks(draw: st.DrawFn, *, rest: bool = False) -> dict[str, Any]:
    return _without_none(
        id=draw(names),
        contextId=draw(optional_text),
        status=draw(statuses(rest=rest)),
        artifacts=draw(st.lists(artifacts(), max_size=2)),
        history=draw(st.lists(messages(rest=rest), max_size=2)),
        metadata=draw(metadata),
    )


@st.composite
def stream_events(draw: st.DrawFn, *, rest: bool = False) -> dict[str, Any]:
    kind = draw(st.sampled_from(["task", "message", "statusUpdate", "artifactUpdate"]))
    if kind == "task":
        return {"task": draw(tasks(rest=rest))}
    if kind == "message":
        return {"message": draw(messages(rest=rest))}
    ids = {"taskId": draw(names), "contextId": draw(names)}
    if kind == "statusUpdate":
        return {"statusUpdate": {**ids, **_without_none(status=draw(statuses(rest=rest)), metadata=draw(metadata))}}
    return {
        "artifactUpdate": {
            **ids,
            **_without_none(
                artifact=draw(artifacts()),
                append=draw(st.booleans()),
                lastChunk=draw(st.booleans()),
                metadata=draw(metadata),
            ),
        }
    }


@st.composite
def push_configs(draw: st.DrawFn) -> dict[str, Any]:
    auth = draw(
        st.none() | st.builds(lambda s, c: _without_none(scheme=s, credentials=c), header_names, optional_header_text)
    )
    return _without_none(
        id=draw(resource_ids),
        taskId=draw(resource_ids),
        url=draw(plain_names),
        token=draw(optional_header_text),
        authentication=auth,
    )


@st.composite
def send_requests(draw: st.DrawFn, *, rest: bool = False) -> dict[str, Any]:
    inline = draw(st.none() | push_configs())
    if inline is not None:
        inline.pop("taskId")
        if draw(st.booleans()):
            inline.pop("id")
    configuration = draw(
        st.none()
        | st.builds(
            lambda modes, history, blocking: _without_none(
                acceptedOutputModes=modes,
                taskPushNotificationConfig=inline,
                historyLength=history,
                returnImmediately=blocking,
            ),
            st.lists(names, max_size=2),
            st.none() | st.integers(1, 50),
            st.booleans(),
        )
    )
    return _without_none(message=draw(messages(rest=rest)), configuration=configuration, metadata=draw(metadata))


# --------------------------------------------------------------------------- junk


junk_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=6)
    | st.binary(max_size=4)
    | st.sampled_from(["text", "file", "data", "task", "message", "status-update", "user", "ROLE_USER", 1, 0, ""])
)
junk = st.recursive(
    junk_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["kind", "text", "file", "data", "bytes", "uri", "role", "parts", "content", "id", "taskId", "message"]
            )
            | st.text(max_size=4),
            inner,
            max_size=4,
        )
        | st.tuples(inner)
    ),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A valid input with one node replaced by junk, or one object key removed."""
    value = copy.deepcopy(draw(valid))
    path = draw(st.sampled_from(node_paths(value)))
    if not path:
        return draw(junk)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(junk)
    return value


# --------------------------------------------------------------------------- protobuf oracles


def pb_dict(message: PbMessage) -> dict[str, Any]:
    """ProtoJSON of a protobuf message, for comparing values parsed by different routes."""
    return json_format.MessageToDict(message)


def parse_strict(data: Any, message: PbMessage) -> PbMessage:
    """``ParseDict`` as the v0.3 SDK REST client calls it: unknown fields are errors."""
    return json_format.ParseDict(data, message)
