"""The v0.3 JSON-RPC shapes (``specification/json/a2a.json`` of v0.3.0) <-> v1.0 ProtoJSON dicts.

v0.3 JSON-RPC objects carry a ``kind`` discriminator (``task``, ``message``, ``text``/``file``/
``data``, ``status-update``/``artifact-update``), kebab-case lower-case states and ``user``/``agent``
roles; files nest under ``file`` as ``bytes``/``uri`` with ``mimeType``/``name``. Params are flat
objects that v1.0 renamed or restructured (``blocking`` became ``returnImmediately``, push configs
became flat). The mapping, field by field, is in ``docs/v03-compat.md``.

``*_in`` functions take any JSON a client sent and return a v1.0 wire dict for the matching v1.0
model, or raise :class:`InvalidParamsError` naming the v0.3 path of what is wrong. They check what
they rename or restructure; fields that keep their name and path (``messageId``, ``metadata``...)
are copied and left for the v1.0 model to check. ``*_out`` functions take v1.0 models and return
JSON-ready v0.3 objects.
"""

from __future__ import annotations

import base64

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
    parts_in,
    push_fields_in,
    push_fields_out,
    req_str,
    status_out,
    unwrap_data,
    wrap_data,
)

__all__ = [
    "message_in",
    "message_out",
    "push_config_delete_in",
    "push_config_get_in",
    "push_config_list_in",
    "push_config_out",
    "push_config_set_in",
    "send_params_in",
    "send_result_out",
    "stream_event_in",
    "stream_event_out",
    "task_id_params_in",
    "task_in",
    "task_out",
    "task_query_in",
    "v1_state",
]

_PARAMS = "params"

_STATE_OUT = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_AUTH_REQUIRED": "auth-required",
}
_STATE_IN = {v: k for k, v in _STATE_OUT.items()}


def v1_state(state: str) -> str | None:
    """A v0.3 task state's v1.0 name (``input-required`` -> ``TASK_STATE_INPUT_REQUIRED``); None for
    any other string."""
    return _STATE_IN.get(state)


_ROLE_OUT = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}
_ROLE_IN = {v: k for k, v in _ROLE_OUT.items()}


# --------------------------------------------------------------------------- params (in)


def send_params_in(params: JsonValue) -> Json:
    """``MessageSendParams`` -> v1.0 ``SendMessageRequest``."""
    data = obj(params, _PARAMS)
    out: Json = {"message": message_in(get(data, "message"))}
    config = opt_obj(get(data, "configuration"), "configuration")
    if config is not None:
        out["configuration"] = _configuration_in(config, "configuration")
    copy_fields(data, out, "metadata")
    return out


def task_query_in(params: JsonValue) -> Json:
    """``TaskQueryParams`` -> v1.0 ``GetTaskRequest`` (v1.0 has no ``metadata`` there: dropped)."""
    data = obj(params, _PARAMS)
    out: Json = {}
    copy_fields(data, out, "id")
    history = history_length_in(get(data, "historyLength"), "historyLength")
    if history is not None:
        out["historyLength"] = history
    return out


def task_id_params_in(params: JsonValue) -> Json:
    """``TaskIdParams`` -> ``{id, metadata}`` (v1.0 ``CancelTaskRequest``; drop ``metadata`` for
    ``SubscribeToTaskRequest``)."""
    data = obj(params, _PARAMS)
    out: Json = {}
    copy_fields(data, out, "id", "metadata")
    return out


def push_config_set_in(params: JsonValue) -> Json:
    """``TaskPushNotificationConfig`` -> flat v1.0 ``TaskPushNotificationConfig``. A config without
    an id gets the task id: v0.3 has one default config per task (the v0.3 SDK does the same)."""
    data = obj(params, _PARAMS)
    task_id = req_str(get(data, "taskId"), "taskId")
    out: Json = {"taskId": task_id, **push_fields_in(get(data, "pushNotificationConfig"), "pushNotificationConfig")}
    out.setdefault("id", task_id)
    return out


def push_config_get_in(params: JsonValue) -> Json:
    """``{id: taskId, pushNotificationConfigId?}`` -> ``{taskId, id}``; no config id means the
    task's default config, whose id is the task id."""
    data = obj(params, _PARAMS)
    task_id = req_str(get(data, "id"), "id")
    config_id = opt_str(get(data, "pushNotificationConfigId"), "pushNotificationConfigId")
    return {"taskId": task_id, "id": config_id or task_id}


def push_config_list_in(params: JsonValue) -> Json:
    """``{id: taskId}`` -> ``{taskId}``."""
    data = obj(params, _PARAMS)
    return {"taskId": req_str(get(data, "id"), "id")}


