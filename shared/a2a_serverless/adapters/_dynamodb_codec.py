"""Keys and items of the tasks table (layout: :mod:`.dynamodb_store`), in low-level client form.

Every key component that comes from a caller is percent-encoded (``quote(value, safe="")``), so a
``#`` inside a tenant, owner or id can never make one scope's key equal to another's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig, format_timestamp
from ..ports.store import PushTarget, Scope, StoredEvent, TaskRecord
from ._store_common import check_payload_size, parse_timestamp

__all__ = [
    "EVENT_SK_LAST",
    "META_SK",
    "MSG_SK",
    "PUSH_SK_END",
    "PUSH_SK_PREFIX",
    "Item",
    "Keys",
    "config_from_item",
    "event_item",
    "event_sk",
    "head_item",
    "head_update",
    "message_item",
    "push_item",
    "push_target_from_item",
    "push_upsert",
    "record_from_item",
    "stored_event_from_item",
    "ttl_epoch",
]

Item = dict[str, dict[str, Any]]

META_SK = "META"
MSG_SK = "MSG"
PUSH_SK_PREFIX = "PUSH#"
PUSH_SK_END = "PUSH$"  # '$' follows '#': every "PUSH#<id>" sorts below it
EVENT_SK_LAST = "EVT#" + "9" * 12


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


def ttl_epoch(start: datetime, ttl_days: int) -> int | None:
    return int((start + timedelta(days=ttl_days)).timestamp()) if ttl_days > 0 else None


def _s(value: str) -> dict[str, Any]:
    return {"S": value}


def _n(value: int) -> dict[str, Any]:
    return {"N": str(value)}


def _with_ttl(item: Item, ttl: int | None) -> Item:
    if ttl is not None:
        item["ttl"] = _n(ttl)
    return item


def _head_payloads(record: TaskRecord) -> tuple[str, str | None]:
    """The head's task (and reply) JSON, checked to fit one item."""
    task = record.task.to_json()
    reply = record.reply.to_json() if record.reply is not None else None
    check_payload_size(task, reply or "")
    return task, reply


def head_item(record: TaskRecord, created_at: datetime, listing_key: str, ttl: int | None) -> Item:
    keys = Keys(record.scope)
    created = format_timestamp(created_at)
    task_json, reply_json = _head_payloads(record)
    item: Item = {
        "pk": _s(keys.task_pk(record.task_id)),
        "sk": _s(META_SK),
        "task": _s(task_json),
        "version": _n(record.version),
        "lastSeq": _n(record.last_seq),
        "cancelRequested": {"BOOL": record.cancel_requested},
        "pendingMessageId": _s(record.pending_message_id),
        "runningMessageId": _s(record.running_message_id),
        "protocolVersion": _s(record.protocol_version),
        "tenant": _s(record.scope.tenant),
        "owner": _s(record.scope.owner),
        "taskId": _s(record.task_id),
        "contextId": _s(record.task.context_id),
        "state": _s(record.state.value),
        "createdAt": _s(created),
        "updatedAt": _s(created),
        "gsi1pk": _s(keys.scope_gsi_pk()),
        "gsi1sk": _s(listing_key),
        "gsi2pk": _s(keys.context_gsi_pk(record.task.context_id)),
        "gsi2sk": _s(listing_key),
    }
    if reply_json is not None:
        item["reply"] = _s(reply_json)
        for name in ("gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"):
            del item[name]
    return _with_ttl(item, ttl)


def head_update(record: TaskRecord, new_last_seq: int, listing_key: str, updated_at: datetime) -> dict[str, Any]:
    """UpdateItem arguments (minus table and key) writing ``record`` as the next version, only if
    the stored version and last_seq are still the ones it was read with. ``createdAt`` and ``ttl``
    stay as created; ``listing_key`` '' keeps the stored sort keys."""
    task_json, reply_json = _head_payloads(record)
    sets: Item = {
        "task": _s(task_json),
        "version": _n(record.version + 1),
        "lastSeq": _n(new_last_seq),
        "cancelRequested": {"BOOL": record.cancel_requested},
        "pendingMessageId": _s(record.pending_message_id),
        "runningMessageId": _s(record.running_message_id),
        "protocolVersion": _s(record.protocol_version),
        "contextId": _s(record.task.context_id),
        "state": _s(record.state.value),
        "updatedAt": _s(format_timestamp(updated_at)),
        "gsi2pk": _s(Keys(record.scope).context_gsi_pk(record.task.context_id)),
    }
    removes: list[str] = []
    if reply_json is not None:
        # A message-only reply: keep it for its sender, drop it from the listing indexes.
        sets["reply"] = _s(reply_json)
        del sets["gsi2pk"]
        removes = ["gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"]
    elif listing_key:
        sets["gsi1sk"] = sets["gsi2sk"] = _s(listing_key)
    values = {f":{name}": value for name, value in sets.items()}
    values[":expectedVersion"] = _n(record.version)
    values[":expectedLastSeq"] = _n(record.last_seq)
    expression = "SET " + ", ".join(f"#{name} = :{name}" for name in sets)
    if removes:
        expression += " REMOVE " + ", ".join(f"#{name}" for name in removes)
    return {
        "UpdateExpression": expression,
        "ConditionExpression": "#version = :expectedVersion AND #lastSeq = :expectedLastSeq",
        "ExpressionAttributeNames": {f"#{name}": name for name in [*sets, *removes]},
        "ExpressionAttributeValues": values,
    }


