"""The tasks table (layout: :mod:`.store`): its keys and items, in the low-level client's form, and
its one door, :class:`Table`, the only holder of the boto3 client.

**Keys and items.** Every key component that comes from a caller is percent-encoded
(``quote(value, safe="")``), so a ``#`` inside a tenant, owner or id can never make one scope's key
equal to another's. JSON payloads of 2 KB and more (event batches, snapshots) are stored
zlib-compressed, as a binary attribute whose name ends in ``Z``: DynamoDB bills by stored bytes, and
A2A JSON repeats its ids in every event.

**The door.** Each conditional write is one of :class:`Table`'s named methods, its condition built
from the named parts below (:data:`KEY_FREE`, :data:`HEAD_UNCHANGED`, ...); a condition that failed
comes back as False or as :class:`WriteCancelled`, never as a raw ``ClientError`` for the caller to
pick apart. It also does what DynamoDB's API leaves to its caller: pagination, BatchGetItem's
unprocessed keys, a transaction's idempotency token and the reasons it was cancelled.
"""

from __future__ import annotations

import hashlib
import random
import time
import uuid
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal, TypedDict, cast
from urllib.parse import quote

from botocore.exceptions import ClientError

from ... import telemetry
from ...aws import dynamodb_client
from ...json_types import Json
from ...models import TaskPushNotificationConfig, TaskState, format_timestamp
from ...ports.push_marks import PushTarget
from ...ports.store import AcceptedMessage, Checkpoint, KeyKind, Scope, SendKey, TaskHead, TaskRecord, parse_timestamp
from ...versions import ProtocolVersion, stored_version

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import (
        AttributeValueTypeDef,
        KeysAndAttributesTypeDef,
        PutTypeDef,
        TransactWriteItemTypeDef,
        UpdateItemInputTypeDef,
    )

__all__ = [
    "EVENT_SK_LAST",
    "HEAD_UNCHANGED",
    "HELD_BYTES",
    "KEY_FREE",
    "KEY_NAMES_REPLACED",
    "KEY_TAKEN",
    "LEASE_SHARDS",
    "META_SK",
    "PUSH_SK_END",
    "PUSH_SK_PREFIX",
    "RUN_UNMARKED",
    "SNAPSHOT_SK",
    "VERSION_IS",
    "CancellationReason",
    "Item",
    "Keys",
    "LogItem",
    "QueryArgs",
    "Table",
    "WriteCancelled",
    "abandoned_head",
    "accepted_message_from",
    "config_from_item",
    "event_sk",
    "head_from_item",
    "head_item",
    "held_log",
    "held_snapshot",
    "is_abandoned",
    "lease_shard",
    "log_item",
    "log_item_from",
    "mark_below",
    "mark_of",
    "number",
    "push_item",
    "push_sk",
    "push_target_from_item",
    "push_upsert",
    "read_payload",
    "send_key_address",
    "send_key_item",
    "snapshot_item",
    "string",
    "ttl_epoch",
]

Item = dict[str, "AttributeValueTypeDef"]
"""A DynamoDB item in the low-level client's shape (``{"name": {"S": "..."}}``)."""

META_SK = "META"
SNAPSHOT_SK = "META#SNAP"
"""Sorts right after the head and after every event (``EVT#...`` < ``META`` < ``META#SNAP`` <
``PUSH#...``): one Query from ``META#SNAP`` down, two items long, reads snapshot and head."""
_MSG_SK = "MSG"
_HEADER_SK = "IDEM"
PUSH_SK_PREFIX = "PUSH#"
PUSH_SK_END = "PUSH$"  # '$' follows '#': every "PUSH#<id>" sorts below it
EVENT_SK_LAST = "EVT#" + "9" * 12
LEASE_SHARDS = 8
"""The lease index's partitions: a running task's head is in one of them (by its key's hash), so
lease renewals of many running tasks spread over several index partitions."""
_COMPRESS_FROM = 2048


def _q(value: str) -> str:
    return quote(value, safe="")


