"""The ProtoJSON base model every A2A message derives from.

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

from typing import Any, ClassVar, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..json_types import Json, JsonValue

__all__ = ["ProtoModel"]


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
