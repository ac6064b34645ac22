"""The units ``aws_calls.py`` bills: on-demand prices, DynamoDB item sizes and request units.

Published us-east-1 prices as constants (with where they were read and when), and DynamoDB's sizing
rules applied to the stored attribute values themselves: an item's size, the write units of a put or
update (before and after, global secondary indexes by their projection) and the read units of a
read, including a BatchGetItem's per-item rounding. :class:`MotoItems` reads the items and the
tables' index schemas from moto's in-process backend, so a write's cost is computed from what was
stored before it and after it, not estimated. Nothing here records or runs anything.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
REGION = "us-east-1"

# Published on-demand prices, us-east-1, no free tier, no volume tiers (the first tier applies far
# beyond a million tasks). Checked 2026-11-23 against the pricing pages below (stored copies via the
# search tool; DynamoDB's are the prices after the 1 November 2024 on-demand reduction).
PRICES_CHECKED = "2026-11-23"
DYNAMODB_WRU = 0.625 / 1e6
"""$ per write request unit (on-demand, Standard table class). https://aws.amazon.com/dynamodb/pricing/on-demand/"""
DYNAMODB_RRU = 0.125 / 1e6
"""$ per read request unit. https://aws.amazon.com/dynamodb/pricing/on-demand/"""
SQS_STANDARD_REQUEST = 0.40 / 1e6
"""$ per standard-queue request (per 64 KB chunk). https://aws.amazon.com/sqs/pricing/"""
SQS_FIFO_REQUEST = 0.50 / 1e6
"""$ per FIFO-queue request (per 64 KB chunk). https://aws.amazon.com/sqs/pricing/"""
LAMBDA_REQUEST = 0.20 / 1e6
"""$ per Lambda invocation. https://aws.amazon.com/lambda/pricing/"""
LAMBDA_GB_SECOND_ARM64 = 0.0000133334
"""$ per GB-second, Arm (first 7.5 billion GB-s a month). https://aws.amazon.com/lambda/pricing/"""
API_GATEWAY_REST_REQUEST = 3.50 / 1e6
"""$ per REST API request (first 333 million a month). https://aws.amazon.com/api-gateway/pricing/"""
S3_PUT_REQUEST = 0.005 / 1000
"""$ per PUT, COPY, POST or LIST request, S3 Standard. https://aws.amazon.com/s3/pricing/"""
S3_GET_REQUEST = 0.0004 / 1000
"""$ per GET, SELECT or other request, S3 Standard (DELETE is free). https://aws.amazon.com/s3/pricing/"""
S3_STANDARD_GB_MONTH = 0.023
"""$ per GB-month, S3 Standard, first 50 TB a month (GB = 2^30 bytes, prorated by the hour, no
minimum storage duration). https://aws.amazon.com/s3/pricing/"""
DATA_TRANSFER_OUT_GB = 0.09
"""$ per GB out of S3 to the internet, first 10 TB a month (the first 100 GB a month of the account
are free: not counted). https://aws.amazon.com/s3/pricing/ (Data transfer)"""
LAMBDA_DURABLE_OPERATION = 8.00 / 1e6
"""$ per durable operation (a checkpointed step, wait or callback) of a Lambda durable execution: the
rate of the durable-functions example on https://aws.amazon.com/lambda/pricing/ ("$8.00/M"), as
transcribed from that page on 2026-09-20 by a third party
(https://raw.githubusercontent.com/api-evangelist/aws-lambda/refs/heads/main/plans/aws-lambda-plans-pricing.yml,
found with the search tool; no stored copy of the AWS page itself was found). Durable executions are
also billed per GB of data written and per GB-month of data retained: those prices were not found,
so that part is not counted (the output says so and gives the bytes)."""
GB = 1024**3
"""The GB of S3's storage and transfer prices: 2^30 bytes."""
DAYS_PER_MONTH = 30
"""A month of storage, for prorating: the task TTL of 30 days is one month."""
PRICE_SOURCES = {
    "DynamoDB on-demand": "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    "SQS": "https://aws.amazon.com/sqs/pricing/",
    "Lambda": "https://aws.amazon.com/lambda/pricing/",
    "API Gateway": "https://aws.amazon.com/api-gateway/pricing/",
    "S3": "https://aws.amazon.com/s3/pricing/",
    "Lambda durable functions": "https://aws.amazon.com/lambda/pricing/ (durable functions example, via "
    "https://raw.githubusercontent.com/api-evangelist/aws-lambda/refs/heads/main/plans/aws-lambda-plans-pricing.yml)",
}
AUTHORIZER_ASSUMED_MS = 10.0
"""The REQUEST authorizer (AuthMode Open, the default; not cached) is not part of the local stack;
its duration is assumed, not measured."""

