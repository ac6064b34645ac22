"""The ProtoJSON base of the models: the model every A2A message derives from, and the scalar wire
types its fields use (int32, Timestamp, bytes and enums in their ProtoJSON forms; the strings that
travel in HTTP headers: a part's media type and file name, a push config's credentials).

ProtoJSON rules encoded here (A2A specification, sections 5.5 JSON Field Naming Convention to 5.7 Field Presence and
Optionality):

* output names are lowerCamelCase; input accepts camelCase and the proto (snake_case) names;
* unknown input fields are ignored (forward compatibility, spec section 5.7);
* proto3 fields without presence are omitted when they hold their default;
  ``optional`` fields (typed ``X | None = None`` here) are emitted whenever they were set;
* a ``oneof`` is emitted as exactly the member that is set (``_oneofs``);
* ``google.protobuf.Value`` fields (``_value_fields``) distinguish "unset" from JSON ``null``;
  on any other field, JSON ``null`` means "unset" (the default).

Python field names are the proto field names, so the models can be checked against the proto
descriptors one to one (see ``tests/models/test_proto_conformance.py``).
"""

from __future__ import annotations

import base64
import binascii
import enum
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Self, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..json_types import Json, JsonValue

__all__ = [
    "MAX_FILENAME_LENGTH",
    "MAX_MEDIA_TYPE_LENGTH",
    "Bytes",
    "FileName",
    "HeaderText",
    "Int32",
    "MediaType",
    "NonEmptyHeaderText",
    "NonEmptyStr",
    "ProtoEnum",
    "ProtoModel",
    "Specified",
    "Timestamp",
    "UrlText",
    "format_timestamp",
    "utc_now",
]


class ProtoModel(BaseModel):
    """A proto message in its ProtoJSON form."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
        revalidate_instances="never",
        # Build validators on first use: a Lambda serving one method pays only for its models.
        defer_build=True,
    )

    # Oneof groups: group name -> member field names. Members use None for "not set", except
    # Value fields, whose presence is read from ``model_fields_set``.
    _oneofs: ClassVar[dict[str, tuple[str, ...]]] = {}
    # Oneof groups that must have exactly one member set (the others allow none).
    _required_oneofs: ClassVar[frozenset[str]] = frozenset()
    # google.protobuf.Value fields: JSON null is a value, not "unset".
    _value_fields: ClassVar[frozenset[str]] = frozenset()
    # Fields the spec requires on the wire even when they hold the default.
    _always_emit: ClassVar[frozenset[str]] = frozenset()

    def _is_set(self, name: str) -> bool:
        if name in self._value_fields:
            return name in self.model_fields_set
        return getattr(self, name) is not None

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: JsonValue) -> JsonValue:
        # ProtoJSON: JSON null on input means "unset", except for a Value field, where it is a value.
        if isinstance(data, dict) and None in data.values():
            keep = {*cls._value_fields, *(to_camel(name) for name in cls._value_fields)}
            return {k: v for k, v in data.items() if v is not None or k in keep}
        return data

    @model_validator(mode="after")
    def _check_oneofs(self) -> Self:
        for group, members in self._oneofs.items():
            present = [m for m in members if self._is_set(m)]
            if len(present) > 1:
                raise ValueError(f"should not have multiple {group!r} oneof fields: {', '.join(present)}")
            if not present and group in self._required_oneofs:
                raise ValueError(f"exactly one of {', '.join(to_camel(m) for m in members)} is required")
        return self

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields = type(self).model_fields
        for name, field in fields.items():
            key = (field.alias or name) if info.by_alias else name
            if key not in data or name in self._always_emit:
                continue
            if name in self._value_fields:
                if name not in self.model_fields_set:
                    del data[key]
                continue
            value = getattr(self, name)
            if value is None or (field.default is not None and _is_proto_default(value, field.default)):
                del data[key]
        return data

    def to_wire(self) -> Json:
        """The ProtoJSON object (camelCase, defaults omitted)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """Compact ProtoJSON text."""
        return self.model_dump_json(by_alias=True)

    @classmethod
    def from_wire(cls, data: JsonValue) -> Self:
        """Parse a ProtoJSON object (raises ``pydantic.ValidationError``)."""
        return cls.model_validate(data)


def _is_proto_default(value: object, default: object) -> bool:
    if isinstance(value, (list, dict)):
        return len(value) == 0
    return bool(value == default)


# --------------------------------------------------------------------------- scalar wire types

Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
NonEmptyStr = Annotated[str, Field(min_length=1)]


class ProtoEnum(enum.StrEnum):
    """A proto enum: serialized by name, parsed from its name or its number."""

    @classmethod
    def _missing_(cls, value: object) -> ProtoEnum | None:
        if isinstance(value, int) and not isinstance(value, bool):
            members = list(cls)
            if 0 <= value < len(members):
                return members[value]
        return None

    @property
    def number(self) -> int:
        return list(type(self)).index(self)


