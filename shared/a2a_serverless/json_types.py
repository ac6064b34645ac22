"""Names for data that really is arbitrary JSON: a request body before validation, a ProtoJSON
dict on its way to or from a model, a DynamoDB Streams record. Everything else is typed; ``Any``
in this package appears only through these two names (and where a library's own signature says
``Any``).
"""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["Json", "JsonValue"]

JsonValue: TypeAlias = Any
"""Any JSON value (object, array, string, number, boolean, null), as ``json.loads`` returns it."""

Json: TypeAlias = dict[str, JsonValue]
"""A JSON object."""
