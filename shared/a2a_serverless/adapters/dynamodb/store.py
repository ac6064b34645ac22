"""``TaskStore`` on the single DynamoDB table ``TasksTable`` of ``template.yaml``.

Item layout (``docs/architecture.md``, Data; keys and items are built in :mod:`.table`, and every
call goes through its :class:`.table.Table`):
under ``pk=TASK#<tenant>#<owner>#<taskId>``, the head (``sk=META``, small and of a fixed shape
whatever the task holds, but for the events that ended the task when they fit 3 KB), the
append-only log items (``sk=EVT#<seq of their last event>``), the
snapshot (``sk=META#SNAP``) and the push configs (``sk=PUSH#<configId>``, with their delivery
cursors); under ``pk=MSG#<tenant>#<owner>#<messageId>`` and ``pk=IDEM#<tenant>#<owner>#<key>``, the
send keys (``sk=MSG``, ``MSG#<fingerprint>`` for a reused messageId, ``IDEM``); under
``pk=DELEG#<ref>`` (``sk=DELEG``), what the opaque reference of a delegation's push receiver stands
for (:mod:`.delegation`). Reads: :mod:`.reads`.

Indexes (each projects only what its readers need, so an ordinary commit, which changes neither
what ListTasks sorts and filters on nor the lease, writes no index):

* ``ByScope`` (``gsi1pk = SCOPE#<tenant>#<owner>``, ``gsi1sk = <status timestamp, fixed width>#<taskId>``)
  and ``ByContext`` (``gsi2pk = CTX#<tenant>#<owner>#<contextId>``, the same sort key): ListTasks,
  newest first; they project the keys and ``state`` (the status filter). The tasks of a page are then
  read back: their snapshots in one BatchGetItem, and for unfinished ones the events after it.
* ``ByLease`` (``leaseShard = RUN#<0-7>``, ``leaseUntil``): the heads of running tasks, for the
  sweeper; it projects ``tenant``, ``owner`` and ``taskId``.

Every item of a task expires ``ttl_days`` after the task was created (``ttl`` omitted when 0).

Writes are conditional: a create is a conditional PutItem of each of its items (the send key first,
then the first events and an optional push config, the head last: the task exists once its head
does, and every reader is bounded by the head); a commit is one transaction (head update conditioned on ``version`` and
``lastSeq``, the log items, each put only if its key is free, and a snapshot that records a change no
event expresses), or a single conditional put when it writes only the head, which is also how a
small commit that ends the task is written: the head holds its events (the cancel mark of a running
task is an UpdateItem: :meth:`.table.Table.mark_cancel`). A checkpoint (a snapshot the log implies)
is put after its commit, only over an older one. botocore's standard retry mode retries throttling and
transient errors; a transaction's ``ClientRequestToken`` makes such a retry of one that had landed
unseen succeed. A single write has none: a create's put recognises its own item in the failed
condition's answer; a commit's surfaces as a ``VersionConflict``, and the caller's re-read shows its
change. Nothing else is retried.
``create_task`` and ``commit`` themselves (offload, plan, write) are
:class:`~a2a_serverless.ports.store.TaskStoreBase`'s; this module writes what they plan.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, cast

from botocore.exceptions import BotoCoreError, ClientError

from ...blobs import PartOffloader
from ...lifecycle import DEFAULT_MAX_HISTORY
from ...models import TaskPushNotificationConfig, utc_now
from ...ports.push_marks import PushProgress
from ...ports.store import (
    AcceptedMessage,
    DuplicateMessage,
    Planned,
    PushTarget,
    Scope,
    SendKey,
    StoredEvent,
    TaskHead,
    TaskPage,
    TaskQuery,
    TaskRecord,
    TaskStoreBase,
    VersionConflict,
    check_page_size,
    decode_page_token,
    encode_page_token,
    listing_key,
    listing_position,
    pack_events,
    push_config_for,
    push_fingerprint,
)
from ...versions import CURRENT, ProtocolVersion
from .delegation import DynamoDBDelegationRefs
from .queries import expired_leases_query, listing_queries, push_configs_query, push_progress_query
from .reads import read_events, read_listed, read_task
from .table import (
    HELD_BYTES,
    LEASE_SHARDS,
    META_SK,
    PUSH_SK_PREFIX,
    CancellationReason,
    Item,
    Keys,
    Table,
    WriteCancelled,
    abandoned_head,
    accepted_message_from,
    config_from_item,
    head_from_item,
    head_item,
    is_abandoned,
    log_item,
    mark_of,
    push_item,
    push_sk,
    push_target_from_item,
    push_upsert,
    send_key_address,
    send_key_item,
    snapshot_item,
    string,
    ttl_epoch,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import PutTypeDef

__all__ = ["DynamoDBTaskStore"]

logger = logging.getLogger(__name__)


def _fits_head(held: str, snapshot: str) -> bool:
    """Whether the head can hold a snapshot beside the events it holds (HELD_BYTES in all)."""
    return len(held.encode("utf-8")) + len(snapshot.encode("utf-8")) <= HELD_BYTES


_LOST_RACE = frozenset({"ConditionalCheckFailed", "TransactionConflict"})


class DynamoDBTaskStore(TaskStoreBase, DynamoDBDelegationRefs):
    """The production store; ``client`` by default created on first use and kept (warm starts)."""

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
        self._table = Table(table_name, client)
        self._ttl_days = ttl_days
        self._clock = clock
        self._max_history = max_history
        self._offloader = offloader

    @property
    def client(self) -> DynamoDBClient:
        """The table's client (:attr:`.table.Table.client`), for what observes its calls."""
        return self._table.client

    # ------------------------------------------------------------------ tasks

    def _write_create(
        self, stored: TaskRecord, plan: Planned, key: SendKey | None, push: TaskPushNotificationConfig | None
    ) -> None:
        """The send key (if its key is free), then the log items, the snapshot and the push config,
        then the head: each a conditional PutItem, the head last, so the task exists only once
        everything it needs does. A create that fails takes back what it wrote; one that dies
        leaves a key naming a task that never appears (:meth:`abandon_create`) and items no reader
        sees (no head), which expire with their ``ttl``."""
        scope, task_id, created_at = stored.scope, stored.task_id, stored.created_at
        assert created_at is not None  # (create_task set it)
        ttl = ttl_epoch(created_at, self._ttl_days)
        if key is not None:
            try:
                self._put_once(self._key_put(scope, key, task_id, ttl))
            except WriteCancelled as cancelled:
                self._raise_if_duplicate(scope, key, cancelled.reasons, 0)
                raise
        puts = self._log_puts(scope, task_id, 1, plan.payloads, created_at, ttl)
        if plan.snapshot is not None:
            puts.append(self._table.new_put(snapshot_item(scope, task_id, plan.new_last_seq, plan.snapshot, ttl)))
        if push is not None:
            puts.append(self._table.new_put(push_item(scope, push, ttl, stored.protocol_version)))
        puts.append(self._table.new_put(head_item(stored, listing_key(stored.task, created_at), ttl, created_at)))
        written: list[Item] = []
        try:
            for put in puts:
                self._put_once(put)
                written.append(cast("Item", {"pk": put["Item"]["pk"], "sk": put["Item"]["sk"]}))
        except WriteCancelled:
            self._take_back(scope, task_id, key, written)
            if key is not None:  # (without one, the head cannot be an abandoned create's)
                head = self._table.get(Keys(scope).task_pk(task_id), META_SK)
                if head is not None and is_abandoned(head):
                    accepted = self.find_key(scope, key) or AcceptedMessage(task_id, key.fingerprint)
                    raise DuplicateMessage(task_id=accepted.task_id, fingerprint=accepted.fingerprint) from None
            raise VersionConflict(f"task {task_id} already exists") from None
        except BaseException:
            self._take_back(scope, task_id, key, written)
            raise

    def _put_once(self, put: PutTypeDef) -> None:
        """A conditional PutItem of a create; a failed condition that finds this very item means the
        put had landed and its response was lost (botocore's retry of it failed the condition): done.
        A transaction's token makes such a retry succeed; a single put has none."""
        put = {**put, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        try:
            self._table.write([put])
        except WriteCancelled as cancelled:
            if cancelled.reasons and cancelled.reasons[0].get("Item") == put["Item"]:
                return
            raise

    def _take_back(self, scope: Scope, task_id: str, key: SendKey | None, written: list[Item]) -> None:
        """Undo what a failed create wrote: its items (each put where nothing was) and its key, if
        the key still names its task. Best effort: what a failure here leaves, nobody reads."""
        try:
            for item_key in written:
                self._table.delete(item_key)
            if key is not None:
                pk, sk = send_key_address(scope, key)
                self._table.delete_naming({"pk": string(pk), "sk": string(sk)}, task_id)
        except (ClientError, BotoCoreError):
            logger.warning("could not take back what a failed create wrote", exc_info=True)

    def abandon_create(self, scope: Scope, task_id: str) -> bool:
        pk = Keys(scope).task_pk(task_id)
        stand_in = abandoned_head(pk, ttl_epoch(self._clock(), self._ttl_days))
        for _ in range(2):
            if self._table.put_new(stand_in):
                return True
            head = self._table.get(pk, META_SK)
            if head is not None:
                return is_abandoned(head)
        return False

    def _key_put(self, scope: Scope, key: SendKey, task_id: str, ttl: int | None) -> PutTypeDef:
        """The send key's conditional put (the key is free, or names the task it ``replaces``)."""
        return self._table.send_key_put(send_key_item(scope, key, task_id, ttl), key.replaces)

    def _raise_if_duplicate(self, scope: Scope, key: SendKey, reasons: list[CancellationReason], index: int) -> None:
        """DuplicateMessage when the transaction failed on the send key at ``index``."""
        if len(reasons) > index and reasons[index].get("Code") == "ConditionalCheckFailed":
            old = reasons[index].get("Item")
            accepted = accepted_message_from(old) if old else self.find_key(scope, key)
            accepted = accepted or AcceptedMessage("")
            raise DuplicateMessage(task_id=accepted.task_id, fingerprint=accepted.fingerprint) from None

    def wait_for_change(self, scope: Scope, task_id: str, version: int, timeout: float) -> None:
        """DynamoDB tells no one: callers poll (a Streams consumer could, at the cost of a hop)."""
        time.sleep(max(0.0, timeout))

    async def wait_for_events(self, scope: Scope, task_id: str, after_seq: int, max_wait: float) -> None:
        await asyncio.sleep(max(0.0, max_wait))

    def get_task(self, scope: Scope, task_id: str) -> TaskRecord | None:
        return read_task(self._table, scope, task_id, self._max_history)

    def get_head(self, scope: Scope, task_id: str) -> TaskHead | None:
        item = self._table.get(Keys(scope).task_pk(task_id), META_SK)
        return head_from_item(scope, item)[0] if item is not None and not is_abandoned(item) else None

    def mark_cancel(self, scope: Scope, task_id: str, message_id: str) -> bool:
        key: Item = {"pk": {"S": Keys(scope).task_pk(task_id)}, "sk": {"S": META_SK}}
        return self._table.mark_cancel(key, message_id, self._clock())

    def find_key(self, scope: Scope, key: SendKey) -> AcceptedMessage | None:
        item = self._table.get(*send_key_address(scope, key))
        return accepted_message_from(item) if item is not None else None

    def _write_commit(self, read: TaskRecord, stored: TaskRecord, plan: Planned, key: SendKey | None) -> TaskRecord:
        """The head put over the one ``read`` was read at; with events, a snapshot or a send key, one
        transaction with them (the head alone: one PutItem). A small commit that ends the task is
        the head alone too: the head holds its events (:meth:`_holds`). A checkpoint (a snapshot the
        log implies) is put after the commit, outside it."""
        scope, task_id, created_at, now = read.scope, read.task_id, read.created_at, self._clock()
        assert created_at is not None  # (plan_commit checked)
        ttl = ttl_epoch(created_at, self._ttl_days)
        checkpoint = plan.snapshot if plan.derived else None  # put after the commit, unless the head holds it
        held = self._holds(read, stored, plan, key)
        if held:
            # With the snapshot of the small task it ended, when both fit: the commit is all its writes.
            embedded = checkpoint if checkpoint is not None and _fits_head(held, checkpoint) else ""
            first = read.last_seq + 1
            stored = replace(
                stored, checkpoint=replace(stored.checkpoint, held=held, held_first=first, snapshot=embedded)
            )
            checkpoint = None if embedded else checkpoint
        head = self._table.head_put(
            head_item(stored, listing_key(read.task, created_at), ttl, now), read.version, read.last_seq
        )
        puts: list[PutTypeDef] = []
        if not held:
            if plan.payloads and read.checkpoint.held:  # the head's events go to the log before more follow
                moved = [json.dumps(event, separators=(",", ":")) for event in json.loads(read.checkpoint.held)]
                puts += self._log_puts(scope, task_id, read.checkpoint.held_first, moved, now, ttl)
            puts += self._log_puts(scope, task_id, read.last_seq + 1, plan.payloads, now, ttl)
        if plan.snapshot is not None and not plan.derived:
            puts.append(self._table.put(snapshot_item(scope, task_id, plan.new_last_seq, plan.snapshot, ttl)))
        if key is not None:
            puts.insert(0, self._key_put(scope, key, task_id, ttl))
        try:
            self._table.write([head, *puts])
        except WriteCancelled as cancelled:
            reasons = cancelled.reasons
            if key is not None and not (reasons and reasons[0].get("Code") == "ConditionalCheckFailed"):
                # The head held (a failed head is a VersionConflict: the caller re-reads and decides).
                self._raise_if_duplicate(scope, key, reasons, 1)
            if set(cancelled.codes) & _LOST_RACE:
                raise VersionConflict(f"task {task_id} changed since it was read") from None
            raise
        if checkpoint is not None:
            self._put_checkpoint(snapshot_item(scope, task_id, plan.new_last_seq, checkpoint, ttl))
        return stored

    @staticmethod
    def _holds(read: TaskRecord, stored: TaskRecord, plan: Planned, key: SendKey | None) -> str:
        """The events (a JSON array) the head holds instead of a log item, or '': a commit that ends
        the task with at most HELD_BYTES of events, no send key and no snapshot of its own to write
        with it, over a head that holds none yet. Nothing is appended to a finished task, so they
        stay in the head, and the commit is one conditional PutItem instead of a transaction of the
        head and a log item."""
        if not plan.payloads or key is not None or read.checkpoint.held or not stored.state.is_terminal:
            return ""
        if plan.snapshot is not None and not plan.derived:
            return ""
        events = "[" + ",".join(plan.payloads) + "]"
        return events if len(events.encode("utf-8")) <= HELD_BYTES else ""

    def _put_checkpoint(self, item: Item) -> None:
        """The checkpoint, after the commit it follows: a cache of the log's fold, so a failure only
        means reads fold more events until the next one (the commit stands: nothing is raised)."""
        try:
            self._table.put_checkpoint(item)
        except (ClientError, BotoCoreError):
            logger.warning("could not write a task's snapshot after its commit; reads fold its events", exc_info=True)

    def read_events(self, scope: Scope, task_id: str, after_seq: int = 0, limit: int = 100) -> list[StoredEvent]:
        return read_events(self._table, scope, task_id, after_seq, limit)

    def list_tasks(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Tasks of ``scope`` from the ``ByScope`` index (``ByContext`` with a context filter), newest
        first. A state filter is applied after DynamoDB's ``Limit``, so this keeps querying until the
        page is full (plus one item of look-ahead, so the last page's token is '') or the index ends.
        ``total_size`` is a ``Select=COUNT`` query with the same conditions. The page's tasks are
        then read: their snapshots in one BatchGetItem (eventually consistent: a stale snapshot only
        means more events to fold), and, for each task not finished as of its snapshot, the events
        after it (a strongly consistent Query). The indexes are eventually consistent: a task created
        or changed a moment ago may be missing or in its old place here (``get_task`` is not).
        """
        position = listing_position(scope, query)
        fingerprint, floor, cursor = position.fingerprint, position.floor, position.cursor
        queries = listing_queries(scope, query, floor, cursor)
        sort_key = queries.sort_key
        matches: list[Item] = []
        for item in self._table.query(queries.page, query.page_size + 2):
            if item[sort_key]["S"] == cursor:
                continue
            matches.append(item)
            if len(matches) > query.page_size:
                break
        page = matches[: query.page_size]
        more = len(matches) > query.page_size
        # A first page that ended before the look-ahead saw every match: no need to count.
        total = len(matches) if not cursor and not more else self._table.count(queries.everything)
        return TaskPage(
            tasks=read_listed(self._table, self._max_history, [str(item["pk"]["S"]) for item in page]),
            next_page_token=encode_page_token(page[-1][sort_key]["S"], fingerprint) if more else "",
            total_size=total,
        )

    def expired_runs(self, now: int, limit: int = 100) -> list[tuple[Scope, str]]:
        found: list[tuple[int, Scope, str]] = []
        for shard in range(LEASE_SHARDS):
            for item in self._table.query(expired_leases_query(f"RUN#{shard}", now), limit):
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
        self._table.upsert(upsert)
        return config

    def get_push_target(self, scope: Scope, task_id: str, config_id: str) -> PushTarget | None:
        item = self._table.get(Keys(scope).task_pk(task_id), push_sk(config_id))
        return push_target_from_item(item) if item is not None else None

    def _raise_push_mark(self, scope: Scope, task_id: str, config_id: str, seq: int, *, tried: bool) -> bool:
        return self._table.raise_mark(
            self._push_key(scope, task_id, config_id), "triedSeq" if tried else "deliveredSeq", seq
        )

    def push_progress(self, scope: Scope, task_id: str) -> dict[str, PushProgress]:
        """Config id -> its marks, for every config of the task (one Query that projects the keys and
        the marks: no config bodies)."""
        return {
            str(item["sk"]["S"])[len(PUSH_SK_PREFIX) :]: PushProgress(
                mark_of(item, "deliveredSeq"), mark_of(item, "triedSeq")
            )
            for item in self._table.query(push_progress_query(scope, task_id))
        }

    def list_push_configs(
        self, scope: Scope, task_id: str, page_size: int = 100, page_token: str = ""
    ) -> tuple[list[TaskPushNotificationConfig], str]:
        check_page_size(page_size)
        fingerprint = push_fingerprint(scope, task_id)
        after = push_sk(decode_page_token(page_token, fingerprint)) if page_token else ""
        picked: list[Item] = []
        items = self._table.query(push_configs_query(scope, task_id, after), page_size + 2)
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
        self._table.delete(self._push_key(scope, task_id, config_id))

    # ------------------------------------------------------------------ helpers

    def _log_puts(
        self, scope: Scope, task_id: str, first_seq: int, payloads: Sequence[str], now: datetime, ttl: int | None
    ) -> list[PutTypeDef]:
        puts: list[PutTypeDef] = []
        for group in pack_events(payloads):
            puts.append(self._table.new_put(log_item(scope, task_id, first_seq, group, now, ttl)))
            first_seq += len(group)
        return puts

    @staticmethod
    def _push_key(scope: Scope, task_id: str, config_id: str) -> Item:
        return {"pk": {"S": Keys(scope).task_pk(task_id)}, "sk": {"S": push_sk(config_id)}}
