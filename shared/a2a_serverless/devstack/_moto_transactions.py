"""A faster ``TransactWriteItems`` for moto, installed by the local stack.

moto backs every transaction up by deep-copying each target *table*, once per item: a three-item
transaction on a table of a thousand items took about 250 ms here, and the local stack slowed down
quadratically as tasks accumulated. This version keeps DynamoDB's semantics (all conditions are
checked against the state before the transaction; all writes happen, or none) with a two-phase
apply: check every condition first, then write, restoring only the touched items if a write
fails.

One lock serialises every write: transactions, and moto's single-item PutItem, UpdateItem and
DeleteItem, each of which reads the item, checks its condition and writes it without a lock.
DynamoDB applies each request to an item atomically; without the lock a conditional UpdateItem
(CancelTask marking a running task) and a transaction on the same item (the worker's next event),
both conditioned on the same version, could both pass their checks on the local stack's threaded
moto server, and the later write dropped the earlier one's change.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["fast_transactions", "install_fast_transactions"]

_LOCK = threading.RLock()


_SINGLE_WRITES = ("put_item", "update_item", "delete_item")


def _serialized(method: Any) -> Any:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
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


def install_fast_transactions() -> None:
    """Replace moto's ``DynamoDBBackend`` transactions (and lock its single-item writes) for the
    rest of the process."""
    from moto.dynamodb.models import DynamoDBBackend

    for name, method in _replacements().items():
        setattr(DynamoDBBackend, name, method)


@contextlib.contextmanager
def fast_transactions() -> Iterator[None]:
    """The replacements for the duration of a block (tests)."""
    from moto.dynamodb.models import DynamoDBBackend

    originals = {name: getattr(DynamoDBBackend, name) for name in ("transact_write_items", *_SINGLE_WRITES)}
    for name, method in _replacements().items():
        setattr(DynamoDBBackend, name, method)
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(DynamoDBBackend, name, method)


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
    with _LOCK:
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