MAX_OWNER_KEY_CHARS = 256
"""An owner whose encoded name is longer than this is keyed by its digest. Owners come from the
authenticator (a JWT ``sub``, an IAM ARN, a custom authorizer's principal id), unbounded in length,
while a partition key holds at most 2,048 bytes, with the tenant and an id (256 bytes each, up to
three times that encoded) beside the owner."""


def _owner(owner: str) -> str:
    encoded = _q(owner)
    if len(encoded) <= MAX_OWNER_KEY_CHARS:
        return encoded
    # "!" never appears in an encoded name (quote escapes it), so no owner's key can equal a digest.
    return "!" + hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Keys:
    """The keys of one scope."""

    scope: Scope

    @property
    def _scope(self) -> str:
        return f"{_q(self.scope.tenant)}#{_owner(self.scope.owner)}"

    def task_pk(self, task_id: str) -> str:
        return f"TASK#{self._scope}#{_q(task_id)}"

    def message_pk(self, message_id: str) -> str:
        return f"MSG#{self._scope}#{_q(message_id)}"

    def header_key_pk(self, value: str) -> str:
        return f"IDEM#{self._scope}#{_q(value)}"

    def scope_gsi_pk(self) -> str:
        return f"SCOPE#{self._scope}"

    def context_gsi_pk(self, context_id: str) -> str:
        return f"CTX#{self._scope}#{_q(context_id)}"


def event_sk(seq: int) -> str:
    return f"EVT#{seq:012d}"


def push_sk(config_id: str) -> str:
    # Not encoded: the partition is already scoped and the prefix keeps it apart from META and
    # EVT#, so the raw id is safe, and it keeps the configs in id order.
    return PUSH_SK_PREFIX + config_id


def lease_shard(task_pk: str) -> str:
    return f"RUN#{int(hashlib.sha256(task_pk.encode()).hexdigest()[:4], 16) % LEASE_SHARDS}"


def ttl_epoch(start: datetime, ttl_days: int) -> int | None:
    return int((start + timedelta(days=ttl_days)).timestamp()) if ttl_days > 0 else None


def string(value: str) -> AttributeValueTypeDef:
    return {"S": value}


def number(value: int) -> AttributeValueTypeDef:
    return {"N": str(value)}


def _with_ttl(item: Item, ttl: int | None) -> Item:
    if ttl is not None:
        item["ttl"] = number(ttl)
    return item


def _payload(name: str, text: str) -> Item:
    """``text`` as attribute ``name``, or compressed as ``name + "Z"`` when that saves write units."""
    raw = text.encode("utf-8")
    return {name + "Z": {"B": zlib.compress(raw, 6)}} if len(raw) >= _COMPRESS_FROM else {name: string(text)}


def read_payload(item: Item, name: str) -> str:
    packed = item.get(name + "Z")
    if packed is not None:
        return zlib.decompress(bytes(packed["B"])).decode("utf-8")
    return str(item[name]["S"])


# ------------------------------------------------------------------------------------ the head