def push_config_delete_in(params: JsonValue) -> Json:
    """``{id: taskId, pushNotificationConfigId}`` -> ``{taskId, id}``."""
    data = obj(params, _PARAMS)
    task_id = req_str(get(data, "id"), "id")
    return {"taskId": task_id, "id": req_str(get(data, "pushNotificationConfigId"), "pushNotificationConfigId")}


def _configuration_in(config: Json, path: str) -> Json:
    """``MessageSendConfiguration``. ``returnImmediately = not blocking``; absent ``blocking`` means
    blocking (v1.0's default), as the reference SDK reads it."""
    out: Json = {}
    copy_fields(config, out, "acceptedOutputModes")
    history = history_length_in(get(config, "historyLength"), at(path, "historyLength"))
    if history is not None:
        out["historyLength"] = history
    push = get(config, "pushNotificationConfig")
    if push is not None:
        out["taskPushNotificationConfig"] = push_fields_in(push, at(path, "pushNotificationConfig"))
    blocking = opt_bool(get(config, "blocking"), at(path, "blocking"))
    if blocking is not None:
        out["returnImmediately"] = not blocking
    return out


# --------------------------------------------------------------------------- objects (in)


def message_in(data: JsonValue, path: str = "message") -> Json:
    """A v0.3 ``Message`` -> v1.0 ``Message``."""
    message = obj(data, path)
    _check_kind(message, path, "message")
    role = get(message, "role")
    if role is None:
        raise bad(at(path, "role"), "Field required")
    if not isinstance(role, str) or role not in _ROLE_IN:
        raise bad(at(path, "role"), 'must be "user" or "agent"')
    out: Json = {}
    copy_fields(message, out, "messageId", "contextId", "taskId")
    out["role"] = _ROLE_IN[role]
    out["parts"] = parts_in(message, path, _part_in)
    copy_fields(message, out, "metadata", "extensions", "referenceTaskIds")
    return out


def task_in(data: JsonValue, path: str = "task") -> Json:
    """A v0.3 ``Task`` -> v1.0 ``Task`` (the reverse of :func:`task_out`)."""
    task = obj(data, path)
    _check_kind(task, path, "task")
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


def stream_event_in(data: JsonValue, path: str = "result") -> Json:
    """A v0.3 streaming result (Task, Message, status or artifact update) -> v1.0 ``StreamResponse``
    (the reverse of :func:`stream_event_out`; a status update's ``final`` has no v1.0 field)."""
    event = obj(data, path)
    kind = get(event, "kind")
    if kind == "task":
        return {"task": task_in(event, path)}
    if kind == "message":
        return {"message": message_in(event, path)}
    if kind == "status-update":
        status_update: Json = {}
        copy_fields(event, status_update, "taskId", "contextId")
        status_update["status"] = _status_in(get(event, "status"), at(path, "status"))
        copy_fields(event, status_update, "metadata")
        return {"statusUpdate": status_update}
    if kind == "artifact-update":
        artifact_update: Json = {}
        copy_fields(event, artifact_update, "taskId", "contextId")
        artifact_update["artifact"] = artifact_in(get(event, "artifact"), at(path, "artifact"), _part_in)
        copy_fields(event, artifact_update, "append", "lastChunk", "metadata")
        return {"artifactUpdate": artifact_update}
    raise bad(at(path, "kind"), 'must be "task", "message", "status-update" or "artifact-update"')


def _check_kind(data: Json, path: str, kind: str) -> None:
    # The schema requires ``kind``; the v0.3 SDK's models default it, so absent is accepted too.
    found = get(data, "kind")
    if found is not None and found != kind:
        raise bad(at(path, "kind"), f'must be "{kind}"')


def _part_in(data: JsonValue, path: str) -> Json:
    part = obj(data, path)
    kind = get(part, "kind")
    if kind is None:
        # Absent ``kind`` (tolerated like the v0.3 SDK does): the one member present decides.
        present = [k for k in ("text", "file", "data") if get(part, k) is not None]
        if len(present) != 1:
            raise bad(at(path, "kind"), "Field required")
        kind = present[0]
    metadata = opt_obj(get(part, "metadata"), at(path, "metadata"))
    out: Json
    if kind == "text":
        text = get(part, "text")
        if not isinstance(text, str):
            raise bad(at(path, "text"), "must be a string" if text is not None else "Field required")
        out = {"text": text}
    elif kind == "file":
        out = _file_in(get(part, "file"), at(path, "file"))
    elif kind == "data":
        value, metadata = unwrap_data(obj(get(part, "data"), at(path, "data")), metadata)
        out = {"data": value}
    else:
        raise bad(at(path, "kind"), 'must be "text", "file" or "data"')
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _file_in(data: JsonValue, path: str) -> Json:
    file = obj(data, path)
    content, uri = get(file, "bytes"), get(file, "uri")
    if (content is None) == (uri is None):
        raise bad(path, "must have exactly one of bytes, uri")
    out: Json
    if content is not None:
        raw = b64decode(content) if isinstance(content, str) else None
        if raw is None:
            raise bad(at(path, "bytes"), "must be a base64 string")
        out = {"raw": base64.b64encode(raw).decode("ascii")}
    else:
        out = {"url": opt_str(uri, at(path, "uri"))}
    return file_names_in(file, path, out)


