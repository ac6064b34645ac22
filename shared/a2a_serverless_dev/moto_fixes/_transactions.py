"""Fix ``transactions``: TransactWriteItems without copying tables, and every write to an item
atomic with every other.

**moto's behaviour** (moto 5.2.5, ``moto/dynamodb/models/__init__.py``,
``DynamoDBBackend.transact_write_items``): before applying a transaction it backs up each target
table with ``copy.deepcopy(table)``, once per transaction item, to restore on failure. A
three-item transaction on a table of a thousand items took about 250 ms, and the local stack slowed
down quadratically as tasks accumulated. Separately, ``put_item``, ``update_item`` and
``delete_item`` read the item, evaluate the condition and write without a lock, and moto's server
answers requests on concurrent threads: a conditional UpdateItem and a transaction conditioned on
the same version could both pass their checks, the later write dropping the earlier one's change.

**AWS's behaviour** (DynamoDB Developer Guide, "Amazon DynamoDB Transactions: How it works", its
sections "TransactWriteItems API" and "Isolation levels for DynamoDB transactions"; API Reference,
"TransactWriteItems"): the actions of a TransactWriteItems complete atomically, all or none, with
conditions evaluated against the items as they were; transactions are serializable with respect to
PutItem, UpdateItem and DeleteItem on the same items. Its cost does not depend on the table's size.

**A minimal reproduction**::

    import time, boto3
    from moto import mock_aws
    with mock_aws():
        db = boto3.client("dynamodb", region_name="us-east-1")
        db.create_table(TableName="t", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST")
        for n in range(5000):
            db.put_item(TableName="t", Item={"pk": {"S": str(n)}, "v": {"S": "x" * 200}})
        start = time.perf_counter()
        db.transact_write_items(TransactItems=[
            {"Put": {"TableName": "t", "Item": {"pk": {"S": f"new{n}"}}}} for n in range(3)])
        print(time.perf_counter() - start)  # grows with the table: three deep copies of it

**The upstream report** (for getmoto/moto)::

    Title: DynamoDB TransactWriteItems deep-copies every target table per item (cost grows with
    table size); single-item writes are not atomic under the threaded server

    `DynamoDBBackend.transact_write_items` backs up state with `copy.deepcopy(table)` for each
    transaction item before applying it. On a table of a few thousand items a three-item
    transaction takes hundreds of milliseconds, and a test suite that writes transactionally
    slows down quadratically. AWS documents the operation as all-or-nothing with conditions
    checked against the prior state; a two-phase apply (check every condition, then write, and
    on a failed write restore only the touched items) gives the same semantics at a cost
    independent of the table size.

    Related: `put_item`/`update_item`/`delete_item` check their ConditionExpression and write
    without a lock. Under `ThreadedMotoServer` two conditional writes on one item can both pass
    their checks (DynamoDB applies each request to an item atomically, and serializes
    transactions with single-item writes). One backend lock around conditional writes and
    transactions would fix it.

    Reproduction: (the snippet above). moto 5.2.5, Python 3.11.

The fix replaces ``transact_write_items`` with a two-phase apply and serialises it and the three
single-item writes behind one re-entrant lock (:data:`WRITE_LOCK`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from collections.abc import Iterator
from typing import Any

from ._shape import Fix, Target, sample_table

__all__ = ["FIX", "WRITE_LOCK", "fast_transactions"]

WRITE_LOCK = threading.RLock()
"""Held by every transaction and every single-item write (tests hold it to stand for a transaction
between its checks and its writes)."""

_SINGLE_WRITES = ("put_item", "update_item", "delete_item")
_BACKEND = "moto.dynamodb.models:DynamoDBBackend"
_EXCEPTIONS = (
    "ConditionalCheckFailed",
    "MultipleTransactionsException",
    "TooManyTransactionsException",
    "TransactionCanceledException",
    "TransactWriteSingleOpException",
)


def _serialized(method: Any) -> Any:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        with WRITE_LOCK:
            return method(self, *args, **kwargs)

    call._a2a_serialized = True  # type: ignore[attr-defined]
    return call


def _replacements() -> dict[str, Any]:
    from moto.dynamodb.models import DynamoDBBackend

    replacements: dict[str, Any] = {"transact_write_items": _transact_write_items}
    for name in _SINGLE_WRITES:
        original = getattr(DynamoDBBackend, name)
        replacements[name] = original if getattr(original, "_a2a_serialized", False) else _serialized(original)
    return replacements


def install() -> None:
    """Replace moto's transactions (and lock its single-item writes) for the rest of the process."""
    from moto.dynamodb.models import DynamoDBBackend

    for name, method in _replacements().items():
        setattr(DynamoDBBackend, name, method)


