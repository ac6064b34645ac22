"""The tasks table's one door: :class:`Table`, the only holder of the boto3 client (keys and
items: :mod:`.codec`).

Each conditional write is one of its named methods, its condition built from the named parts below
(:data:`KEY_FREE`, :data:`HEAD_UNCHANGED`, ...); a condition that failed comes back as False or as
:class:`WriteCancelled`, never as a raw ``ClientError`` for the caller to pick apart. It also does
what DynamoDB's API leaves to its caller: pagination, BatchGetItem's unprocessed keys, a
transaction's idempotency token and the reasons it was cancelled.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from botocore.exceptions import ClientError

from ...aws import dynamodb_client
from ...json_types import Json
from ...models import format_timestamp
from .codec import Item, number, string

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import (
        KeysAndAttributesTypeDef,
        PutTypeDef,
        TransactWriteItemTypeDef,
        UpdateItemInputTypeDef,
    )

__all__ = [
    "HEAD_UNCHANGED",
    "KEY_FREE",
    "KEY_NAMES_REPLACED",
    "KEY_TAKEN",
    "RUN_UNMARKED",
    "VERSION_IS",
    "CancellationReason",
    "QueryArgs",
    "Table",
    "WriteCancelled",
    "mark_below",
]

# ------------------------------------------------------------------------------- the conditions

KEY_FREE = "attribute_not_exists(pk)"
"""The item's key is free: nothing is ever overwritten by a put meant to create."""
KEY_TAKEN = "attribute_exists(pk)"
"""The item exists: an update never brings a deleted item back."""
HEAD_UNCHANGED = "#version = :expectedVersion AND #lastSeq = :expectedLastSeq"
"""The head is still the one the writer read (on a missing head the comparison is false)."""
KEY_NAMES_REPLACED = "taskId = :replaces"
"""A send key that names the task a new key replaces."""
RUN_UNMARKED = "runningMessageId = :run AND cancelRequested = :no"
"""The head's run is still this message's, and it carries no cancel mark yet."""
VERSION_IS = "#version = :version"
"""An agent state entry is still at the version its writer loaded."""


def mark_below(mark: str) -> str:
    """A push config's delivery mark is unset or below ``:seq``."""
    return f"(attribute_not_exists({mark}) OR {mark} < :seq)"


def _all(*parts: str) -> str:
    return " AND ".join(parts)


def _any(*parts: str) -> str:
    return " OR ".join(parts)


class CancellationReason(TypedDict, total=False):
    """One entry of a cancelled transaction's ``CancellationReasons``: botocore's error response is
    untyped and the stubs declare no shape for it, so the fields the store reads are named here."""

    Code: str
    Message: str
    Item: Item


class WriteCancelled(ClientError):
    """A conditional write that was not made: a transaction DynamoDB cancelled, or a single put whose
    condition failed. It is the ``ClientError`` DynamoDB answered (same response and operation), with
    ``reasons``: one per item of the transaction in its order (a single put: one
    ``ConditionalCheckFailed``)."""

    def __init__(self, error: ClientError, reasons: list[CancellationReason]) -> None:
        super().__init__(error.response, error.operation_name)
        self.reasons = reasons

    @property
    def codes(self) -> list[str]:
        return [str(reason.get("Code") or "None") for reason in self.reasons]


def _cancellation_reasons(exc: ClientError) -> list[CancellationReason]:
    # botocore-stubs declare each reason's Item as an opaque TypedDict; on the wire it is the
    # item's attribute map, so the one cast is here rather than at each reader.
    return cast("list[CancellationReason]", list(exc.response.get("CancellationReasons", [])))


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class QueryArgs(TypedDict, total=False):
    """Query arguments (:mod:`.queries` builds them; ``TableName`` is the table's to add)."""

    IndexName: str
    KeyConditionExpression: str
    FilterExpression: str
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: Item
    ScanIndexForward: bool
    Limit: int
    ConsistentRead: bool
    ProjectionExpression: str
    ExclusiveStartKey: Item
    Select: Literal["COUNT"]


# ------------------------------------------------------------------------------------ the table


