"""``TaskStore`` on the single DynamoDB table ``TasksTable`` of ``template.yaml``.

Item layout (keys are built in :mod:`._dynamodb_codec`; caller values in keys are percent-encoded,
and an owner longer than 256 encoded characters is keyed as ``!<sha256 of the name>``):

* ``pk=TASK#<tenant>#<owner>#<taskId>``, ``sk=META``: the head. ``task`` (ProtoJSON), ``version``,
  ``lastSeq``, ``cancelRequested``, ``pendingMessageId``, ``runningMessageId``, ``protocolVersion``,
  ``tenant``, ``owner``, ``taskId``, ``contextId``, ``state``, ``createdAt``, ``updatedAt``, ``ttl``.
* same pk, ``sk=EVT#<seq, 12 digits>``: one ``event`` (StreamResponse JSON) with ``seq``, ``taskId``,
  ``tenant``, ``owner``, ``createdAt``, ``ttl``. Append-only.
* same pk, ``sk=PUSH#<configId>``: one push ``config`` (JSON) and its delivery cursor ``deliveredSeq``.
* ``pk=MSG#<tenant>#<owner>#<messageId>``, ``sk=MSG``: send idempotency, ``taskId`` of the task it created.

The head also carries ``gsi1pk = SCOPE#<tenant>#<owner>`` and ``gsi2pk = CTX#<tenant>#<owner>#<contextId>``
with ``gsi1sk = gsi2sk = <status timestamp, fixed width>#<taskId>``: the ``ByScope`` and
``ByContext`` indexes list a scope's tasks newest first. Every item of a task expires ``ttl_days``
after the task was created (``ttl`` omitted when ``ttl_days`` is 0).

Writes are conditional and atomic: a create is one transaction (head, idempotency key, first events,
optional push config); a commit is one transaction (head update conditioned on ``version`` and
``lastSeq``, each event put only if its seq is free), or a single conditional UpdateItem when it
appends no events. botocore's standard retry mode retries throttling and transient errors; each
transaction carries a ``ClientRequestToken``, so such a retry of one that had landed unseen succeeds
instead of failing its own conditions. (UpdateItem has no token: that rare case surfaces as a
``VersionConflict``, and the caller's re-read shows its change applied.) Nothing else is retried
here, except a create that lost a ``TransactionConflict`` race.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from ..models import StreamResponse, TaskPushNotificationConfig, utc_now
from ..ports.store import (
    DuplicateMessage,
    PushTarget,
    Scope,
    StoredEvent,
    TaskPage,
    TaskQuery,
    TaskRecord,
    VersionConflict,
)
from ._dynamodb_codec import (
    META_SK,
    MSG_SK,
    PUSH_SK_PREFIX,
    Item,
    Keys,
    config_from_item,
    event_item,
    head_item,
    head_update,
    message_item,
    push_item,
    push_sk,
    push_target_from_item,
    push_upsert,
    record_from_item,
    stored_event_from_item,
    ttl_epoch,
)
from ._dynamodb_queries import events_query, listing_queries, push_configs_query
from ._store_common import (
    check_commit_size,
    check_create,
    check_listing_position,
    check_page_size,
    commit_listing_key,
    decode_page_token,
    encode_page_token,
    listing_fingerprint,
    listing_key,
    push_config_for,
    push_fingerprint,
    status_floor,
    to_millis,
)

__all__ = ["DynamoDBTaskStore"]

_CREATE_ATTEMPTS = 5
_NOT_EXISTS = "attribute_not_exists(pk)"
_LOST_RACE = frozenset({"ConditionalCheckFailed", "TransactionConflict"})


class DynamoDBTaskStore:
    """The production store. ``client`` is a low-level boto3 DynamoDB client; by default one is
    created on first use (standard retry mode) and kept for warm invocations."""

    def __init__(
        self,
        table_name: str,
        client: Any | None = None,
        *,
        ttl_days: int = 30,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if ttl_days < 0:
            raise ValueError("ttl_days must be 0 (keep forever) or more")
        self._table = table_name
        self._client = client
        self._ttl_days = ttl_days
        self._clock = clock

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.client("dynamodb", config=Config(retries={"mode": "standard", "max_attempts": 8}))
        return self._client

    # ------------------------------------------------------------------ tasks

    def create_task(
        self,
        record: TaskRecord,
        events: Sequence[StreamResponse],
        *,
        message_id: str,
        push_config: TaskPushNotificationConfig | None = None,
    ) -> TaskRecord:
        check_create(events, message_id, push_config is not None)
        push = push_config_for(push_config, record.task_id) if push_config is not None else None
        created_at = to_millis(record.created_at or self._clock())
        stored = replace(record, version=1, last_seq=len(events), created_at=created_at)
        ttl = ttl_epoch(created_at, self._ttl_days)
        items: list[dict[str, Any]] = [
            self._put(head_item(stored, created_at, listing_key(record.task, created_at), ttl), _NOT_EXISTS),
            self._put(message_item(record.scope, message_id, record.task_id, ttl), _NOT_EXISTS)
            | {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        ]
        items += [
            self._put(event_item(record.scope, record.task_id, seq, event, created_at, ttl), _NOT_EXISTS)
            for seq, event in enumerate(events, start=1)
        ]
        if push is not None:
            items.append(self._put(push_item(record.scope, push, ttl, record.protocol_version)))
        wrapped = [{"Put": item} for item in items]
        attempts = 0
        while True:
            try:
                self.client.transact_write_items(TransactItems=wrapped, ClientRequestToken=_request_token())
                return stored
            except ClientError as exc:
                reasons = _cancellation_reasons(exc)
                codes = [str(reason.get("Code") or "None") for reason in reasons]
                if len(codes) > 1 and codes[1] == "ConditionalCheckFailed":
                    winner = reasons[1].get("Item", {}).get("taskId", {}).get("S")
                    winner = winner or self.find_task_by_message(record.scope, message_id) or ""
                    raise DuplicateMessage(task_id=winner) from None
                if "ConditionalCheckFailed" in codes:
                    raise VersionConflict(f"task {record.task_id} already exists") from None
                attempts += 1
                if "TransactionConflict" not in codes or attempts >= _CREATE_ATTEMPTS:
                    raise
            # Another create with this task or message id is in flight: once it settles, the
            # retry gets a definite answer (usually DuplicateMessage).
            time.sleep(0.05 * 2**attempts * (0.5 + random.random()))

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        """DynamoDB tells no one: callers poll (a Streams consumer could, at the cost of a hop)."""
        time.sleep(max(0.0, timeout))

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        item = self._get(Keys(scope).task_pk(task_id), META_SK)
        return record_from_item(scope, item) if item is not None else None

    def find_task_by_message(self, scope: Scope, message_id: str) -> str | None:
        item = self._get(Keys(scope).message_pk(message_id), MSG_SK)
        return str(item["taskId"]["S"]) if item is not None else None

    def commit(self, record: TaskRecord, events: Sequence[StreamResponse] = ()) -> TaskRecord:
        check_commit_size(events)
        now = self._clock()
        new_last_seq = record.last_seq + len(events)
        key = {"pk": {"S": Keys(record.scope).task_pk(record.task_id)}, "sk": {"S": META_SK}}
        update = head_update(record, new_last_seq, commit_listing_key(record.task, record.created_at), now)
        try:
            if not events:
                self.client.update_item(TableName=self._table, Key=key, **update)
            else:
                ttl = ttl_epoch(record.created_at or now, self._ttl_days)
                puts = [
                    {"Put": self._put(event_item(record.scope, record.task_id, seq, event, now, ttl), _NOT_EXISTS)}
                    for seq, event in enumerate(events, start=record.last_seq + 1)
                ]
                head = {"Update": {"TableName": self._table, "Key": key, **update}}
                self.client.transact_write_items(TransactItems=[head, *puts], ClientRequestToken=_request_token())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            codes = {str(reason.get("Code")) for reason in _cancellation_reasons(exc)}
            if code == "ConditionalCheckFailedException" or codes & _LOST_RACE:
                raise VersionConflict(f"task {record.task_id} changed since it was read") from None
            raise
        return replace(record, version=record.version + 1, last_seq=new_last_seq)

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        if limit <= 0:
            return []
        items = self._query(**events_query(scope, task_id, after_seq), Limit=limit)
        out: list[StoredEvent] = []
        for item in items:
            out.append(stored_event_from_item(item))
            if len(out) == limit:
                break
        return out

    def list_tasks(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Tasks of ``scope`` from the ``ByScope`` index (``ByContext`` with a context filter), newest
        first. A state filter is applied after DynamoDB's ``Limit``, so this keeps querying until the
        page is full (plus one item of look-ahead, so the last page's token is '') or the index ends.
        ``total_size`` is a ``Select=COUNT`` query with the same conditions.

        Global secondary indexes are eventually consistent: a task created or changed a moment ago
        may be missing or stale here (``get_task`` is strongly consistent).
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
            records=[record_from_item(scope, item) for item in page],
            next_page_token=encode_page_token(page[-1][sort_key]["S"], fingerprint) if more else "",
            total_size=total,
        )

    # ------------------------------------------------------------------ push configs

    def put_push_config(
        self,
        scope: Scope,
        config: TaskPushNotificationConfig,
        *,
        start_after_seq: int = 0,
        protocol_version: str = "1.0",
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

    def _put(self, item: Item, condition: str = "") -> dict[str, Any]:
        put: dict[str, Any] = {"TableName": self._table, "Item": item}
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

    def _count(self, kwargs: dict[str, Any]) -> int:
        total = 0
        kwargs = kwargs | {"Select": "COUNT"}
        while True:
            response = self.client.query(TableName=self._table, **kwargs)
            total += int(response.get("Count", 0))
            last = response.get("LastEvaluatedKey")
            if not last:
                return total
            kwargs["ExclusiveStartKey"] = last


def _request_token() -> str:
    """Makes botocore's own retries of one transaction idempotent: had the first attempt landed
    unseen (a timeout), the retry would otherwise fail its conditions and report a conflict."""
    return str(uuid.uuid4())


def _cancellation_reasons(exc: ClientError) -> list[dict[str, Any]]:
    if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return []
    reasons: list[Any] = list(exc.response.get("CancellationReasons", []))
    return reasons