def record_from_item(scope: Scope, item: Item) -> TaskRecord:
    created = item.get("createdAt", {}).get("S")
    return TaskRecord(
        scope=scope,
        task=Task.model_validate_json(item["task"]["S"]),
        version=int(item["version"]["N"]),
        last_seq=int(item["lastSeq"]["N"]),
        cancel_requested=bool(item.get("cancelRequested", {}).get("BOOL", False)),
        pending_message_id=str(item.get("pendingMessageId", {}).get("S", "")),
        running_message_id=str(item.get("runningMessageId", {}).get("S", "")),
        reply=Message.model_validate_json(item["reply"]["S"]) if "reply" in item else None,
        created_at=parse_timestamp(created) if created else None,
        protocol_version=str(item.get("protocolVersion", {}).get("S", "1.0")),
    )


def message_item(scope: Scope, message_id: str, task_id: str, ttl: int | None) -> Item:
    item: Item = {
        "pk": _s(Keys(scope).message_pk(message_id)),
        "sk": _s(MSG_SK),
        "taskId": _s(task_id),
        "tenant": _s(scope.tenant),
        "owner": _s(scope.owner),
    }
    return _with_ttl(item, ttl)


def event_item(scope: Scope, task_id: str, seq: int, event: StreamResponse, now: datetime, ttl: int | None) -> Item:
    payload = event.to_json()
    check_payload_size(payload)
    item: Item = {
        "pk": _s(Keys(scope).task_pk(task_id)),
        "sk": _s(event_sk(seq)),
        "event": _s(payload),
        "seq": _n(seq),
        "taskId": _s(task_id),
        "tenant": _s(scope.tenant),
        "owner": _s(scope.owner),
        "createdAt": _s(format_timestamp(now)),
    }
    return _with_ttl(item, ttl)


def stored_event_from_item(item: Item) -> StoredEvent:
    return StoredEvent(seq=int(item["seq"]["N"]), event=StreamResponse.model_validate_json(item["event"]["S"]))


def push_item(scope: Scope, config: TaskPushNotificationConfig, ttl: int | None, protocol_version: str) -> Item:
    """A new config item, its delivery cursor at 0 (inline configs, created with their task)."""
    item: Item = {
        "pk": _s(Keys(scope).task_pk(config.task_id)),
        "sk": _s(push_sk(config.id)),
        **_push_attributes(scope, config, protocol_version),
        "deliveredSeq": _n(0),
    }
    return _with_ttl(item, ttl)


def push_upsert(
    scope: Scope, config: TaskPushNotificationConfig, ttl: int | None, start_after_seq: int, protocol_version: str
) -> dict[str, Any]:
    """UpdateItem arguments (minus ``TableName``) that create or replace a config, keeping the
    delivery cursor of a config that exists and starting a new one at ``start_after_seq``."""
    # Every name goes through ExpressionAttributeNames: "owner" and "ttl" are reserved words.
    ttl_attribute = {"ttl": _n(ttl)} if ttl is not None else {}
    attributes = {**_push_attributes(scope, config, protocol_version), **ttl_attribute}
    names = {f"#{name}": name for name in [*attributes, "deliveredSeq"]}
    values = {f":{name}": value for name, value in attributes.items()} | {":start": _n(start_after_seq)}
    assignments = [f"#{name} = :{name}" for name in attributes if name != "ttl"]
    if ttl is not None:
        assignments.append("#ttl = if_not_exists(#ttl, :ttl)")
    assignments.append("#deliveredSeq = if_not_exists(#deliveredSeq, :start)")
    return {
        "Key": {"pk": _s(Keys(scope).task_pk(config.task_id)), "sk": _s(push_sk(config.id))},
        "UpdateExpression": "SET " + ", ".join(assignments),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }


def _push_attributes(scope: Scope, config: TaskPushNotificationConfig, protocol_version: str) -> Item:
    return {
        "config": _s(config.to_json()),
        "protocolVersion": _s(protocol_version),
        "configId": _s(config.id),
        "taskId": _s(config.task_id),
        "tenant": _s(scope.tenant),
        "owner": _s(scope.owner),
    }


def config_from_item(item: Item) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig.model_validate_json(item["config"]["S"])


def push_target_from_item(item: Item) -> PushTarget:
    delivered = int(item.get("deliveredSeq", {}).get("N", "0"))
    return PushTarget(config_from_item(item), delivered, str(item.get("protocolVersion", {}).get("S", "1.0")))