SQS_CHUNK = 64 * 1024
WRITE_UNIT = 1024
READ_UNIT = 4096


# ------------------------------------------------------------------------------ DynamoDB item sizes
def attribute_value_size(value: dict[str, Any]) -> int:
    """Size of one typed attribute value by DynamoDB's rules (CapacityUnitCalculations): strings
    and binaries by their bytes, numbers ~1 byte per two significant digits + 1, null / bool 1,
    lists and maps 3 bytes + 1 per element + their elements (map keys count as names)."""
    kind, inner = next(iter(value.items()))
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        return _number_size(str(inner))
    if kind == "B":
        return len(inner) if isinstance(inner, (bytes, bytearray)) else len(str(inner)) * 3 // 4
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(s).encode()) for s in inner)
    if kind == "NS":
        return sum(_number_size(str(n)) for n in inner)
    if kind == "BS":
        return sum(len(b) if isinstance(b, (bytes, bytearray)) else len(str(b)) * 3 // 4 for b in inner)
    if kind == "L":
        return 3 + sum(1 + attribute_value_size(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + attribute_value_size(v) for k, v in inner.items())
    return len(json.dumps(inner))


def _number_size(text: str) -> int:
    digits = text.lstrip("+-").replace(".", "").split("e")[0].split("E")[0].strip("0") or "0"
    return math.ceil(len(digits) / 2) + 1


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes of an item (attribute names + values); 0 for no item."""
    if not item:
        return 0
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT))


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_UNIT))
    return float(units) if consistent else units / 2


@dataclass(frozen=True)
class IndexSchema:
    """A global secondary index as the table defines it: its key attributes and its projection."""

    name: str
    keys: tuple[str, ...]
    projection: str = "ALL"
    """``ALL``, ``KEYS_ONLY`` or ``INCLUDE``."""
    non_key: tuple[str, ...] = ()
    """The ``NonKeyAttributes`` of an ``INCLUDE`` projection."""
    table_keys: tuple[str, ...] = ()

    def entry(self, item: dict[str, Any]) -> dict[str, Any]:
        """The index entry of an item (that has the index keys): the table's key attributes, the
        index's key attributes, then everything (ALL), the listed attributes (INCLUDE) or nothing
        more (KEYS_ONLY)."""
        if self.projection == "ALL":
            return item
        wanted = {*self.table_keys, *self.keys, *(self.non_key if self.projection == "INCLUDE" else ())}
        return {name: value for name, value in item.items() if name in wanted}


class MotoItems:
    """Reads items straight from moto's in-process backend (what the moto server serves), so a
    write's before and after images can be sized without an AWS call of our own."""

    def __init__(self) -> None:
        self._schemas: dict[str, tuple[tuple[str, ...], list[IndexSchema]]] = {}

    def _backend(self) -> Any:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        return dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION]

    def schema(self, table_name: str) -> tuple[tuple[str, ...], list[IndexSchema]]:
        """(key attribute names, the global secondary indexes with their projections) of a table."""
        if table_name not in self._schemas:
            table = self._backend().get_table(table_name)
            keys = tuple(k for k in (table.hash_key_attr, table.range_key_attr) if k)
            indexes = []
            for index in table.global_indexes:
                projection = dict(index.projection or {})
                indexes.append(
                    IndexSchema(
                        name=index.name,
                        keys=tuple(part["AttributeName"] for part in index.schema),
                        projection=str(projection.get("ProjectionType") or "ALL"),
                        non_key=tuple(projection.get("NonKeyAttributes") or ()),
                        table_keys=keys,
                    )
                )
            self._schemas[table_name] = (keys, indexes)
        return self._schemas[table_name]

    def get(self, table_name: str, key: dict[str, Any]) -> dict[str, Any] | None:
        for _ in range(5):  # another thread may be changing the item while it is copied
            try:
                item = self._backend().get_item(table_name, key)
                return dict(item.to_json()["Attributes"]) if item is not None else None
            except RuntimeError:
                time.sleep(0.001)
        return None

    def key_of(self, table_name: str, item: dict[str, Any]) -> dict[str, Any]:
        keys, _ = self.schema(table_name)
        return {k: item[k] for k in keys if k in item}


def gsi_writes(indexes: Sequence[IndexSchema], before: dict[str, Any] | None, after: dict[str, Any] | None) -> float:
    """Write units a table write costs in the global secondary indexes, by each index's projection:
    an item entering or leaving an index is one index write, a changed index key two (delete +
    put), a change of a projected attribute one, each by the index entry's size (table keys + index
    keys + the projected attributes; for ALL, the whole item). A change of attributes the index
    does not project costs nothing in it."""
    units = 0.0
    for index in indexes:
        was = before is not None and all(k in before for k in index.keys)
        now = after is not None and all(k in after for k in index.keys)
        if was and now:
            assert before is not None
            assert after is not None
            old, new = index.entry(before), index.entry(after)
            if any(before[k] != after[k] for k in index.keys):
                units += write_units(item_size(old)) + write_units(item_size(new))
            elif old != new:
                units += write_units(max(item_size(old), item_size(new)))
        elif now:
            assert after is not None
            units += write_units(item_size(index.entry(after)))
        elif was:
            assert before is not None
            units += write_units(item_size(index.entry(before)))
    return units


def batch_get_units(
    params: dict[str, Any], parsed: dict[str, Any], full_item: Callable[[str, dict[str, Any]], dict[str, Any] | None]
) -> tuple[float, int]:
    """(read units, items) of a BatchGetItem: each requested key that was processed is read as a
    GetItem of its own (an item's size rounded up to 4 KB separately, a missing item at least one
    unit), strongly consistent or not per table (``ConsistentRead`` in ``RequestItems``). A
    ``ProjectionExpression`` does not lower the bill: the whole item is sized (``full_item(table,
    key)``, read from moto), as it is when the response's items do not carry their keys."""
    units = 0.0
    items = 0
    unprocessed = parsed.get("UnprocessedKeys") or {}
    for table, request in (params.get("RequestItems") or {}).items():
        consistent = bool(request.get("ConsistentRead"))
        skipped = (unprocessed.get(table) or {}).get("Keys") or []
        keys = [key for key in request.get("Keys") or [] if key not in skipped]
        returned = (parsed.get("Responses") or {}).get(table) or []
        projected = "ProjectionExpression" in request or "AttributesToGet" in request
        for key in keys:
            item = None
            if not projected:
                item = next((i for i in returned if all(i.get(k) == v for k, v in key.items())), None)
            if item is None:
                item = full_item(table, key)
            units += read_units(item_size(item), consistent=consistent)
            items += 1
    return units, items


WRITE_OPS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
"""The DynamoDB operations whose request bodies count as bytes written."""
_QUERY_REDUCERS = ("Select", "FilterExpression", "ProjectionExpression", "AttributesToGet")
"""Query parameters that make the response differ from the items DynamoDB reads (and bills)."""
