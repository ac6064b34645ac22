"""The tasks table's low-level calls: the typed client and the table's name, with what DynamoDB's
API leaves to its caller (pagination, BatchGetItem's unprocessed keys, a transaction's idempotency
token and the reasons it was cancelled)."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypedDict, cast

from botocore.exceptions import ClientError

from ...aws import dynamodb_client
from .codec import Item
from .queries import QueryArgs

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import (
        AttributeValueTypeDef,
        KeysAndAttributesTypeDef,
        PutTypeDef,
        TransactWriteItemTypeDef,
        UpdateItemInputTypeDef,
    )

__all__ = ["NOT_EXISTS", "CancellationReason", "Table", "cancellation_reasons"]

NOT_EXISTS = "attribute_not_exists(pk)"
"""A put's condition that its key is free."""


class CancellationReason(TypedDict, total=False):
    """One entry of a cancelled transaction's ``CancellationReasons``: botocore's error response is
    untyped and the stubs declare no shape for it, so the fields the store reads are named here."""

    Code: str
    Message: str
    Item: Item


def cancellation_reasons(exc: ClientError) -> list[CancellationReason]:
    if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return []
    # botocore-stubs declare each reason's Item as an opaque TypedDict; on the wire it is the
    # item's attribute map, so the one cast is here rather than at each reader.
    return cast("list[CancellationReason]", list(exc.response.get("CancellationReasons", [])))


class Table:
    """One table through one client; ``client`` None: one is created on first use (standard retry
    mode) and kept for warm invocations."""

    def __init__(self, name: str, client: DynamoDBClient | None = None) -> None:
        self.name = name
        self._client = client

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            self._client = dynamodb_client()
        return self._client

    def put(self, item: Item, condition: str = "") -> PutTypeDef:
        """A ``Put`` of ``item`` (for a transaction, or PutItem's arguments)."""
        put: PutTypeDef = {"TableName": self.name, "Item": item}
        if condition:
            put["ConditionExpression"] = condition
        return put

    def put_if(self, put: PutTypeDef) -> bool:
        """PutItem of ``put`` (:meth:`put`'s arguments, with any expression names and values);
        False when its condition failed."""
        return _conditional(lambda: self.client.put_item(**put))

    def update_if(
        self,
        key: Item,
        update: str,
        condition: str,
        values: dict[str, AttributeValueTypeDef],
        names: dict[str, str] | None = None,
    ) -> bool:
        """UpdateItem of the item at ``key``; False when ``condition`` failed."""
        args: UpdateItemInputTypeDef = {
            "TableName": self.name,
            "Key": key,
            "UpdateExpression": update,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }
        if names:
            args["ExpressionAttributeNames"] = names
        return _conditional(lambda: self.client.update_item(**args))

    def delete(self, key: Item) -> None:
        """DeleteItem at ``key`` (nothing there: nothing to do)."""
        self.client.delete_item(TableName=self.name, Key=key)

    def transact(self, puts: Sequence[PutTypeDef]) -> None:
        """The puts as one transaction. Its ``ClientRequestToken`` makes botocore's own retries
        idempotent: had the first attempt landed unseen (a timeout), the retry would otherwise fail
        its conditions and report a conflict."""
        items: list[TransactWriteItemTypeDef] = [{"Put": put} for put in puts]
        self.client.transact_write_items(TransactItems=items, ClientRequestToken=str(uuid.uuid4()))

    def get(self, pk: str, sk: str) -> Item | None:
        response = self.client.get_item(
            TableName=self.name, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
        )
        item: Item | None = response.get("Item")
        return item

    def query(self, args: QueryArgs, limit: int | None = None) -> Iterator[Item]:
        """Every item the query matches (pages of ``limit``), following ``LastEvaluatedKey`` lazily."""
        page: QueryArgs = args if limit is None else args | {"Limit": limit}
        while True:
            response = self.client.query(TableName=self.name, **page)
            yield from response.get("Items", [])
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            page = page | {"ExclusiveStartKey": last}

    def count(self, args: QueryArgs) -> int:
        total = 0
        page: QueryArgs = args | {"Select": "COUNT"}
        while True:
            response = self.client.query(TableName=self.name, **page)
            total += int(response.get("Count", 0))
            last = response.get("LastEvaluatedKey")
            if not last:
                return total
            page = page | {"ExclusiveStartKey": last}

    def batch_get(self, keys: list[Item]) -> Iterator[Item]:
        """Every item of ``keys`` that exists, retrying what DynamoDB leaves unprocessed."""
        request: dict[str, KeysAndAttributesTypeDef] = {self.name: {"Keys": keys}}
        for attempt in range(8):
            response = self.client.batch_get_item(RequestItems=request)
            yield from response.get("Responses", {}).get(self.name, [])
            # The unprocessed keys come back in the shape they were sent in (the stubs name it apart).
            request = cast("dict[str, KeysAndAttributesTypeDef]", response.get("UnprocessedKeys") or {})
            if not request:
                return
            time.sleep(0.05 * 2**attempt * random.random())
        raise RuntimeError("BatchGetItem kept leaving keys unprocessed")


def _conditional(write: Callable[[], object]) -> bool:
    """Run a conditional write: True when it was made, False when its condition failed."""
    try:
        write()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return False
        raise
    return True
