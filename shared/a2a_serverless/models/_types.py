"""Scalar wire types: int32, Timestamp, bytes and enums in their ProtoJSON forms."""

from __future__ import annotations

import base64
import binascii
import enum
from datetime import UTC, datetime
from typing import Annotated

from pydantic import BeforeValidator, Field, PlainSerializer

from ..json_types import JsonValue

__all__ = ["Bytes", "Int32", "NonEmptyStr", "ProtoEnum", "Timestamp", "format_timestamp", "utc_now"]

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
