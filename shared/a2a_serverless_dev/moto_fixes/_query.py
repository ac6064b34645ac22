"""Fix ``partition_queries``: a Query on a table's own key reads one partition.

**moto's behaviour** (moto 5.2.5, ``moto/dynamodb/models/table.py``, ``Table.query``): every Query
starts from ``Table.all_items()``, which lists *every item of the table* and sorts them all, then
keeps the queried partition's. A Query's cost grows with everything stored: on the local stack
every read of a task (its snapshot, its events, its push configs) slowed down as tasks accumulated,
and a stream of 800 events read 800 times a table that grew by one item each time.

**AWS's behaviour** (DynamoDB Developer Guide, "Key condition expressions for the Query operation
in DynamoDB": items with the same partition key value are stored together, sorted by sort key, and
a Query retrieves them in that order before applying the key condition and filter; API Reference,
"Query"): a Query reads the queried partition; its cost depends on the items it reads, not on the
table's size.

**A minimal reproduction**::

    import time, boto3
    from moto import mock_aws
    with mock_aws():
        db = boto3.client("dynamodb", region_name="us-east-1")
        db.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                       {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "sk", "AttributeType": "S"}])
        for n in range(20_000):
            db.put_item(TableName="t", Item={"pk": {"S": f"p{n % 1000}"}, "sk": {"S": str(n)}})
        start = time.perf_counter()
        db.query(TableName="t", KeyConditionExpression="pk = :p",
                 ExpressionAttributeValues={":p": {"S": "p1"}})  # 20 items
        print(time.perf_counter() - start)  # grows with the table's 20,000 items

**The upstream report** (for getmoto/moto)::

    Title: DynamoDB Query on the table's key sorts the whole table instead of reading the partition

    `Table.query` without an index starts from `self.all_items()`, which collects and sorts
    every item of every partition, and only then keeps the items of the queried hash key. The
    table already stores items per partition (`self.items[hash_key]`), so a query on the
    table's key could start from `self.items.get(hash_key, {}).values()` sorted by range key.
    DynamoDB reads only the queried partition; with moto a test that stores many items sees
    every Query slow down linearly (and loops of queries quadratically).

    Reproduction: (the snippet above). moto 5.2.5, Python 3.11.

The fix keeps all of moto's query (key conditions, paging, limits, filters, projections) and only
narrows the items it starts from: during a query on the table's own key (no index), on this thread,
the table's item list is the queried partition's items. Index queries are unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Iterator
from typing import Any

from ._shape import Fix, Target, sample_table

__all__ = ["FIX", "partition_queries"]

_scope = threading.local()
"""The (table, partition items) the current thread's query is about, if any."""

_TABLE = "moto.dynamodb.models.table:Table"


def _all_items(original: Any) -> Any:
    @functools.wraps(original)
    def all_items(self: Any) -> Any:
        scoped = getattr(_scope, "partition", None)
        if scoped is not None and scoped[0] is self:
            return sorted(scoped[1], key=lambda item: item.range_key)
        return original(self)

    all_items._a2a_partition = True  # type: ignore[attr-defined]
    return all_items


def _query(original: Any) -> Any:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = signature.bind(self, hash_key, *args, **kwargs).arguments.get("index_name")
        if index_name or hash_key is None or not self.range_key_attr:
            return original(self, hash_key, *args, **kwargs)
        partition = list(self.items.get(hash_key, {}).values())
        _scope.partition = (self, partition)
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            _scope.partition = None

    query._a2a_partition = True  # type: ignore[attr-defined]
    return query


def _patches() -> dict[str, Any]:
    from moto.dynamodb.models.table import Table

    return {
        "all_items": Table.all_items
        if getattr(Table.all_items, "_a2a_partition", False)
        else _all_items(Table.all_items),
        "query": Table.query if getattr(Table.query, "_a2a_partition", False) else _query(Table.query),
    }


def install() -> None:
    """Patch moto's ``Table`` for the rest of the process (idempotent)."""
    from moto.dynamodb.models.table import Table

    for name, method in _patches().items():
        setattr(Table, name, method)


@contextlib.contextmanager
def partition_queries() -> Iterator[None]:
    """The fix for the duration of a block (tests on in-process moto)."""
    from moto.dynamodb.models.table import Table

    FIX.check()
    originals = {name: getattr(Table, name) for name in ("all_items", "query")}
    for name, method in _patches().items():
        setattr(Table, name, method)
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(Table, name, method)


def _item(cls: Any) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType

    return cls(DynamoType({"S": "p"}), DynamoType({"S": "s"}), {})


FIX = Fix(
    name="partition_queries",
    module=__name__,
    install=install,
    targets=(
        Target(f"{_TABLE}.all_items", ("self",)),
        Target(
            f"{_TABLE}.query",
            (
                "self",
                "hash_key",
                "range_comparison",
                "range_objs",
                "limit",
                "exclusive_start_key",
                "scan_index_forward",
                "projection_expressions",
                "index_name",
                "consistent_read",
                "filter_expression",
                "hash_key_conditions",
                "range_key_conditions",
                "filter_kwargs",
            ),
        ),
        # The partition is read from ``Table.items[hash_key]``; items sort by ``Item.range_key``.
        Target(_TABLE, attributes=("items", "range_key_attr"), sample=sample_table),
        Target("moto.dynamodb.models.dynamo_type:Item", attributes=("range_key",), sample=_item),
    ),
)