def head_item(record: TaskRecord, listing_key: str, ttl: int | None, updated_at: datetime) -> Item:
    """The whole head of ``record`` as it is stored (its version, last seq and checkpoint are the
    new ones). Every write of a head puts it whole, conditioned on the version it replaces: small
    and of a fixed shape, a put costs what an update would, and moto answers it four times faster.
    The listing keys are left out for a message-only reply (it is never listed), the lease while
    nothing runs (the lease index is sparse)."""
    if record.created_at is None:
        raise ValueError("a task's head needs its creation time (records read from the store carry it)")
    keys = Keys(record.scope)
    pk = keys.task_pk(record.task_id)
    item: Item = {
        "pk": string(pk),
        "sk": string(META_SK),
        "version": number(record.version),
        "lastSeq": number(record.last_seq),
        "snapSeq": number(record.checkpoint.seq),
        "snapBytes": number(record.checkpoint.size),
        "tailBytes": number(record.checkpoint.tail),
        "state": string(record.state.value),
        "contextId": string(record.task.context_id),
        "cancelRequested": {"BOOL": record.cancel_requested},
        "pendingMessageId": string(record.pending_message_id),
        "runningMessageId": string(record.running_message_id),
        "replied": {"BOOL": record.replied},
        "protocolVersion": string(record.protocol_version),
        "tenant": string(record.scope.tenant),
        "owner": string(record.scope.owner),
        "taskId": string(record.task_id),
        "createdAt": string(format_timestamp(record.created_at)),
        "updatedAt": string(format_timestamp(updated_at)),
    }
    if not record.replied:
        item |= {
            "gsi1pk": string(keys.scope_gsi_pk()),
            "gsi1sk": string(listing_key),
            "gsi2pk": string(keys.context_gsi_pk(record.task.context_id)),
            "gsi2sk": string(listing_key),
        }
    if record.lease_until:
        item |= {"leaseUntil": number(record.lease_until), "leaseShard": string(lease_shard(pk))}
    waits = {"waitingCallback": record.waiting_callback, "waitingToken": record.waiting_token}
    item |= {name: string(value) for name, value in {**waits, "pushWoken": record.push_woken}.items() if value}
    if record.checkpoint.held:
        # The events that closed the log (HELD_BYTES at most, with the snapshot), held here instead
        # of a log item; the dispatcher is fed by this head's record (heldFirst) and continues its trace.
        item |= {**_payload("held", record.checkpoint.held), "heldFirst": number(record.checkpoint.held_first)}
        if trace := telemetry.traceparent():
            item["trace"] = string(trace)
    if record.checkpoint.snapshot:
        item |= _payload("task", record.checkpoint.snapshot)  # the snapshot as of snapSeq: no snapshot item
    return _with_ttl(item, ttl)


def abandoned_head(pk: str, ttl: int | None) -> Item:
    """What stands at a task's head when its create was abandoned (``TaskStore.abandon_create``): it
    keeps the head from ever being written, and readers take it for no task."""
    return _with_ttl({"pk": string(pk), "sk": string(META_SK), "abandoned": {"BOOL": True}}, ttl)


def is_abandoned(item: Item) -> bool:
    return bool(item.get("abandoned", {}).get("BOOL", False))


def held_snapshot(item: Item) -> str:
    """The task's snapshot a head holds (:func:`head_item`), '' when it holds none."""
    return read_payload(item, "task") if "task" in item or "taskZ" in item else ""


def head_from_item(scope: Scope, item: Item) -> tuple[TaskHead, Checkpoint]:
    created = item.get("createdAt", {}).get("S")
    head = TaskHead(
        scope=scope,
        task_id=str(item["taskId"]["S"]),
        state=TaskState(item["state"]["S"]),
        version=int(item["version"]["N"]),
        last_seq=int(item["lastSeq"]["N"]),
        cancel_requested=bool(item.get("cancelRequested", {}).get("BOOL", False)),
        pending_message_id=str(item.get("pendingMessageId", {}).get("S", "")),
        running_message_id=str(item.get("runningMessageId", {}).get("S", "")),
        lease_until=int(item.get("leaseUntil", {}).get("N", "0")),
        replied=bool(item.get("replied", {}).get("BOOL", False)),
        created_at=parse_timestamp(created) if created else None,
        protocol_version=stored_version(item.get("protocolVersion", {}).get("S")),
        waiting_callback=str(item.get("waitingCallback", {}).get("S", "")),
        waiting_token=str(item.get("waitingToken", {}).get("S", "")),
        push_woken=str(item.get("pushWoken", {}).get("S", "")),
    )
    held_first = int(item.get("heldFirst", {}).get("N", "0"))
    checkpoint = Checkpoint(
        seq=int(item.get("snapSeq", {}).get("N", "0")),
        size=int(item.get("snapBytes", {}).get("N", "0")),
        tail=int(item.get("tailBytes", {}).get("N", "0")),
        held=read_payload(item, "held") if held_first else "",
        held_first=held_first,
        snapshot=held_snapshot(item),
    )
    return head, checkpoint


