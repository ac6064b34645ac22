"""DynamoDB's item size limit as DynamoDB applies it, for moto (installed by the local stack).

moto checks the 400 KB limit each time an attribute is set, adding the new value's size to the
item's current size *including the value being replaced*: updating a 250 KB attribute with another
250 KB value fails as a 500 KB item. DynamoDB limits the item that results. This counts the
replaced value out, so the local stack refuses exactly the items DynamoDB would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["install_item_size_fix", "item_size_fix"]

_LIMIT = 405_000  # moto's own figure: "the actual limit is between 409 and 410KB"


def _setitem(self: Any, key: str, value: Any) -> None:
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.utilities import bytesize

    def size(name: str, item: Any) -> int:
        return int(bytesize(name)) + int(item.size() if type(item) is DynamoType else bytesize(str(item)))

    others = sum(size(k, v) for k, v in self.items() if k != key)
    if others + size(key, value) > _LIMIT:
        raise ItemSizeTooLarge
    dict.__setitem__(self, key, value)


def install_item_size_fix() -> None:
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    LimitedSizeDict.__setitem__ = _setitem  # type: ignore[method-assign]


@contextlib.contextmanager
def item_size_fix() -> Iterator[None]:
    """The fix for the duration of a block (tests on in-process moto)."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    original = LimitedSizeDict.__setitem__
    LimitedSizeDict.__setitem__ = _setitem  # type: ignore[method-assign]
    try:
        yield
    finally:
        LimitedSizeDict.__setitem__ = original  # type: ignore[method-assign]
