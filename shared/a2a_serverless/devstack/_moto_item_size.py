"""DynamoDB's item size limit as DynamoDB applies it, for moto (installed by the local stack).

moto checks the 400 KB limit each time an attribute is set, adding the new value's size to the
item's current size *including the value being replaced*: updating a 250 KB attribute with another
250 KB value fails as a 500 KB item. DynamoDB limits the item that results. This counts the
replaced value out, so the local stack refuses exactly the items DynamoDB would.

moto also sizes the whole item again for every attribute it sets (an item of n attributes costs
n² sizings to build); this keeps the item's size as a running total instead, dropped whenever the
item changes in a way that does not go through here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["install_item_size_fix", "item_size_fix"]

_LIMIT = 405_000  # moto's own figure: "the actual limit is between 409 and 410KB"


_TOTAL = "_a2a_size"


def _size(name: str, item: Any) -> int:
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.utilities import bytesize

    return int(bytesize(name)) + int(item.size() if type(item) is DynamoType else bytesize(str(item)))


def _setitem(self: Any, key: str, value: Any) -> None:
    from moto.dynamodb.exceptions import ItemSizeTooLarge

    total = self.__dict__.get(_TOTAL)
    if total is None:
        total = sum(_size(k, v) for k, v in self.items())
    others = total - (_size(key, self[key]) if key in self else 0)
    after = others + _size(key, value)
    if after > _LIMIT:
        raise ItemSizeTooLarge
    dict.__setitem__(self, key, value)
    self.__dict__[_TOTAL] = after


def _forgetting(method: Any) -> Any:
    """``method``, after which the running total is recomputed on the next set."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.__dict__.pop(_TOTAL, None)
        return method(self, *args, **kwargs)

    call._a2a_original = method  # type: ignore[attr-defined]
    return call


_MUTATORS = ("__delitem__", "pop", "popitem", "clear", "update", "setdefault")


def _patch() -> dict[str, Any]:
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    originals = {name: getattr(LimitedSizeDict, name) for name in ("__setitem__", *_MUTATORS)}
    LimitedSizeDict.__setitem__ = _setitem  # type: ignore[method-assign]
    for name in _MUTATORS:
        method = originals[name]
        setattr(LimitedSizeDict, name, _forgetting(getattr(method, "_a2a_original", method)))
    return originals


def install_item_size_fix() -> None:
    _patch()


@contextlib.contextmanager
def item_size_fix() -> Iterator[None]:
    """The fix for the duration of a block (tests on in-process moto)."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    originals = _patch()
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(LimitedSizeDict, name, method)