def held_log(item: Item) -> LogItem | None:
    """The events a head holds (its ``heldFirst`` .. ``lastSeq``), read as a log item; None when it
    holds none."""
    first = int(item.get("heldFirst", {}).get("N", "0"))
    if not first:
        return None
    return LogItem(
        first, int(item["lastSeq"]["N"]), read_payload(item, "held"), str(item.get("trace", {}).get("S", ""))
    )


# ------------------------------------------------------------------------------- log and snapshot


def log_item(
    scope: Scope, task_id: str, first_seq: int, payloads: Sequence[str], now: datetime, ttl: int | None
) -> Item:
    """One log item: the events ``first_seq`` .. ``first_seq + len(payloads) - 1``, keyed by the
    last of them (a read after seq n queries the keys above n and gets every item holding events
    after n). ``seq`` is that last one: the push dispatcher, fed by the table's stream, delivers up
    to it."""
    last_seq = first_seq + len(payloads) - 1
    item: Item = {
        "pk": string(Keys(scope).task_pk(task_id)),
        "sk": string(event_sk(last_seq)),
        "seq": number(last_seq),
        "first": number(first_seq),
        **_payload("events", "[" + ",".join(payloads) + "]"),
        "taskId": string(task_id),
        "tenant": string(scope.tenant),
        "owner": string(scope.owner),
        "createdAt": string(format_timestamp(now)),
        **({"trace": string(trace)} if (trace := telemetry.traceparent()) else {}),  # the dispatcher's parent
    }
    return _with_ttl(item, ttl)


@dataclass(frozen=True, slots=True)
class LogItem:
    first: int
    last: int
    events_json: str
    """A JSON array of StreamResponse objects: events ``first`` .. ``last``."""
    trace: str = ""


def log_item_from(item: Item) -> LogItem:
    trace = str(item.get("trace", {}).get("S", ""))
    return LogItem(int(item["first"]["N"]), int(item["seq"]["N"]), read_payload(item, "events"), trace)


HELD_BYTES = 3 * 1024
"""The most bytes of events (and of the snapshot with them) a head holds (:func:`head_item`): with
its ~0.7 KB of bookkeeping it stays within one 4 KB read unit, for the heads waiters, watchers and
ListTasks read."""


def snapshot_item(scope: Scope, task_id: str, seq: int, task_json: str, ttl: int | None) -> Item:
    item: Item = {
        "pk": string(Keys(scope).task_pk(task_id)),
        "sk": string(SNAPSHOT_SK),
        "seq": number(seq),
        **_payload("task", task_json),
        "taskId": string(task_id),
        "tenant": string(scope.tenant),
        "owner": string(scope.owner),
    }
    return _with_ttl(item, ttl)


# ------------------------------------------------------------------------------------ the rest


def send_key_address(scope: Scope, key: SendKey) -> tuple[str, str]:
    """(pk, sk) of a send key: ``MSG#<scope>#<messageId>`` / ``MSG`` for a messageId's first use and
    ``MSG#<fingerprint>`` for a reuse of it (the fingerprint is hex); ``IDEM#<scope>#<value>`` /
    ``IDEM`` for an ``Idempotency-Key`` header."""
    keys = Keys(scope)
    if key.kind is KeyKind.HEADER:
        return keys.header_key_pk(key.name), _HEADER_SK
    if key.kind is KeyKind.REUSED_MESSAGE:
        return keys.message_pk(key.name), f"{_MSG_SK}#{key.fingerprint}"
    return keys.message_pk(key.name), _MSG_SK


def send_key_item(scope: Scope, key: SendKey, task_id: str, ttl: int | None) -> Item:
    """A send key: the task the request went to and the request's fingerprint."""
    pk, sk = send_key_address(scope, key)
    item: Item = {
        "pk": string(pk),
        "sk": string(sk),
        "taskId": string(task_id),
        "tenant": string(scope.tenant),
        "owner": string(scope.owner),
    }
    if key.fingerprint:
        item["fp"] = string(key.fingerprint)
    return _with_ttl(item, ttl)


