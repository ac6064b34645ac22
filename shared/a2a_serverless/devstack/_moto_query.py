"""A ``Query`` on a table's own key that reads one partition, for moto (installed by the local stack).

moto answers every Query by listing *every item of the table*, sorting them all, and keeping the
ones of the queried partition: a Query's cost grows with everything stored so far. On the local
stack that is every read of a task (its snapshot and head, its events, its push configs), so it
slowed down as tasks accumulated and as one task's log grew (a stream of 800 events read 800 times
a table that grew by one item each time). DynamoDB reads the partition's B-tree.

This keeps moto's query (its key conditions, paging, limits, filters, projections: all of it) and
only narrows the items it starts from: during a query on the table's own key (no index), on this
thread, the table's item list is the queried partition's items. Index queries are unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["install_partition_queries", "partition_queries"]

_scope = threading.local()
"""The (table, partition items) the current thread's query is about, if any."""


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


def install_partition_queries() -> None:
    """Patch moto's ``Table`` for the rest of the process (idempotent)."""
    from moto.dynamodb.models.table import Table

    for name, method in _patches().items():
        setattr(Table, name, method)


@contextlib.contextmanager
def partition_queries() -> Iterator[None]:
    """The patch for the duration of a block (tests on in-process moto)."""
    from moto.dynamodb.models.table import Table

    originals = {name: getattr(Table, name) for name in ("all_items", "query")}
    for name, method in _patches().items():
        setattr(Table, name, method)
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(Table, name, method)
