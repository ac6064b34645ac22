"""Fix ``item_size``: DynamoDB's 400 KB item size limit applied to the item that results.

**moto's behaviour** (moto 5.2.5, ``moto/dynamodb/models/dynamo_type.py``,
``LimitedSizeDict.__setitem__``): each time an attribute is set, moto adds the new value's size to
the size of the item as it is, *including the value being replaced*, and raises ``ItemSizeTooLarge``
above 405,000 bytes: replacing a 250 KB attribute with another 250 KB value fails as a 500 KB item.
It also sizes the whole item again for every attribute it sets (n² sizings to build an item of n
attributes).

**AWS's behaviour** (DynamoDB Developer Guide, "Service, account, and table quotas in Amazon
DynamoDB", section "Item size": the maximum item size is 400 KB, attribute names and values
included; API Reference, "UpdateItem": the update is refused when the item *after* the update
exceeds it, "Item size to update has exceeded the maximum allowed size"): the limit applies to the
item that results, so replacing a value by one of the same size always succeeds.

**A minimal reproduction**::

    import boto3
    from moto import mock_aws
    with mock_aws():
        db = boto3.client("dynamodb", region_name="us-east-1")
        db.create_table(TableName="t", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST")
        db.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"S": "x" * 250_000}})
        db.update_item(TableName="t", Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
            ExpressionAttributeValues={":v": {"S": "y" * 250_000}})
        # moto: ValidationException "Item size to update has exceeded the maximum allowed size";
        # DynamoDB: succeeds (the resulting item is ~250 KB)

**The upstream report** (for getmoto/moto)::

    Title: DynamoDB: replacing an attribute counts the old value against the 400 KB item limit

    `LimitedSizeDict.__setitem__` computes the current size of the item, including the value
    of the key being set, and adds the new value's size. Replacing a 250 KB attribute with a
    250 KB value therefore raises ItemSizeTooLarge, though the resulting item is 250 KB and
    DynamoDB accepts the update (the quota applies to the item's size after the write).
    Suggested fix: subtract the size of `self[key]` when `key in self`. The same method also
    re-sizes every attribute on each set, making item construction quadratic in the number of
    attributes; a running total would avoid it.

    Reproduction: (the snippet above). moto 5.2.5, Python 3.11.

The fix counts the replaced value out, and keeps the item's size as a running total, dropped
whenever the item changes in a way that does not go through ``__setitem__``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ._shape import Fix, Target

__all__ = ["FIX", "item_size_fix"]

_LIMIT = 405_000  # moto's own figure: "the actual limit is between 409 and 410KB"

_TOTAL = "_a2a_size"
_DICT = "moto.dynamodb.models.dynamo_type:LimitedSizeDict"


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
    call.__wrapped__ = method  # type: ignore[attr-defined]  # the shape check reads moto's signature
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


def install() -> None:
    _patch()


@contextlib.contextmanager
def item_size_fix() -> Iterator[None]:
    """The fix for the duration of a block (tests on in-process moto)."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    FIX.check()
    originals = _patch()
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(LimitedSizeDict, name, method)


FIX = Fix(
    name="item_size",
    module=__name__,
    install=install,
    targets=(
        # Instances must keep a __dict__ (the running total lives there) and be dicts.
        Target(_DICT, attributes=("__dict__", "items", "keys"), sample=lambda cls: cls()),
        Target(f"{_DICT}.__setitem__", ("self", "key", "value")),
        Target(f"{_DICT}.__delitem__", ("self", "key")),
        Target(f"{_DICT}.popitem", ("self",)),
        Target(f"{_DICT}.setdefault", ("self", "key", "default")),
        # dict's own pop, clear and update have no readable signature: present and callable.
        *(Target(f"{_DICT}.{name}") for name in ("pop", "clear", "update")),
        Target("moto.dynamodb.models.dynamo_type:DynamoType.size", ("self",)),
        Target("moto.dynamodb.models.utilities:bytesize", ("val",)),
        Target("moto.dynamodb.exceptions:ItemSizeTooLarge"),
    ),
)