def accepted_message_from(item: Item) -> AcceptedMessage:
    return AcceptedMessage(str(item["taskId"]["S"]), str(item.get("fp", {}).get("S", "")))


def push_item(
    scope: Scope, config: TaskPushNotificationConfig, ttl: int | None, protocol_version: ProtocolVersion
) -> Item:
    """A new config item, its delivery cursor at 0 (inline configs, created with their task)."""
    item: Item = {
        "pk": string(Keys(scope).task_pk(config.task_id)),
        "sk": string(push_sk(config.id)),
        **_push_attributes(scope, config, protocol_version),
        "deliveredSeq": number(0),
    }
    return _with_ttl(item, ttl)


def push_upsert(
    scope: Scope,
    config: TaskPushNotificationConfig,
    ttl: int | None,
    start_after_seq: int,
    protocol_version: ProtocolVersion,
) -> Json:
    """UpdateItem arguments (minus ``TableName``) that create or replace a config, keeping the
    delivery cursor of a config that exists and starting a new one at ``start_after_seq``."""
    # Every name goes through ExpressionAttributeNames: "owner" and "ttl" are reserved words.
    ttl_attribute = {"ttl": number(ttl)} if ttl is not None else {}
    attributes = {**_push_attributes(scope, config, protocol_version), **ttl_attribute}
    names = {f"#{name}": name for name in [*attributes, "deliveredSeq"]}
    values = {f":{name}": value for name, value in attributes.items()} | {":start": number(start_after_seq)}
    assignments = [f"#{name} = :{name}" for name in attributes if name != "ttl"]
    if ttl is not None:
        assignments.append("#ttl = if_not_exists(#ttl, :ttl)")
    assignments.append("#deliveredSeq = if_not_exists(#deliveredSeq, :start)")
    return {
        "Key": {"pk": string(Keys(scope).task_pk(config.task_id)), "sk": string(push_sk(config.id))},
        "UpdateExpression": "SET " + ", ".join(assignments),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }


def _push_attributes(scope: Scope, config: TaskPushNotificationConfig, protocol_version: ProtocolVersion) -> Item:
    return {
        "config": string(config.to_json()),
        "protocolVersion": string(protocol_version),
        "configId": string(config.id),
        "taskId": string(config.task_id),
        "tenant": string(scope.tenant),
        "owner": string(scope.owner),
        **({"trace": string(trace)} if (trace := telemetry.traceparent()) else {}),  # the dispatcher's parent
    }


def config_from_item(item: Item) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig.model_validate_json(item["config"]["S"])


def push_target_from_item(item: Item) -> PushTarget:
    version = stored_version(item.get("protocolVersion", {}).get("S"))
    return PushTarget(config_from_item(item), mark_of(item, "deliveredSeq"), version, mark_of(item, "triedSeq"))


def mark_of(item: Item, name: str) -> int:
    """A push config's delivery mark (0 when unset)."""
    return int(item.get(name, {}).get("N", "0"))


# ------------------------------------------------------------------------------- the door

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
                    reason: CancellationReason = {"Code": "ConditionalCheckFailed"}
                    if old := cast("Item | None", exc.response.get("Item")):  # ReturnValuesOnConditionCheckFailure
                        reason["Item"] = old
                    raise WriteCancelled(exc, [reason]) from exc
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

    def put_checkpoint(self, item: Item) -> bool:
        """PutItem of a snapshot unless the one stored is as new (a checkpoint written after its
        commit may arrive after a newer one); False when it was not written."""
        put = self.put(item)
        put["ConditionExpression"] = _any(KEY_FREE, "seq < :seq")
        put["ExpressionAttributeValues"] = {":seq": item["seq"]}
        return self._conditional_put(put)

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

    def delete_naming(self, key: Item, task_id: str) -> bool:
        """DeleteItem of a send key if it still names ``task_id``; False when it does not (or is gone)."""
        try:
            self.client.delete_item(
                TableName=self.name,
                Key=key,
                ConditionExpression=KEY_NAMES_REPLACED,
                ExpressionAttributeValues={":replaces": string(task_id)},
            )
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

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