class Table:
    """One table through one client; ``client`` None: one is created on first use (standard retry
    mode) and kept for warm invocations."""

    def __init__(self, name: str, client: DynamoDBClient | None = None) -> None:
        self.name = name
        self._client = client

    @property
    def client(self) -> DynamoDBClient:
        """The client, for what observes calls (the fault injection of tests); every call is a
        method of this class."""
        if self._client is None:
            self._client = dynamodb_client()
        return self._client

    # ------------------------------------------------------------ puts for a write

    def put(self, item: Item) -> PutTypeDef:
        """An unconditional ``Put`` of ``item``."""
        return {"TableName": self.name, "Item": item}

    def new_put(self, item: Item) -> PutTypeDef:
        """A ``Put`` of ``item`` if its key is free."""
        return {"TableName": self.name, "Item": item, "ConditionExpression": KEY_FREE}

    def head_put(self, item: Item, expected_version: int, expected_last_seq: int) -> PutTypeDef:
        """A ``Put`` of a head that replaces the head at this version and last seq."""
        return {
            "TableName": self.name,
            "Item": item,
            "ConditionExpression": HEAD_UNCHANGED,
            "ExpressionAttributeNames": {"#version": "version", "#lastSeq": "lastSeq"},
            "ExpressionAttributeValues": {
                ":expectedVersion": number(expected_version),
                ":expectedLastSeq": number(expected_last_seq),
            },
        }

    def send_key_put(self, item: Item, replaces: str) -> PutTypeDef:
        """A ``Put`` of a send key if its key is free (or names the task ``replaces``); a failed
        condition returns the key that exists (its cancellation reason's ``Item``)."""
        put = self.new_put(item)
        if replaces:
            put["ConditionExpression"] = _any(KEY_FREE, KEY_NAMES_REPLACED)
            put["ExpressionAttributeValues"] = {":replaces": string(replaces)}
        put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return put

    # ------------------------------------------------------------ writes

    def write(self, puts: Sequence[PutTypeDef]) -> None:
        """One put as a PutItem, several as one transaction (:meth:`transact`); raises
        :class:`WriteCancelled` when a condition failed."""
        if len(puts) == 1:
            try:
                self.client.put_item(**puts[0])
            except ClientError as exc:
                if _code(exc) == "ConditionalCheckFailedException":
                    raise WriteCancelled(exc, [{"Code": "ConditionalCheckFailed"}]) from exc
                raise
        else:
            self.transact(puts)

    def transact(self, puts: Sequence[PutTypeDef]) -> None:
        """The puts as one transaction; :class:`WriteCancelled` when DynamoDB cancelled it. Its
        ``ClientRequestToken`` makes botocore's own retries idempotent: had the first attempt landed
        unseen (a timeout), the retry would otherwise fail its conditions and report a conflict."""
        items: list[TransactWriteItemTypeDef] = [{"Put": put} for put in puts]
        try:
            self.client.transact_write_items(TransactItems=items, ClientRequestToken=str(uuid.uuid4()))
        except ClientError as exc:
            if _code(exc) == "TransactionCanceledException":
                raise WriteCancelled(exc, _cancellation_reasons(exc)) from exc
            raise

    def put_new(self, item: Item) -> bool:
        """PutItem of ``item`` if its key is free; False when it is taken."""
        return self._conditional_put(self.new_put(item))

    def put_at_version(self, item: Item, version: int) -> bool:
        """PutItem of ``item`` over the one at ``version`` (an agent state entry); False when it
        moved on or is gone."""
        put = self.put(item)
        put["ConditionExpression"] = VERSION_IS
        put["ExpressionAttributeNames"] = {"#version": "version"}
        put["ExpressionAttributeValues"] = {":version": number(version)}
        return self._conditional_put(put)

    def mark_cancel(self, key: Item, message_id: str, now: datetime) -> bool:
        """Set a head's cancel mark and move its version on, if it exists and still runs
        ``message_id`` unmarked; False otherwise."""
        return self._conditional_update(
            {
                "TableName": self.name,
                "Key": key,
                "UpdateExpression": "SET cancelRequested = :yes, #version = #version + :one, updatedAt = :now",
                "ConditionExpression": _all(KEY_TAKEN, RUN_UNMARKED),
                "ExpressionAttributeNames": {"#version": "version"},
                "ExpressionAttributeValues": {
                    ":yes": {"BOOL": True},
                    ":no": {"BOOL": False},
                    ":one": number(1),
                    ":run": string(message_id),
                    ":now": string(format_timestamp(now)),
                },
            }
        )

    def raise_mark(self, key: Item, mark: Literal["deliveredSeq", "triedSeq"], seq: int) -> bool:
        """Set a push config's ``mark`` to ``seq`` if the config exists and the mark is lower (or
        unset); returns whether it moved."""
        return self._conditional_update(
            {
                "TableName": self.name,
                "Key": key,
                "UpdateExpression": f"SET {mark} = :seq",
                "ConditionExpression": _all(KEY_TAKEN, mark_below(mark)),
                "ExpressionAttributeValues": {":seq": number(seq)},
            }
        )

    def upsert(self, update: Json) -> None:
        """UpdateItem of ``update`` (:func:`push_upsert`'s arguments), unconditional."""
        self.client.update_item(TableName=self.name, **update)

    def delete(self, key: Item) -> None:
        """DeleteItem at ``key`` (nothing there: nothing to do)."""
        self.client.delete_item(TableName=self.name, Key=key)

    def _conditional_put(self, put: PutTypeDef) -> bool:
        try:
            self.client.put_item(**put)
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def _conditional_update(self, update: UpdateItemInputTypeDef) -> bool:
        try:
            self.client.update_item(**update)
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # ------------------------------------------------------------ reads

    def get(self, pk: str, sk: str) -> Item | None:
        response = self.client.get_item(
            TableName=self.name, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
        )
        item: Item | None = response.get("Item")
        return item

    def query_page(self, args: QueryArgs) -> list[Item]:
        """The items of one page of the query (its ``Limit``, if any): no pages after it."""
        return list(self.client.query(TableName=self.name, **args).get("Items", []))

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
