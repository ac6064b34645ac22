"""What the two v0.3 bindings share: reading untrusted JSON, the value tables, data-part wrapping.

Every reader here takes whatever a client sent and either returns the value or raises
:class:`InvalidParamsError` naming the v0.3 field path; nothing else can escape, whatever the
input (the converters' only contract with the transport). Lookups accept the camelCase name and
the proto (snake_case) name of a field, as ProtoJSON parsers and the v0.3 SDK's pydantic models do.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping

from ..errors import FieldViolation, InvalidParamsError
from ..json_types import Json, JsonValue

__all__ = [
    "DATA_PART_COMPAT",
    "FINAL_STATES",
    "Json",
    "artifact_in",
    "artifact_out",
    "at",
    "b64decode",
    "bad",
    "copy_fields",
    "copy_present",
    "file_names_in",
    "file_names_out",
    "get",
    "history_length_in",
    "obj",
    "opt_array",
    "opt_bool",
    "opt_obj",
    "opt_str",
    "parts_in",
    "push_fields_in",
    "push_fields_out",
    "req_str",
    "status_out",
    "unwrap_data",
    "wrap_data",
]

# The reference SDK's marker for a v1.0 data value that is not an object, wrapped as {"value": v}.
DATA_PART_COMPAT = "data_part_compat"

# v1.0 states for which a v0.3 status-update event carries ``final: true``: the terminal states,
# and the interrupted ones (the stream ends there too, waiting for the client).
FINAL_STATES = frozenset(
    {
        "TASK_STATE_COMPLETED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_FAILED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
    }
)

_UPPER = re.compile(r"([A-Z])")
_INTEGER = re.compile(r"\s*-?\d{1,20}\s*")  # ProtoJSON also takes int32 as a string


def bad(path: str, description: str) -> InvalidParamsError:
    return InvalidParamsError(violations=[FieldViolation(path, description)])


def at(path: str, key: str | int) -> str:
    """``path`` extended by an object key or an array index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def get(data: Json, name: str, json_name: str | None = None) -> JsonValue:
    """The field ``name`` (camelCase) by that name, its ``json_name`` or its proto name; JSON null
    counts as absent (ProtoJSON and pydantic's ``X | None`` alike)."""
    for key in (json_name, name, _UPPER.sub(r"_\1", name).lower()):
        if key is not None and data.get(key) is not None:
            return data[key]
    return None


def obj(value: JsonValue, path: str) -> Json:
    """A required JSON object."""
    if value is None:
        raise bad(path, "Field required")
    if not isinstance(value, dict):
        raise bad(path, "must be an object")
    return value


def opt_obj(value: JsonValue, path: str) -> Json | None:
    return None if value is None else obj(value, path)


