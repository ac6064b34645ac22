"""Query arguments (minus ``TableName``) for the tasks table: a task, its log, push configs,
ListTasks and expired leases.

Pages resume *after* a position with a key condition (``<`` or ``BETWEEN ... AND :position``,
whose inclusive end the caller skips), not ``ExclusiveStartKey``, so a token needs only the
position, never table keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ports.store import Scope, TaskQuery
from .table import (
    EVENT_SK_LAST,
    META_SK,
    PUSH_SK_END,
    PUSH_SK_PREFIX,
    SNAPSHOT_SK,
    Item,
    Keys,
    QueryArgs,
    event_sk,
)

__all__ = [
    "ListingQueries",
    "events_query",
    "expired_leases_query",
    "listing_queries",
    "log_query",
    "push_configs_query",
    "push_progress_query",
    "task_query",
]


def task_query(pk: str) -> QueryArgs:
    """Snapshot and head in one strongly consistent read: the two keys at the top of the task's
    events-and-head range (without a snapshot: the head and the newest log item)."""
    return {
        "KeyConditionExpression": "pk = :pk AND sk <= :top",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":top": {"S": SNAPSHOT_SK}},
        "ScanIndexForward": False,
        "Limit": 2,
        "ConsistentRead": True,
    }


def events_query(pk: str, after_seq: int, up_to_seq: int | None = None) -> QueryArgs:
    """The log items holding events after ``after_seq`` (up to ``up_to_seq`` when given): items
    are keyed by the last event they hold."""
    return {
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
        "ExpressionAttributeValues": {
            ":pk": {"S": pk},
            ":first": {"S": event_sk(max(after_seq, 0) + 1)},
            ":last": {"S": event_sk(up_to_seq) if up_to_seq is not None else EVENT_SK_LAST},
        },
        "ConsistentRead": True,
    }


def log_query(pk: str, after_seq: int) -> QueryArgs:
    """The log items holding events after ``after_seq``, then the head (``META`` sorts after every
    ``EVT#`` key), which may hold the events that closed the log."""
    return {
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :head",
        "ExpressionAttributeValues": {
            ":pk": {"S": pk},
            ":first": {"S": event_sk(max(after_seq, 0) + 1)},
            ":head": {"S": META_SK},
        },
        "ConsistentRead": True,
    }


def push_configs_query(scope: Scope, task_id: str, after_sk: str) -> QueryArgs:
    """Configs of a task in sk (= id) order; after ``after_sk`` (inclusive: skip it) when set."""
    values: Item = {":pk": {"S": Keys(scope).task_pk(task_id)}}
    if after_sk:
        condition = "pk = :pk AND sk BETWEEN :after AND :end"
        values |= {":after": {"S": after_sk}, ":end": {"S": PUSH_SK_END}}
    else:
        condition = "pk = :pk AND begins_with(sk, :prefix)"
        values[":prefix"] = {"S": PUSH_SK_PREFIX}
    return {"KeyConditionExpression": condition, "ExpressionAttributeValues": values, "ConsistentRead": True}


def push_progress_query(scope: Scope, task_id: str) -> QueryArgs:
    """Every config of a task, only its id and how far its deliveries got (no config bodies)."""
    query = push_configs_query(scope, task_id, "")
    query["ProjectionExpression"] = "sk, deliveredSeq, triedSeq"
    return query


def expired_leases_query(shard: str, now: int) -> QueryArgs:
    """Running tasks of one lease shard whose lease ended before ``now``, oldest first."""
    return {
        "IndexName": "ByLease",
        "KeyConditionExpression": "leaseShard = :shard AND leaseUntil < :now",
        "ExpressionAttributeValues": {":shard": {"S": shard}, ":now": {"N": str(now)}},
    }


@dataclass(frozen=True, slots=True)
class ListingQueries:
    page: QueryArgs
    """Newest first, from the cursor on (the cursor itself may come back: skip it)."""
    everything: QueryArgs
    """Every match of the filters, for ``Select=COUNT``."""
    sort_key: str
    """The index's sort key attribute: what positions and tokens hold."""


def listing_queries(scope: Scope, query: TaskQuery, floor: str, cursor: str) -> ListingQueries:
    """ListTasks on ``ByScope``, or ``ByContext`` with a context filter; the state filter is a
    FilterExpression (applied after ``Limit``), ``floor`` (status_after) and ``cursor`` bound the
    sort key."""
    keys = Keys(scope)
    if query.context_id:
        index, pk_name, sk_name = "ByContext", "gsi2pk", "gsi2sk"
        pk_value = keys.context_gsi_pk(query.context_id)
    else:
        index, pk_name, sk_name, pk_value = "ByScope", "gsi1pk", "gsi1sk", keys.scope_gsi_pk()
    base: QueryArgs = {"IndexName": index, "ScanIndexForward": False}
    names = {"#pk": pk_name}
    values: Item = {":pk": {"S": pk_value}}
    if query.state is not None:
        base["FilterExpression"] = "#state = :state"
        names["#state"] = "state"
        values[":state"] = {"S": query.state.value}

    def args(condition: str, bounds: Item) -> QueryArgs:
        return base | {
            "KeyConditionExpression": "#pk = :pk" + condition,
            "ExpressionAttributeNames": names | ({"#sk": sk_name} if bounds else {}),
            "ExpressionAttributeValues": values | bounds,
        }

    floor_bound: Item = {":floor": {"S": floor}} if floor else {}
    everything = args(" AND #sk >= :floor" if floor else "", floor_bound)
    if not cursor:
        page = everything
    elif floor:
        page = args(" AND #sk BETWEEN :floor AND :cursor", floor_bound | {":cursor": {"S": cursor}})
    else:
        page = args(" AND #sk < :cursor", {":cursor": {"S": cursor}})
    return ListingQueries(page=page, everything=everything, sort_key=sk_name)