def _specified(value: ProtoEnum, info: ValidationInfo) -> ProtoEnum:
    if value.number == 0:
        raise ValueError(f"{info.field_name} is required (not {value.name})")
    return value


_E = TypeVar("_E", bound=ProtoEnum)
# A field the proto marks REQUIRED whose type is an enum: its zero (``*_UNSPECIFIED``) is refused,
# given by name or by number. (A missing one is already refused: such fields have no default.)
Specified = Annotated[_E, AfterValidator(_specified)]


def format_timestamp(value: datetime) -> str:
    """RFC 3339 in UTC with millisecond precision and a 'Z' suffix (spec section 5.6.1)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    # isoformat, unlike strftime("%Y"), always writes a four-digit year (0999, not 999).
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def utc_now() -> datetime:
    """The current time, truncated to the millisecond precision the wire carries."""
    now = datetime.now(UTC)
    return now.replace(microsecond=(now.microsecond // 1000) * 1000)


def _parse_timestamp(value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError("timestamp must be RFC 3339, e.g. 2025-01-01T00:00:00.000Z") from exc
        if parsed.tzinfo is None:
            raise ValueError("timestamp must carry a UTC offset or 'Z'")
        try:
            return parsed.astimezone(UTC)
        except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+01:00
            raise ValueError("timestamp out of range (0001-01-01 to 9999-12-31 UTC)") from exc
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    raise ValueError("timestamp must be an RFC 3339 string")


Timestamp = Annotated[
    datetime,
    BeforeValidator(_parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]


def _parse_bytes(value: JsonValue) -> bytes:
    if isinstance(value, bytes):
        return value
    if not isinstance(value, str):
        raise ValueError("bytes must be a base64 string")
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("bytes must be valid base64") from exc


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


Bytes = Annotated[bytes, BeforeValidator(_parse_bytes), PlainSerializer(_b64, return_type=str, when_used="json")]


# --------------------------------------------------------------------------- strings sent as headers
#
# A part's media type becomes the Content-Type of its stored object and of the presigned URL that
# serves it, its file name the Content-Disposition; a push config's token and authentication become
# headers of every notification. HTTP allows neither control characters (a CR/LF would end the
# header) nor, in practice, anything but ASCII there (RFC 9110 section 5.5): such a value could be
# accepted and then fail every time it is used (S3 refusing the object: "try again", forever; every
# notification undeliverable). So they are refused where they enter, as invalid parameters.

MAX_MEDIA_TYPE_LENGTH = 1024
"""RFC 6838 4.2 allows 127 characters each for type and subtype; this leaves room for parameters,
far under S3's 8 KB of request headers."""
MAX_FILENAME_LENGTH = 255
"""The usual maximum of a file name; percent-encoded in the presigned URL it stays a few KB."""

_PRINTABLE_ASCII = "^[ -~]*$"
_NO_CONTROL = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"  # Unicode's Cc category


def _printable_ascii(value: str) -> str:
    if not value.isascii() or not value.isprintable():
        raise ValueError("must be printable ASCII: no control characters (CR, LF, NUL...) and nothing beyond ASCII")
    return value


def _no_control_characters(value: str) -> str:
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise ValueError("must not contain control characters (CR, LF, NUL...)")
    return value


MediaType = Annotated[
    str,
    Field(max_length=MAX_MEDIA_TYPE_LENGTH, json_schema_extra={"pattern": _PRINTABLE_ASCII}),
    AfterValidator(_printable_ascii),
]
"""A part's ``mediaType``: printable ASCII, as media types are (RFC 6838), at most 1024 characters."""

FileName = Annotated[
    str,
    Field(max_length=MAX_FILENAME_LENGTH, json_schema_extra={"pattern": _NO_CONTROL}),
    AfterValidator(_no_control_characters),
]
"""A part's ``filename``: any text without control characters, at most 255 characters."""

HeaderText = Annotated[str, Field(json_schema_extra={"pattern": _PRINTABLE_ASCII}), AfterValidator(_printable_ascii)]
"""A value sent as (part of) an HTTP header as it is: printable ASCII."""
NonEmptyHeaderText = Annotated[
    NonEmptyStr, Field(json_schema_extra={"pattern": _PRINTABLE_ASCII}), AfterValidator(_printable_ascii)
]

UrlText = Annotated[
    NonEmptyStr, Field(json_schema_extra={"pattern": _NO_CONTROL}), AfterValidator(_no_control_characters)
]
"""A URL as given (required): non-ASCII is percent-encoded when it is used, control characters cannot be."""