def opt_str(value: JsonValue, path: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise bad(path, "must be a string")


def req_str(value: JsonValue, path: str) -> str:
    """A required, non-empty string."""
    text = opt_str(value, path)
    if not text:
        raise bad(path, "Field required")
    return text


def opt_bool(value: JsonValue, path: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise bad(path, "must be a boolean")


def opt_array(value: JsonValue, path: str) -> list[JsonValue]:
    """An optional JSON array (absent reads as empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad(path, "must be an array")
    return value


def copy_fields(src: Json, dst: Json, *names: str) -> None:
    """Copy fields whose name and meaning are the same in v0.3 and v1.0 (the v1.0 model checks them,
    under the same path)."""
    for name in names:
        value = get(src, name)
        if value is not None:
            dst[name] = value


def history_length_in(value: JsonValue, path: str) -> int | None:
    """v0.3 ``historyLength``. 0 (and absent) mean "no limit" in v0.3 (its proto field has no
    presence, and the reference SDK reads 0 so), where v1.0's 0 means "no history": both become unset.
    Negative and out-of-range numbers are left for the v1.0 model to reject under the same path."""
    if value is None:
        return None
    integral = (
        (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer())
        or (isinstance(value, str) and _INTEGER.fullmatch(value) is not None)
    )
    if not integral:
        raise bad(path, "must be an integer")
    return int(value) or None


def b64decode(text: str) -> bytes | None:
    """Standard or URL-safe base64, padding optional (as ProtoJSON parsers accept); None if invalid."""
    cleaned = text.strip().replace("-", "+").replace("_", "/")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        return None


def wrap_data(data: JsonValue, metadata: Json | None) -> tuple[Json, Json | None]:
    """A v1.0 data value as a v0.3 DataPart's ``data`` (which must be an object) and its metadata:
    a non-object value travels as ``{"value": v}`` with ``metadata.data_part_compat = true``."""
    if isinstance(data, dict):
        return data, metadata
    return {"value": data}, {**(metadata or {}), DATA_PART_COMPAT: True}


def unwrap_data(data: Json, metadata: Json | None) -> tuple[JsonValue, Json | None]:
    """The inverse of :func:`wrap_data`. Only the exact wrapped shape is unwrapped; anything else
    (say a client's own ``data_part_compat`` key beside other data) is kept as sent."""
    if metadata is not None and metadata.get(DATA_PART_COMPAT) is True and list(data) == ["value"]:
        rest = {k: v for k, v in metadata.items() if k != DATA_PART_COMPAT}
        return data["value"], rest or None
    return data, metadata


def _auth_in(value: JsonValue, path: str) -> Json:
    """v0.3 ``{schemes: [..], credentials?}`` -> v1.0 ``{scheme, credentials?}``: v1.0 has room for
    one scheme, the first (as the reference SDK maps it); the others are dropped."""
    data = obj(value, path)
    schemes = opt_array(get(data, "schemes"), at(path, "schemes"))
    for i, scheme in enumerate(schemes):
        if not isinstance(scheme, str):
            raise bad(at(at(path, "schemes"), i), "must be a string")
    if not schemes or not schemes[0]:
        raise bad(at(path, "schemes"), "must name at least one scheme")
    out: Json = {"scheme": schemes[0]}
    credentials = opt_str(get(data, "credentials"), at(path, "credentials"))
    if credentials:
        out["credentials"] = credentials
    return out


def _auth_out(auth: Json) -> Json:
    out: Json = {"schemes": [auth["scheme"]]}
    if auth.get("credentials"):
        out["credentials"] = auth["credentials"]
    return out


def push_fields_in(value: JsonValue, path: str) -> Json:
    """A v0.3 ``PushNotificationConfig`` (the same fields in both bindings) -> the fields of a flat
    v1.0 ``TaskPushNotificationConfig``. Without an id it keeps none; callers apply the default."""
    data = obj(value, path)
    out: Json = {}
    config_id = opt_str(get(data, "id"), at(path, "id"))
    if config_id:
        out["id"] = config_id
    out["url"] = req_str(get(data, "url"), at(path, "url"))
    token = opt_str(get(data, "token"), at(path, "token"))
    if token:
        out["token"] = token
    auth = get(data, "authentication")
    if auth is not None:
        out["authentication"] = _auth_in(auth, at(path, "authentication"))
    return out


def push_fields_out(config: Json) -> Json:
    """A flat v1.0 ``TaskPushNotificationConfig`` (wire form) -> a v0.3 ``PushNotificationConfig``."""
    out: Json = {}
    if config.get("id"):
        out["id"] = config["id"]
    out["url"] = config["url"]
    if config.get("token"):
        out["token"] = config["token"]
    if "authentication" in config:
        out["authentication"] = _auth_out(config["authentication"])
    return out


# --------------------------------------------------------------------------- shapes both bindings share

PartIn = Callable[[JsonValue, str], Json]
PartOut = Callable[[Json], Json]


def parts_in(container: Json, path: str, part_in: PartIn) -> list[Json]:
    """The container's ``parts`` (absent: none), each converted by the binding's ``part_in``."""
    parts_path = at(path, "parts")
    return [part_in(p, at(parts_path, i)) for i, p in enumerate(opt_array(get(container, "parts"), parts_path))]


def artifact_in(data: JsonValue, path: str, part_in: PartIn) -> Json:
    """A v0.3 ``Artifact`` (same fields on both bindings but its parts) -> v1.0."""
    artifact = obj(data, path)
    out: Json = {}
    copy_fields(artifact, out, "artifactId", "name", "description")
    out["parts"] = parts_in(artifact, path, part_in)
    copy_fields(artifact, out, "metadata", "extensions")
    return out


def file_names_in(file: Json, path: str, out: Json) -> Json:
    """A v0.3 file's ``mimeType`` and ``name`` onto the v1.0 part (``mediaType``, ``filename``)."""
    media_type = opt_str(get(file, "mimeType"), at(path, "mimeType"))
    if media_type:
        out["mediaType"] = media_type
    filename = opt_str(get(file, "name"), at(path, "name"))
    if filename:
        out["filename"] = filename
    return out


def copy_present(src: Json, dst: Json, *keys: str) -> None:
    for key in keys:
        if key in src:
            dst[key] = src[key]


def file_names_out(part: Json, file: Json) -> Json:
    """A v1.0 part's ``mediaType`` and ``filename`` onto the v0.3 file (``mimeType``, ``name``)."""
    if "mediaType" in part:
        file["mimeType"] = part["mediaType"]
    if "filename" in part:
        file["name"] = part["filename"]
    return file


def status_out(status: Json, states: Mapping[str, JsonValue], message_out: PartOut) -> Json:
    """A v1.0 ``TaskStatus`` -> v0.3, in the binding's state spelling and message shape."""
    out: Json = {"state": states[status["state"]]}
    if "message" in status:
        out["message"] = message_out(status["message"])
    copy_present(status, out, "timestamp")
    return out


def artifact_out(artifact: Json, part_out: PartOut) -> Json:
    out: Json = {"artifactId": artifact["artifactId"]}
    copy_present(artifact, out, "name", "description")
    out["parts"] = [part_out(p) for p in artifact["parts"]]
    copy_present(artifact, out, "metadata", "extensions")
    return out