def _status_in(data: JsonValue, path: str) -> Json:
    status = obj(data, path)
    state = get(status, "state")
    if state is None:
        raise bad(at(path, "state"), "Field required")
    if state == "unknown":
        # v1.0's TASK_STATE_UNSPECIFIED is "not set", which a v1.0 TaskStatus may not hold.
        raise bad(at(path, "state"), '"unknown" has no v1.0 equivalent')
    if not isinstance(state, str) or state not in _STATE_IN:
        raise bad(at(path, "state"), f"must be one of {', '.join(_STATE_IN)}")
    out: Json = {"state": _STATE_IN[state]}
    message = get(status, "message")
    if message is not None:
        out["message"] = message_in(message, at(path, "message"))
    copy_fields(status, out, "timestamp")
    return out


# --------------------------------------------------------------------------- results (out)


def message_out(message: Message) -> Json:
    return _message_out(message.to_wire())


def task_out(task: Task) -> Json:
    return _task_out(task.to_wire())


def send_result_out(result: SendMessageResponse) -> Json:
    """The bare Task or Message (v0.3 has no wrapper)."""
    wire = result.to_wire()
    return _task_out(wire["task"]) if "task" in wire else _message_out(wire["message"])


def stream_event_out(event: StreamResponse) -> Json:
    """The bare Task or Message, or a ``status-update``/``artifact-update`` event. v1.0 status
    updates have no ``final``: it is true in terminal and interrupted states, where the stream ends."""
    wire = event.to_wire()
    if "task" in wire:
        return _task_out(wire["task"])
    if "message" in wire:
        return _message_out(wire["message"])
    if "statusUpdate" in wire:
        update = wire["statusUpdate"]
        out: Json = {
            "kind": "status-update",
            "taskId": update["taskId"],
            "contextId": update["contextId"],
            "status": status_out(update["status"], _STATE_OUT, _message_out),
            "final": update["status"]["state"] in FINAL_STATES,
        }
        copy_present(update, out, "metadata")
        return out
    update = wire["artifactUpdate"]
    out = {
        "kind": "artifact-update",
        "taskId": update["taskId"],
        "contextId": update["contextId"],
        "artifact": artifact_out(update["artifact"], _part_out),
    }
    copy_present(update, out, "append", "lastChunk", "metadata")
    return out


def push_config_out(config: TaskPushNotificationConfig) -> Json:
    """``{taskId, pushNotificationConfig: {id, url, token?, authentication?}}`` (``tenant`` has no
    v0.3 field)."""
    wire = config.to_wire()
    return {"taskId": wire.get("taskId", ""), "pushNotificationConfig": push_fields_out(wire)}


def _message_out(message: Json) -> Json:
    out: Json = {"kind": "message", "messageId": message["messageId"], "role": _ROLE_OUT[message["role"]]}
    copy_present(message, out, "contextId", "taskId")
    out["parts"] = [_part_out(p) for p in message["parts"]]
    copy_present(message, out, "metadata", "extensions", "referenceTaskIds")
    return out


def _part_out(part: Json) -> Json:
    """v1.0 ``mediaType``/``filename`` have a v0.3 home on files only; on text and data they drop."""
    metadata = part.get("metadata")
    out: Json
    if "text" in part:
        out = {"kind": "text", "text": part["text"]}
    elif "raw" in part or "url" in part:
        file: Json = {"bytes": part["raw"]} if "raw" in part else {"uri": part["url"]}
        out = {"kind": "file", "file": file_names_out(part, file)}
    else:
        data, metadata = wrap_data(part.get("data"), metadata)
        out = {"kind": "data", "data": data}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _task_out(task: Json) -> Json:
    """``contextId`` is required in v0.3 (optional in v1.0): always present, possibly empty."""
    out: Json = {
        "kind": "task",
        "id": task["id"],
        "contextId": task.get("contextId", ""),
        "status": status_out(task["status"], _STATE_OUT, _message_out),
    }
    if "artifacts" in task:
        out["artifacts"] = [artifact_out(a, _part_out) for a in task["artifacts"]]
    if "history" in task:
        out["history"] = [_message_out(m) for m in task["history"]]
    copy_present(task, out, "metadata")
    return out
