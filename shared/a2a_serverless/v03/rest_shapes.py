"""The v0.3 REST shapes <-> v1.0 ProtoJSON dicts.

v0.3's HTTP+JSON binding is not the JSON-RPC shape: its bodies are ProtoJSON of the v0.3 proto
(``a2a_v0_3.proto``, package ``a2a.v1``). Messages carry ``content`` (not ``parts``); a Part is
``{text | file: {fileWithUri | fileWithBytes, mimeType, name} | data: {data: <object>}, metadata}``;
enums are ``TASK_STATE_*`` (with ``TASK_STATE_CANCELLED``) and ``ROLE_*``; a status's message and
a send request's message both have the JSON name ``message`` (proto names ``update``/``request``).

Input is read as ProtoJSON parsers read it: camelCase or proto names, enums by name or number,
null as absent. Output holds only fields of the v0.3 proto, because the v0.3 SDK client parses it
with protobuf's ``ParseDict`` and rejects unknown fields: so no ``referenceTaskIds`` (not in the
v0.3 proto), no ``kind``, no ``mediaType``.

File bytes follow the v0.3 SDKs (Python, JS and Java alike): ``fileWithBytes`` holds the *base64
text* of the content as its bytes, so on the wire the content is base64 twice. Input that is not
base64 twice is taken as the content itself (a client that encoded once).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

from ..json_types import Json, JsonValue
from ..models import Message, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig
from ._common import (
    FINAL_STATES,
    artifact_in,
    artifact_out,
    at,
    b64decode,
    bad,
    copy_fields,
    copy_present,
    file_names_in,
    file_names_out,
    get,
    history_length_in,
    obj,
    opt_array,
    opt_bool,
    opt_obj,
    opt_str,
    push_fields_in,
    push_fields_out,
    status_out,
    unwrap_data,
    wrap_data,
)

__all__ = [
    "message_in",
    "message_out",
    "push_config_create_in",
    "push_config_out",
    "push_configs_out",
    "send_request_in",
    "send_result_out",
    "stream_event_in",
    "stream_event_out",
    "task_in",
    "task_out",
]

_BODY = "(body)"

# v0.3 proto enums: v1.0 name -> v0.3 name. Numbers are the same in both protos.
_STATES = (
    ("TASK_STATE_SUBMITTED", "TASK_STATE_SUBMITTED"),
    ("TASK_STATE_WORKING", "TASK_STATE_WORKING"),
    ("TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"),
    ("TASK_STATE_FAILED", "TASK_STATE_FAILED"),
    ("TASK_STATE_CANCELED", "TASK_STATE_CANCELLED"),
    ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_INPUT_REQUIRED"),
    ("TASK_STATE_REJECTED", "TASK_STATE_REJECTED"),
    ("TASK_STATE_AUTH_REQUIRED", "TASK_STATE_AUTH_REQUIRED"),
)
_STATE_OUT = dict(_STATES)
_STATE_IN: dict[str | int, str] = {
    **{v03: v1 for v1, v03 in _STATES},
    **{number: v1 for number, (v1, _) in enumerate(_STATES, start=1)},
}
_ROLE_IN: dict[str | int, str] = {"ROLE_USER": "ROLE_USER", "ROLE_AGENT": "ROLE_AGENT", 1: "ROLE_USER", 2: "ROLE_AGENT"}

_CONFIG_NAME = re.compile(r"tasks/[^/]+/pushNotificationConfigs/([^/]+)")


# --------------------------------------------------------------------------- requests (in)


def send_request_in(body: JsonValue) -> Json:
    """v0.3 ``SendMessageRequest`` -> v1.0 ``SendMessageRequest``."""
    data = obj(body, _BODY)
    out: Json = {"message": message_in(get(data, "request", json_name="message"))}
    config = opt_obj(get(data, "configuration"), "configuration")
    if config is not None:
        out["configuration"] = _configuration_in(config, "configuration")
    copy_fields(data, out, "metadata")
    return out


def push_config_create_in(body: JsonValue, task_id: str) -> Json:
    """``CreateTaskPushNotificationConfigRequest`` ``{parent, configId, config}`` (what the v0.3 SDK
    client sends) or the bare ``TaskPushNotificationConfig`` ``{name, pushNotificationConfig}``
    (the proto's ``body: "config"``) -> flat v1.0 ``TaskPushNotificationConfig``.

    The config id is the first of ``configId``, ``pushNotificationConfig.id``, the last segment of
    ``config.name``, and the task id (v0.3's default config). The task id is the path's, whatever
    ``parent`` or ``name`` say."""
    data = obj(body, _BODY)
    config_id: str | None = None
    config, path = data, ""
    if get(data, "config") is not None:
        config_id = opt_str(get(data, "configId"), "configId")
        config, path = obj(get(data, "config"), "config"), "config"
    fields = push_fields_in(get(config, "pushNotificationConfig"), at(path, "pushNotificationConfig"))
    name = opt_str(get(config, "name"), at(path, "name"))
    return {
        "taskId": task_id,
        **fields,
        "id": config_id or fields.get("id") or _config_name_id(name) or task_id,
    }


def _config_name_id(name: str | None) -> str | None:
    # The v0.3 SDK client names an id-less config ".../pushNotificationConfigs/None" (a formatted
    # Python None): that is no id.
    match = _CONFIG_NAME.fullmatch(name or "")
    return match.group(1) if match and match.group(1) != "None" else None


def _configuration_in(config: Json, path: str) -> Json:
    """v0.3 ``SendMessageConfiguration``. ``returnImmediately = not blocking``, read as the v0.3
    reference server reads its proto: ``blocking`` is a proto3 bool, which ProtoJSON omits when
    false, so a configuration without it asks *not* to block (that is what the a2a-sdk 0.3 client
    sends when it polls). A request with no configuration at all blocks (v1.0's default)."""
    out: Json = {}
    copy_fields(config, out, "acceptedOutputModes")
    history = history_length_in(get(config, "historyLength"), at(path, "historyLength"))
    if history is not None:
        out["historyLength"] = history
    push = get(config, "pushNotification")
    if push is not None:
        out["taskPushNotificationConfig"] = push_fields_in(push, at(path, "pushNotification"))
    blocking = opt_bool(get(config, "blocking"), at(path, "blocking"))
    out["returnImmediately"] = not blocking
    return out


# --------------------------------------------------------------------------- objects (in)


def message_in(data: JsonValue, path: str = "message") -> Json:
    """A v0.3 proto ``Message`` -> v1.0 ``Message``."""
    message = obj(data, path)
    role = get(message, "role")
    if role is None:
        raise bad(at(path, "role"), "Field required")
    if not isinstance(role, (str, int)) or isinstance(role, bool) or role not in _ROLE_IN:
        raise bad(at(path, "role"), "must be ROLE_USER or ROLE_AGENT")
    out: Json = {}
    copy_fields(message, out, "messageId", "contextId", "taskId")
    out["role"] = _ROLE_IN[role]
    content_path = at(path, "content")
    content = opt_array(get(message, "content"), content_path)
    out["parts"] = [_part_in(p, at(content_path, i)) for i, p in enumerate(content)]
    copy_fields(message, out, "metadata", "extensions")
    return out


def task_in(data: JsonValue, path: str = "task") -> Json:
    """A v0.3 proto ``Task`` -> v1.0 ``Task`` (the reverse of :func:`task_out`)."""
    task = obj(data, path)
    out: Json = {}
    copy_fields(task, out, "id", "contextId")
    out["status"] = _status_in(get(task, "status"), at(path, "status"))
    artifacts_path, history_path = at(path, "artifacts"), at(path, "history")
    artifacts = opt_array(get(task, "artifacts"), artifacts_path)
    if artifacts:
        out["artifacts"] = [artifact_in(a, at(artifacts_path, i), _part_in) for i, a in enumerate(artifacts)]
    history = opt_array(get(task, "history"), history_path)
    if history:
        out["history"] = [message_in(m, at(history_path, i)) for i, m in enumerate(history)]
    copy_fields(task, out, "metadata")
    return out


def stream_event_in(data: JsonValue, path: str = "") -> Json:
    """A v0.3 ``StreamResponse`` (or ``SendMessageResponse``) -> v1.0 ``StreamResponse`` (the reverse
    of :func:`stream_event_out`; a status update's ``final`` has no v1.0 field)."""
    event = obj(data, path or _BODY)
    members = [k for k in ("task", "message", "statusUpdate", "artifactUpdate") if _member(event, k) is not None]
    if len(members) != 1:
        raise bad(path or _BODY, "must have exactly one of task, message, statusUpdate, artifactUpdate")
    member = members[0]
    value, member_path = _member(event, member), at(path, member)
    if member == "task":
        return {"task": task_in(value, member_path)}
    if member == "message":
        return {"message": message_in(value, member_path)}
    update = obj(value, member_path)
    out: Json = {}
    copy_fields(update, out, "taskId", "contextId")
    if member == "statusUpdate":
        out["status"] = _status_in(get(update, "status"), at(member_path, "status"))
        copy_fields(update, out, "metadata")
    else:
        out["artifact"] = artifact_in(get(update, "artifact"), at(member_path, "artifact"), _part_in)
        copy_fields(update, out, "append", "lastChunk", "metadata")
    return {member: out}


def _member(event: Json, name: str) -> JsonValue:
    return get(event, "msg", json_name="message") if name == "message" else get(event, name)


def _part_in(data: JsonValue, path: str) -> Json:
    part = obj(data, path)
    members = [k for k in ("text", "file", "data") if get(part, k) is not None]
    if len(members) != 1:
        raise bad(path, "must have exactly one of text, file, data")
    metadata = opt_obj(get(part, "metadata"), at(path, "metadata"))
    out: Json
    if members == ["text"]:
        text = opt_str(get(part, "text"), at(path, "text"))
        out = {"text": text}
    elif members == ["file"]:
        out = _file_in(get(part, "file"), at(path, "file"))
    else:
        data_path = at(path, "data")
        wrapper = obj(get(part, "data"), data_path)
        value, metadata = unwrap_data(opt_obj(get(wrapper, "data"), at(data_path, "data")) or {}, metadata)
        out = {"data": value}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _file_in(data: JsonValue, path: str) -> Json:
    file = obj(data, path)
    content, uri = get(file, "fileWithBytes"), get(file, "fileWithUri")
    if (content is None) == (uri is None):
        raise bad(path, "must have exactly one of fileWithBytes, fileWithUri")
    out: Json
    if content is not None:
        raw = b64decode(content) if isinstance(content, str) else None
        if raw is None:
            raise bad(at(path, "fileWithBytes"), "must be a base64 string")
        out = {"raw": base64.b64encode(_unwrap_base64_text(raw)).decode("ascii")}
    else:
        out = {"url": opt_str(uri, at(path, "fileWithUri"))}
    return file_names_in(file, path, out)


def _unwrap_base64_text(raw: bytes) -> bytes:
    """The content, when ``raw`` is its base64 text (the v0.3 SDK convention); else ``raw`` itself."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return raw
    decoded = b64decode(text) if text.strip() else None
    return raw if decoded is None else decoded


def _status_in(data: JsonValue, path: str) -> Json:
    status = obj(data, path)
    state = get(status, "state")
    state_path = at(path, "state")
    if state is None or state in ("TASK_STATE_UNSPECIFIED", 0):
        # v1.0's TASK_STATE_UNSPECIFIED is "not set", which a v1.0 TaskStatus may not hold.
        raise bad(state_path, "Field required")
    if not isinstance(state, (str, int)) or isinstance(state, bool) or state not in _STATE_IN:
        raise bad(state_path, f"must be one of {', '.join(_STATE_OUT.values())}")
    out: Json = {"state": _STATE_IN[state]}
    message = get(status, "update", json_name="message")
    if message is not None:
        out["message"] = message_in(message, at(path, "message"))
    copy_fields(status, out, "timestamp")
    return out


# --------------------------------------------------------------------------- responses (out)


def message_out(message: Message) -> Json:
    return _message_out(message.to_wire())


def task_out(task: Task) -> Json:
    return _task_out(task.to_wire())


def send_result_out(result: SendMessageResponse) -> Json:
    """v0.3 ``SendMessageResponse``: ``{"task": ...}`` or ``{"message": ...}``."""
    wire = result.to_wire()
    if "task" in wire:
        return {"task": _task_out(wire["task"])}
    return {"message": _message_out(wire["message"])}


def stream_event_out(event: StreamResponse) -> Json:
    """v0.3 ``StreamResponse``. Its status update has ``final``, which v1.0 dropped: true in
    terminal and interrupted states, where the stream ends."""
    wire = event.to_wire()
    if "task" in wire:
        return {"task": _task_out(wire["task"])}
    if "message" in wire:
        return {"message": _message_out(wire["message"])}
    if "statusUpdate" in wire:
        update = wire["statusUpdate"]
        status_update: Json = {
            "taskId": update["taskId"],
            "contextId": update["contextId"],
            "status": status_out(update["status"], _STATE_OUT, _message_out),
            "final": update["status"]["state"] in FINAL_STATES,
        }
        copy_present(update, status_update, "metadata")
        return {"statusUpdate": status_update}
    update = wire["artifactUpdate"]
    artifact_update: Json = {
        "taskId": update["taskId"],
        "contextId": update["contextId"],
        "artifact": artifact_out(update["artifact"], _part_out),
    }
    copy_present(update, artifact_update, "append", "lastChunk", "metadata")
    return {"artifactUpdate": artifact_update}


def push_config_out(config: TaskPushNotificationConfig) -> Json:
    """``{name: "tasks/{taskId}/pushNotificationConfigs/{id}", pushNotificationConfig}``."""
    wire = config.to_wire()
    name = f"tasks/{wire.get('taskId', '')}/pushNotificationConfigs/{wire.get('id', '')}"
    return {"name": name, "pushNotificationConfig": push_fields_out(wire)}


def push_configs_out(configs: Sequence[TaskPushNotificationConfig], next_page_token: str) -> Json:
    """v0.3 ``ListTaskPushNotificationConfigResponse``."""
    out: Json = {"configs": [push_config_out(c) for c in configs]}
    if next_page_token:
        out["nextPageToken"] = next_page_token
    return out


def _message_out(message: Json) -> Json:
    """``referenceTaskIds`` has no field in the v0.3 proto: dropped."""
    out: Json = {"messageId": message["messageId"]}
    copy_present(message, out, "contextId", "taskId")
    out["role"] = message["role"]
    out["content"] = [_part_out(p) for p in message["parts"]]
    copy_present(message, out, "metadata", "extensions")
    return out


def _part_out(part: Json) -> Json:
    """v1.0 ``mediaType``/``filename`` have a v0.3 home on files only; on text and data they drop."""
    metadata = part.get("metadata")
    out: Json
    if "text" in part:
        out = {"text": part["text"]}
    elif "raw" in part or "url" in part:
        file: Json
        if "raw" in part:
            file = {"fileWithBytes": base64.b64encode(part["raw"].encode("ascii")).decode("ascii")}
        else:
            file = {"fileWithUri": part["url"]}
        out = {"file": file_names_out(part, file)}
    else:
        data, metadata = wrap_data(part.get("data"), metadata)
        out = {"data": {"data": data}}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _task_out(task: Json) -> Json:
    out: Json = {"id": task["id"]}
    copy_present(task, out, "contextId")
    out["status"] = status_out(task["status"], _STATE_OUT, _message_out)
    if "artifacts" in task:
        out["artifacts"] = [artifact_out(a, _part_out) for a in task["artifacts"]]
    if "history" in task:
        out["history"] = [_message_out(m) for m in task["history"]]
    copy_present(task, out, "metadata")
    return out