@contextlib.contextmanager
def fast_transactions() -> Iterator[None]:
    """The fix for the duration of a block (tests on in-process moto)."""
    from moto.dynamodb.models import DynamoDBBackend

    FIX.check()
    originals = {name: getattr(DynamoDBBackend, name) for name in ("transact_write_items", *_SINGLE_WRITES)}
    for name, method in _replacements().items():
        setattr(DynamoDBBackend, name, method)
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(DynamoDBBackend, name, method)


FIX = Fix(
    name="transactions",
    module=__name__,
    install=install,
    targets=(
        Target(f"{_BACKEND}.transact_write_items", ("self", "transact_items")),
        Target(
            f"{_BACKEND}.put_item",
            (
                "self",
                "table_name",
                "item_attrs",
                "expected",
                "condition_expression",
                "expression_attribute_names",
                "expression_attribute_values",
                "overwrite",
                "return_values_on_condition_check_failure",
            ),
        ),
        Target(
            f"{_BACKEND}.update_item",
            (
                "self",
                "table_name",
                "key",
                "update_expression",
                "expression_attribute_names",
                "expression_attribute_values",
                "attribute_updates",
                "expected",
                "condition_expression",
                "return_values_on_condition_check_failure",
            ),
        ),
        Target(
            f"{_BACKEND}.delete_item",
            (
                "self",
                "table_name",
                "key",
                "expression_attribute_names",
                "expression_attribute_values",
                "condition_expression",
                "return_values_on_condition_check_failure",
            ),
        ),
        Target(f"{_BACKEND}.get_item", ("self", "table_name", "keys", "projection_expressions")),
        Target(f"{_BACKEND}.get_table", ("self", "table_name")),
        Target("moto.dynamodb.comparisons:get_filter_expression", ("expr", "names", "values")),
        Target("moto.dynamodb.models.dynamo_type:Item.to_json", ("self", "root_attr_name")),
        Target(
            "moto.dynamodb.models.table:Table",
            callable=True,
            attributes=("hash_key_attr", "range_key_attr"),
            sample=sample_table,
        ),
        *(Target(f"moto.dynamodb.exceptions:{name}") for name in _EXCEPTIONS),
    ),
)


def _transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        ConditionalCheckFailed,
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )

    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    with WRITE_LOCK:
        seen: set[tuple[str, str]] = set()
        plan: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = []
        errors: list[tuple[Any, Any, Any]] = []
        for entry in transact_items:
            if len(entry) > 1:
                raise TransactWriteSingleOpException
            op_type, op = next(iter(entry.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ValueError("Unsupported transaction operation")
            table_name = op["TableName"]
            table = self.get_table(table_name)
            if op_type == "Put":
                attrs = op["Item"]
                key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                if table.range_key_attr is not None:
                    key[table.range_key_attr] = attrs[table.range_key_attr]
            else:
                key = op["Key"]
            marker = (str(table_name), str(dict(sorted(key.items()))))
            if marker in seen:
                raise MultipleTransactionsException()
            seen.add(marker)
            current = self.get_item(table_name, key)
            condition = op.get("ConditionExpression")
            failed_item = None
            if condition is not None:
                check = get_filter_expression(
                    condition, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
                )
                if not check.expr(current):
                    if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                        failed_item = current.to_json()["Attributes"]
                    errors.append(("ConditionalCheckFailed", ConditionalCheckFailed().message, failed_item))
                    continue
            errors.append((None, None, None))
            plan.append((op_type, op, table_name, key))
        if any(code is not None for code, _, _ in errors):
            raise TransactionCanceledException(errors)

        backups = [(table_name, key, copy.deepcopy(self.get_item(table_name, key))) for _, _, table_name, key in plan]
        try:
            for op_type, op, table_name, key in plan:
                names, values = op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
                if op_type == "Put":
                    self.put_item(table_name, op["Item"])
                elif op_type == "Delete":
                    self.delete_item(table_name, key)
                elif op_type == "Update":
                    self.update_item(
                        table_name,
                        key,
                        update_expression=op["UpdateExpression"],
                        expression_attribute_names=names,
                        expression_attribute_values=values,
                    )
        except Exception:
            for table_name, key, item in backups:
                if item is None:
                    self.delete_item(table_name, key)
                else:
                    self.put_item(table_name, item.to_json()["Attributes"])
            raise
