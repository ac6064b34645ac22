"""The ``lf.a2a.v1`` descriptors for the model tests, generated from ``proto/a2a.proto`` on demand.

``proto/generate.py`` runs (once, and only when its outputs are stale) the first time a test here needs
the descriptors, so a fresh clone needs no manual step. The descriptors are loaded into a *private*
descriptor pool: ``a2a-sdk`` registers its own ``a2a.proto`` in protobuf's default pool, and the two
cannot coexist there.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from google.api import field_behavior_pb2
from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor
from google.protobuf.descriptor_pool import DescriptorPool

GENERATOR = Path(__file__).resolve().parents[2] / "proto" / "generate.py"


def load_generator() -> ModuleType:
    """``proto/generate.py`` as a module (``proto`` is not importable: proto-plus owns that name)."""
    spec = importlib.util.spec_from_file_location("a2a_proto_generate", GENERATOR)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True, repr=False)
class A2AProto:
    """The generated ``lf.a2a.v1`` file descriptor plus the field facts the tests need."""

    pool: DescriptorPool
    file: FileDescriptor
    # Full names of fields annotated ``[(google.api.field_behavior) = REQUIRED]``.
    required_fields: frozenset[str]
    # Full names of proto3 ``optional`` fields (explicit presence via a synthetic oneof).
    optional_fields: frozenset[str]

    def __repr__(self) -> str:
        return f"A2AProto({self.file.name!r}, package {self.file.package!r})"

    @property
    def message_names(self) -> tuple[str, ...]:
        return tuple(self.file.message_types_by_name)

    @property
    def enum_names(self) -> tuple[str, ...]:
        return tuple(self.file.enum_types_by_name)

    def message(self, name: str) -> Descriptor:
        return self.file.message_types_by_name[name]

    def message_class(self, descriptor: Descriptor) -> Any:
        return message_factory.GetMessageClass(descriptor)

    def is_required(self, field: FieldDescriptor) -> bool:
        return field.full_name in self.required_fields

    def is_proto3_optional(self, field: FieldDescriptor) -> bool:
        return field.full_name in self.optional_fields

    def real_oneof(self, field: FieldDescriptor) -> Any:
        """The field's ``oneof`` group, or None (synthetic oneofs of ``optional`` fields excluded)."""
        if field.containing_oneof is None or self.is_proto3_optional(field):
            return None
        return field.containing_oneof


@functools.cache
def load_a2a_proto() -> A2AProto:
    pool, file = load_generator().load_descriptor_pool()
    file_proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(file_proto)
    assert file_proto.package == "lf.a2a.v1"

    required: set[str] = set()
    optional: set[str] = set()

    def visit(prefix: str, message: descriptor_pb2.DescriptorProto) -> None:
        for field in message.field:
            full_name = f"{prefix}.{message.name}.{field.name}"
            if field_behavior_pb2.REQUIRED in field.options.Extensions[field_behavior_pb2.field_behavior]:
                required.add(full_name)
            if field.proto3_optional:
                optional.add(full_name)
        for nested in message.nested_type:
            visit(f"{prefix}.{message.name}", nested)

    for message in file_proto.message_type:
        visit(file_proto.package, message)
    return A2AProto(pool, file, frozenset(required), frozenset(optional))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``proto_message_name``: one test per message of ``lf.a2a.v1`` (ids are the message names)."""
    if "proto_message_name" in metafunc.fixturenames:
        names = load_a2a_proto().message_names
        metafunc.parametrize("proto_message_name", names, ids=names)


@pytest.fixture(scope="session")
def a2a_proto() -> A2AProto:
    return load_a2a_proto()
