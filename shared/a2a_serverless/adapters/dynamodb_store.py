"""``TaskStore`` on the single DynamoDB table ``TasksTable`` of ``template.yaml``.

Item layout (keys are built in :mod:`._dynamodb_codec`; caller values in keys are percent-encoded,
and an owner longer than 256 encoded characters is keyed as ``!<sha256 of the name>``):

* ``pk=TASK#<tenant>#<owner>#<taskId>``, ``sk=META``: the head, small and of a fixed shape whatever
  the task holds: ``version``, ``lastSeq``, the checkpoint (``snapSeq``, ``snapBytes``,
  ``tailBytes``), ``state``, ``contextId``, ``cancelRequested``, ``pendingMessageId``,
  ``runningMessageId``, ``replied``, ``protocolVersion``, ``tenant``, ``owner``, ``taskId``,
  ``createdAt``, ``updatedAt``, ``ttl``, the listing keys, and while a run is alive its lease
  (``leaseUntil``, ``leaseShard``).
* same pk, ``sk=EVT#<seq, 12 digits>``: a log item, the events ``first`` .. ``seq`` of one commit
  (``events``: a JSON array of StreamResponses, or ``eventsZ`` compressed), with ``taskId``,
  ``tenant``, ``owner``, ``createdAt``, ``ttl``. Append-only; keyed by its last event.
* same pk, ``sk=META#SNAP``: the snapshot, the whole Task (``task`` or ``taskZ``) as of event
  ``seq``, rewritten at checkpoints (the task settled, or the log outgrew the snapshot).
* same pk, ``sk=PUSH#<configId>``: one push ``config`` (JSON) and its delivery cursor ``deliveredSeq``.
* ``pk=MSG#<tenant>#<owner>#<messageId>``, ``sk=MSG``: send idempotency, ``taskId`` of the task the
  message created or continued, ``fp`` the fingerprint of the request (tells a re-send from a reuse).

Reads assemble the task: one strongly consistent Query returns the snapshot and the head (the two
keys at the top of the range, ``sk <= META#SNAP``); when events follow the snapshot, a second Query
returns their log items. A settled task therefore costs one read of two small-to-task-sized items.

Indexes (each projects only what its readers need, so an ordinary commit, which changes neither
what ListTasks sorts and filters on nor the lease, writes no index):

* ``ByScope`` (``gsi1pk = SCOPE#<tenant>#<owner>``, ``gsi1sk = <status timestamp, fixed width>#<taskId>``)
  and ``ByContext`` (``gsi2pk = CTX#<tenant>#<owner>#<contextId>``, the same sort key): ListTasks,
  newest first; they project the keys and ``state`` (the status filter). The tasks of a page are then
  read back: their snapshots in one BatchGetItem, and for unfinished ones the events after it.
* ``ByLease`` (``leaseShard = RUN#<0-7>``, ``leaseUntil``): the heads of running tasks, for the
  sweeper; it projects ``tenant``, ``owner`` and ``taskId``.

Every item of a task expires ``ttl_days`` after the task was created (``ttl`` omitted when 0).

Writes are conditional and atomic: a create is one transaction (head, idempotency key, first events,
optional push config); a commit is one transaction (head update conditioned on ``version`` and
``lastSeq``, the log items, each put only if its key is free, and the snapshot when one is due), or a
single conditional UpdateItem when it writes only the head. botocore's standard retry mode retries
throttling and transient errors; each transaction carries a ``ClientRequestToken``, so such a retry
of one that had landed unseen succeeds instead of failing its own conditions. (UpdateItem has no
token: that rare case surfaces as a ``VersionConflict``, and the caller's re-read shows its change
applied.) Nothing else is retried here, except a create that lost a ``TransactionConflict`` race.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast

from botocore.exceptions import ClientError
from pydantic import TypeAdapter

from ..aws import dynamodb_client
from ..blobs import PartOffloader
from ..lifecycle import DEFAULT_MAX_HISTORY, fold
from ..models import StreamResponse, Task, TaskPushNotificationConfig, utc_now
from ..ports.store import (
    AcceptedMessage,
    DuplicateMessage,
    PushTarget,
    Scope,
    StoredEvent,
    TaskHead,
    TaskPage,
    TaskQuery,
    TaskRecord,
    VersionConflict,
)
from ..versions import CURRENT, ProtocolVersion
from ._dynamodb_codec import (
    LEASE_SHARDS,
    META_SK,
    MSG_SK,
    PUSH_SK_PREFIX,
    SNAPSHOT_SK,
    Item,
    Keys,
    LogItem,
    accepted_message_from,
    config_from_item,
    head_condition,
    head_from_item,
    head_item,
    log_item,
    log_item_from,
    message_item,
    push_item,
    push_sk,
    push_target_from_item,
    push_upsert,
    read_payload,
    snapshot_item,
    ttl_epoch,
)
from ._dynamodb_queries import (
    QueryArgs,
    events_query,
    expired_leases_query,
    listing_queries,
    push_configs_query,
    task_query,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import PutTypeDef, TransactWriteItemTypeDef
from ._store_common import (
    check_listing_position,
    check_page_size,
    decode_page_token,
    encode_page_token,
    listing_fingerprint,
    listing_key,
    pack_events,
    plan_commit,
    plan_create,
    push_config_for,
    push_fingerprint,
    status_floor,
    to_millis,
)

__all__ = ["DynamoDBTaskStore"]

_CREATE_ATTEMPTS = 5
_READ_ATTEMPTS = 5
_NOT_EXISTS = "attribute_not_exists(pk)"
_LOST_RACE = frozenset({"ConditionalCheckFailed", "TransactionConflict"})
_EVENTS = TypeAdapter(list[StreamResponse])
_BATCH_GET_KEYS = 100


class DynamoDBTaskStore:
    """The production store. ``client`` is a low-level boto3 DynamoDB client; by default one is
    created on first use (standard retry mode) and kept for warm invocations."""

    notifies_changes: ClassVar[bool] = False

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | None = None,
        *,
        ttl_days: int = 30,
        clock: Callable[[], datetime] = utc_now,
        max_history: int = DEFAULT_MAX_HISTORY,
        offloader: PartOffloader | None = None,
    ) -> None:
        if ttl_days < 0:
            raise ValueError("ttl_days must be 0 (keep forever) or more")
        self._table = table_name
        self._client = client
        self._ttl_days = ttl_days
        self._clock = clock
        self._max_history = max_history
        self._offloader = offloader

    @property
    def client(self) -> DynamoDBClient:
        if self._client is None:
            self._client = dynamodb_client()
        return self._client

    # ------------------------------------------------------------------ tasks

    def create_task(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse],
        *,
        message_id: str | None,
        fingerprint: str = "",
        push_config: TaskPushNotificationConfig | None = None,
    ) -> TaskRecord:
        if self._offloader is not None:
            record, events = self._offloader.offload(record, events)
        plan = plan_create(record, events)
        payloads = plan.payloads
        push = push_config_for(push_config, record.task_id) if push_config is not None else None
        created_at = to_millis(record.created_at or self._clock())
        stored = replace(record, version=1, last_seq=len(payloads), created_at=created_at, checkpoint=plan.checkpoint)
        ttl = ttl_epoch(created_at, self._ttl_days)
        items: list[PutTypeDef] = [
            self._put(head_item(stored, listing_key(record.task, created_at), ttl, created_at), _NOT_EXISTS)
        ]
        if message_id is not None:
            items.append(self._message_put(record.scope, message_id, record.task_id, fingerprint, ttl))
        items += self._log_puts(record.scope, record.task_id, 1, payloads, created_at, ttl)
        if plan.snapshot is not None:
            items.append(self._put(snapshot_item(record.scope, record.task_id, len(payloads), plan.snapshot, ttl)))
        if push is not None:
            items.append(self._put(push_item(record.scope, push, ttl, record.protocol_version)))
        wrapped: list[TransactWriteItemTypeDef] = [{"Put": item} for item in items]
        attempts = 0
        while True:
            try:
                self.client.transact_write_items(TransactItems=wrapped, ClientRequestToken=_request_token())
                return stored
            except ClientError as exc:
                reasons = _cancellation_reasons(exc)
                codes = [str(reason.get("Code") or "None") for reason in reasons]
                if message_id is not None:
                    self._raise_if_duplicate(record.scope, message_id, reasons, 1)
                if "ConditionalCheckFailed" in codes:
                    raise VersionConflict(f"task {record.task_id} already exists") from None
                attempts += 1
                if "TransactionConflict" not in codes or attempts >= _CREATE_ATTEMPTS:
                    raise
            # Another create with this task or message id is in flight: once it settles, the
            # retry gets a definite answer (usually DuplicateMessage).
            time.sleep(0.05 * 2**attempts * (0.5 + random.random()))

    def _message_put(
        self, scope: Scope, message_id: str, task_id: str, fingerprint: str, ttl: int | None
    ) -> PutTypeDef:
        """The idempotency key's conditional put; a failed condition returns the key that exists."""
        item = message_item(scope, message_id, task_id, fingerprint, ttl)
        put = self._put(item, _NOT_EXISTS)
        put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return put

    def _raise_if_duplicate(
        self, scope: Scope, message_id: str, reasons: list[_CancellationReason], index: int
    ) -> None:
        """DuplicateMessage when the transaction failed on the message key at ``index``."""
        if len(reasons) > index and reasons[index].get("Code") == "ConditionalCheckFailed":
            old = reasons[index].get("Item")
            accepted = accepted_message_from(old) if old else self.find_message(scope, message_id)
            accepted = accepted or AcceptedMessage("")
            raise DuplicateMessage(task_id=accepted.task_id, fingerprint=accepted.fingerprint) from None

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        """DynamoDB tells no one: callers poll (a Streams consumer could, at the cost of a hop)."""
        time.sleep(max(0.0, timeout))

    async def wait_for_events(self, scope: Scope, task_id: str, after_seq: int, max_wait: float) -> None:
        await asyncio.sleep(max(0.0, max_wait))

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        """Snapshot and head in one Query; the events logged after the snapshot in a second one
        when there are any. The head is read after the snapshot (descending order), so a commit
        landing in between can only make the head newer: its events are then read too. Should
        the snapshot come out newer than the head anyway, the read is repeated."""
        pk = Keys(scope).task_pk(task_id)
        for _ in range(_READ_ATTEMPTS):
            items = self.client.query(TableName=self._table, **task_query(pk)).get("Items", [])
            by_sk = {str(item["sk"]["S"]): item for item in items}
            found = by_sk.get(META_SK)
            if found is None:
                return None
            head, checkpoint = head_from_item(scope, found)
            snapshot = by_sk.get(SNAPSHOT_SK)
            base_seq = int(snapshot["seq"]["N"]) if snapshot is not None else 0
            if base_seq > head.last_seq:
                continue
            base = Task.model_validate_json(read_payload(snapshot, "task")) if snapshot is not None else None
            logs = [log_item_from(item) for sk, item in by_sk.items() if sk.startswith("EVT#")]
            if head.last_seq > base_seq and not (
                logs and logs[0].first == base_seq + 1 and logs[0].last == head.last_seq
            ):
                logs = [log_item_from(item) for item in self._query(**events_query(pk, base_seq, head.last_seq))]
            events = [event for log in logs for event in _events_of(log) if base_seq < event[0] <= head.last_seq]
            task = fold(base, (event for _, event in events), max_history=self._max_history)
            if task is None:
                raise RuntimeError(f"task {task_id} has a head but neither a snapshot nor a first event")
            return TaskRecord.of(head, task, checkpoint)
        raise VersionConflict(f"task {task_id} kept changing while it was read")

    def get_head(self, scope: Scope, task_id: str) -> TaskHead | None:
        item = self._get(Keys(scope).task_pk(task_id), META_SK)
        return head_from_item(scope, item)[0] if item is not None else None

    def find_message(self, scope: Scope, message_id: str) -> AcceptedMessage | None:
        item = self._get(Keys(scope).message_pk(message_id), MSG_SK)
        return accepted_message_from(item) if item is not None else None

    def commit(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse] = (),
        *,
        snapshot: bool = False,
        message_id: str = "",
        fingerprint: str = "",
    ) -> TaskRecord:
        if self._offloader is not None:
            record, events = self._offloader.offload(record, events)
        plan = plan_commit(record, events, snapshot=snapshot)
        now = self._clock()
        stored = replace(record, version=record.version + 1, last_seq=plan.new_last_seq, checkpoint=plan.checkpoint)
        created_at = record.created_at
        assert created_at is not None  # (plan_commit checked)
        ttl = ttl_epoch(created_at, self._ttl_days)
        head_put = self._put(head_item(stored, listing_key(record.task, created_at), ttl, now))
        head = head_condition(head_put, record.version, record.last_seq)
        try:
            if not plan.payloads and plan.snapshot is None and not message_id:
                self.client.put_item(**head)
            else:
                puts = self._log_puts(record.scope, record.task_id, record.last_seq + 1, plan.payloads, now, ttl)
                if plan.snapshot is not None:
                    snap = snapshot_item(record.scope, record.task_id, plan.new_last_seq, plan.snapshot, ttl)
                    puts.append(self._put(snap))
                if message_id:
                    puts.insert(0, self._message_put(record.scope, message_id, record.task_id, fingerprint, ttl))
                transact: list[TransactWriteItemTypeDef] = [{"Put": put} for put in [head, *puts]]
                self.client.transact_write_items(TransactItems=transact, ClientRequestToken=_request_token())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            reasons = _cancellation_reasons(exc)
            if message_id and not (reasons and reasons[0].get("Code") == "ConditionalCheckFailed"):
                # The head held (a failed head is a VersionConflict: the caller re-reads and decides).
                self._raise_if_duplicate(record.scope, message_id, reasons, 1)
            codes = {str(reason.get("Code")) for reason in reasons}
            if code == "ConditionalCheckFailedException" or codes & _LOST_RACE:
                raise VersionConflict(f"task {record.task_id} changed since it was read") from None
            raise
        return stored

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        if limit <= 0:
            return []
        pk = Keys(scope).task_pk(task_id)
        out: list[StoredEvent] = []
        # A log item holds at least one event: ``limit`` items are always enough.
        for item in self._query(**events_query(pk, after_seq), Limit=min(limit, 25)):
            for seq, event in _events_of(log_item_from(item)):
                if seq > after_seq:
                    out.append(StoredEvent(seq=seq, event=event))
                    if len(out) == limit:
                        return out
        return out

    def list_tasks(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Tasks of ``scope`` from the ``ByScope`` index (``ByContext`` with a context filter), newest
        first. A state filter is applied after DynamoDB's ``Limit``, so this keeps querying until the
        page is full (plus one item of look-ahead, so the last page's token is '') or the index ends.
        ``total_size`` is a ``Select=COUNT`` query with the same conditions. The page's tasks are
        then read: their snapshots in one BatchGetItem (eventually consistent: a stale snapshot only
        means more events to fold), and, for each task not finished as of its snapshot, the events
        after it (a strongly consistent Query).

        Global secondary indexes are eventually consistent: a task created or changed a moment ago
        may be missing or in its old place here (``get_task`` is strongly consistent).
        """
        check_page_size(query.page_size)
        fingerprint = listing_fingerprint(scope, query)
        floor = status_floor(query)
        cursor = ""
        if query.page_token:
            cursor = decode_page_token(query.page_token, fingerprint)
            check_listing_position(cursor, floor)
        queries = listing_queries(scope, query, floor, cursor)
        sort_key = queries.sort_key
        matches: list[Item] = []
        for item in self._query(**queries.page, Limit=query.page_size + 2):
            if item[sort_key]["S"] == cursor:
                continue
            matches.append(item)
            if len(matches) > query.page_size:
                break
        page = matches[: query.page_size]
        more = len(matches) > query.page_size
        # A first page that ended before the look-ahead saw every match: no need to count.
        total = len(matches) if not cursor and not more else self._count(queries.everything)
        return TaskPage(
            tasks=self._read_listed([str(item["pk"]["S"]) for item in page]),
            next_page_token=encode_page_token(page[-1][sort_key]["S"], fingerprint) if more else "",
            total_size=total,
        )

    def expired_runs(self, now: int, limit: int = 100) -> list[tuple[Scope, str]]:
        found: list[tuple[int, Scope, str]] = []
        for shard in range(LEASE_SHARDS):
            for item in self._query(**expired_leases_query(f"RUN#{shard}", now), Limit=limit):
                scope = Scope(str(item["tenant"]["S"]), str(item["owner"]["S"]))
                found.append((int(item["leaseUntil"]["N"]), scope, str(item["taskId"]["S"])))
                if len(found) >= limit * LEASE_SHARDS:
                    break
        found.sort(key=lambda entry: entry[0])
        return [(scope, task_id) for _, scope, task_id in found[:limit]]

    # ------------------------------------------------------------------ push configs

    def put_push_config(
        self,
        scope: Scope,
        config: TaskPushNotificationConfig,
        *,
        start_after_seq: int = 0,
        protocol_version: ProtocolVersion = CURRENT,
    ) -> TaskPushNotificationConfig:
        config = push_config_for(config)
        ttl = ttl_epoch(self._clock(), self._ttl_days)
        upsert = push_upsert(scope, config, ttl, start_after_seq, protocol_version)
        self.client.update_item(TableName=self._table, **upsert)
        return config

    def get_push_config(self, scope: Scope, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        target = self.get_push_target(scope, task_id, config_id)
        return target.config if target is not None else None

    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None:
        item = self._get(Keys(scope).task_pk(task_id), push_sk(config_id))
        return push_target_from_item(item) if item is not None else None

    def advance_push_cursor(self, scope: Scope, task_id: str, config_id: str, seq: int) -> bool:
        try:
            self.client.update_item(
                TableName=self._table,
                Key={"pk": {"S": Keys(scope).task_pk(task_id)}, "sk": {"S": push_sk(config_id)}},
                UpdateExpression="SET deliveredSeq = :seq",
                ConditionExpression="attribute_exists(pk) AND deliveredSeq < :seq",
                ExpressionAttributeValues={":seq": {"N": str(seq)}},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def list_push_configs(
        self, scope: Scope, task_id: str, page_size: int = 100, page_token: str = ""
    ) -> tuple[list[TaskPushNotificationConfig], str]:
        check_page_size(page_size)
        fingerprint = push_fingerprint(scope, task_id)
        after = push_sk(decode_page_token(page_token, fingerprint)) if page_token else ""
        picked: list[Item] = []
        items = self._query(**push_configs_query(scope, task_id, after), Limit=page_size + 2)
        for item in items:
            if item["sk"]["S"] == after:
                continue
            picked.append(item)
            if len(picked) > page_size:
                break
        page = picked[:page_size]
        token = ""
        if len(picked) > page_size:
            token = encode_page_token(page[-1]["sk"]["S"][len(PUSH_SK_PREFIX) :], fingerprint)
        return [config_from_item(item) for item in page], token

    def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        key = {"pk": {"S": Keys(scope).task_pk(task_id)}, "sk": {"S": push_sk(config_id)}}
        self.client.delete_item(TableName=self._table, Key=key)

    # ------------------------------------------------------------------ helpers

    def _read_listed(self, pks: list[str]) -> list[Task]:
        """The tasks of a ListTasks page, in its order: snapshots (BatchGetItem), then the events
        after each snapshot for the tasks it does not show finished."""
        snapshots: dict[str, Item] = {}
        for start in range(0, len(pks), _BATCH_GET_KEYS):
            keys: list[Item] = [
                {"pk": {"S": pk}, "sk": {"S": SNAPSHOT_SK}} for pk in pks[start : start + _BATCH_GET_KEYS]
            ]
            for item in self._batch_get(keys):
                snapshots[str(item["pk"]["S"])] = item
        tasks: list[Task] = []
        for pk in pks:
            snapshot = snapshots.get(pk)
            base = Task.model_validate_json(read_payload(snapshot, "task")) if snapshot is not None else None
            if base is None or not base.status.state.is_terminal:
                base_seq = int(snapshot["seq"]["N"]) if snapshot is not None else 0
                logs = [log_item_from(item) for item in self._query(**events_query(pk, base_seq))]
                events = (event for log in logs for seq, event in _events_of(log) if seq > base_seq)
                base = fold(base, events, max_history=self._max_history)
            if base is not None:  # (a task whose first write is not visible yet to the index's reader)
                tasks.append(base)
        return tasks

    def _batch_get(self, keys: list[Item]) -> Iterator[Item]:
        """Every item of ``keys`` that exists, retrying what DynamoDB leaves unprocessed."""
        request: dict[str, Any] = {self._table: {"Keys": keys}}
        for attempt in range(8):
            response = self.client.batch_get_item(RequestItems=request)
            yield from response.get("Responses", {}).get(self._table, [])
            request = response.get("UnprocessedKeys") or {}
            if not request:
                return
            time.sleep(0.05 * 2**attempt * random.random())
        raise RuntimeError("BatchGetItem kept leaving keys unprocessed")

    def _log_puts(
        self, scope: Scope, task_id: str, first_seq: int, payloads: Sequence[str], now: datetime, ttl: int | None
    ) -> list[PutTypeDef]:
        puts: list[PutTypeDef] = []
        for group in pack_events(payloads):
            puts.append(self._put(log_item(scope, task_id, first_seq, group, now, ttl), _NOT_EXISTS))
            first_seq += len(group)
        return puts

    def _put(self, item: Item, condition: str = "") -> PutTypeDef:
        put: PutTypeDef = {"TableName": self._table, "Item": item}
        if condition:
            put["ConditionExpression"] = condition
        return put

    def _get(self, pk: str, sk: str) -> Item | None:
        response = self.client.get_item(
            TableName=self._table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
        )
        item: Item | None = response.get("Item")
        return item

    def _query(self, **kwargs: Any) -> Iterator[Item]:
        """Every item the query matches, following ``LastEvaluatedKey`` lazily."""
        while True:
            response = self.client.query(TableName=self._table, **kwargs)
            yield from response.get("Items", [])
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last

    def _count(self, kwargs: QueryArgs) -> int:
        total = 0
        kwargs = kwargs | {"Select": "COUNT"}
        while True:
            response = self.client.query(TableName=self._table, **kwargs)
            total += int(response.get("Count", 0))
            last = response.get("LastEvaluatedKey")
            if not last:
                return total
            kwargs["ExclusiveStartKey"] = last


def _events_of(log: LogItem) -> list[tuple[int, StreamResponse]]:
    return list(enumerate(_EVENTS.validate_json(log.events_json), start=log.first))


def _request_token() -> str:
    """Makes botocore's own retries of one transaction idempotent: had the first attempt landed
    unseen (a timeout), the retry would otherwise fail its conditions and report a conflict."""
    return str(uuid.uuid4())


class _CancellationReason(TypedDict, total=False):
    """One entry of a cancelled transaction's ``CancellationReasons``: botocore's error response is
    untyped and the stubs declare no shape for it, so the fields this module reads are named here."""

    Code: str
    Message: str
    Item: Item


def _cancellation_reasons(exc: ClientError) -> list[_CancellationReason]:
    if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return []
    # botocore-stubs declare each reason's Item as an opaque TypedDict; on the wire it is the
    # item's attribute map, so the one cast is here rather than at each reader.
    return cast("list[_CancellationReason]", list(exc.response.get("CancellationReasons", [])))
