"""From the table's change stream to delivery items (the dispatcher function's core).

The dispatcher is fed by DynamoDB Streams, filtered to these records:

* an event-log item's insert (``sk=EVT#<seq>``): every config of its task must receive events up to
  that seq, so one :class:`~.delivery.DeliveryItem` per config is queued;
* a head (``sk=META``): the same, up to its ``lastSeq``, for a new task's head (a create writes it
  after its first events and its inline config: the events are readable once it is) and for a head
  that holds the events that ended its task (``heldFirst``: that commit is the head alone);
* a push-config item (``sk=PUSH#<id>``): a config created while its task was logging events may
  have missed the events written between the creating request's read and its write, so it is
  queued up to the task's current last event (a no-op when its cursor is already there).

A stream batch is handled per task: however many of its events a batch holds, the task's configs
are read once and each config gets one item up to the highest of them (the delivery function sends
everything after the config's cursor up to that point, in order). Scope and ids come from the
items' own attributes, never from parsing keys. Everything here is idempotent: a record processed
twice queues items that the FIFO queue deduplicates or that find the config's cursor already past
them. With tracing on, a log item carries its commit's ``traceparent`` (``trace``), a config item
its call's, and a task's dispatch continues that trace; its delivery items carry the dispatch's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

from .. import telemetry
from ..json_types import JsonValue
from ..ports import DeliveryItem, DeliveryQueue, Scope, TaskStore

__all__ = ["dispatch_images", "items_for_event", "items_for_new_config"]

logger = logging.getLogger(__name__)

EVENT_PREFIX = "EVT#"
PUSH_PREFIX = "PUSH#"
HEAD_SK = "META"
_CONFIG_PAGE = 100


def items_for_event(store: TaskStore, scope: Scope, task_id: str, seq: int) -> list[DeliveryItem]:
    items: list[DeliveryItem] = []
    token = ""
    while True:
        configs, token = store.list_push_configs(scope, task_id, _CONFIG_PAGE, token)
        items.extend(DeliveryItem(scope.tenant, scope.owner, task_id, c.id, up_to_seq=seq) for c in configs)
        if not token:
            return items


def items_for_new_config(
    store: TaskStore, scope: Scope, task_id: str, config_id: str, delivered_seq: int
) -> list[DeliveryItem]:
    head = store.get_head(scope, task_id)
    if head is None or head.last_seq <= delivered_seq:
        return []
    return [DeliveryItem(scope.tenant, scope.owner, task_id, config_id, up_to_seq=head.last_seq)]


@dataclass
class _TaskChanges:
    """What one stream batch says about one task: its newest event, and configs that appeared."""

    scope: Scope
    task_id: str
    records: list[int] = field(default_factory=list)
    """Positions, in the batch, of the records about this task."""
    last_seq: int = 0
    new_configs: dict[str, int] = field(default_factory=dict)
    """Config id -> its delivery cursor when it was written."""
    traces: dict[int, str] = field(default_factory=dict)
    """Seq -> the ``traceparent`` of the commit that logged it; 0 -> the call that wrote a config
    (tracing on)."""


def dispatch_images(images: Sequence[Mapping[str, JsonValue]], store: TaskStore, queue: DeliveryQueue) -> list[int]:
    """Queue the deliveries a batch of inserted items (stream NewImages, deserialized, in stream
    order) calls for. Returns the positions of the records that could not be handled (every record
    of a task whose items could not be read or queued), in order; an empty list means all done."""
    tasks: dict[tuple[str, str, str], _TaskChanges] = {}
    for position, image in enumerate(images):
        sk = str(image.get("sk", ""))
        head = sk == HEAD_SK
        if not (head or sk.startswith((EVENT_PREFIX, PUSH_PREFIX))):
            logger.warning("ignoring a stream record the filter should have dropped", extra={"sk_kind": sk[:5]})
            continue
        if "owner" not in image or "taskId" not in image:
            # Not an item we wrote whole. Real streams carry one INSERT with the full item; moto also
            # emits a key-only INSERT ahead of it for an UpdateItem that creates the item. Failing the
            # batch on it would hold back (and in the end drop) every other record of the shard.
            logger.warning("ignoring a stream record without owner or task id", extra={"sk_kind": sk[:5]})
            continue
        scope = Scope(str(image.get("tenant", "")), str(image["owner"]))
        task_id = str(image["taskId"])
        changes = tasks.setdefault((scope.tenant, scope.owner, task_id), _TaskChanges(scope, task_id))
        changes.records.append(position)
        seq = 0
        if sk.startswith(PUSH_PREFIX):
            changes.new_configs[str(image["configId"])] = int(image.get("deliveredSeq", 0))
        else:
            seq = int(image.get("lastSeq", 0)) if head else int(image["seq"])
            changes.last_seq = max(changes.last_seq, seq)
        if trace := image.get("trace"):
            changes.traces[seq] = str(trace)
    failed: list[int] = []
    for changes in tasks.values():
        try:
            with _traced(changes) as trace:
                queue.send([replace(item, trace=trace) for item in _items(store, changes)])
        except Exception:
            logger.exception("could not queue push deliveries", extra={"task_id": changes.task_id})
            failed.extend(changes.records)
    return sorted(failed)


def _traced(changes: _TaskChanges) -> AbstractContextManager[str]:
    """The task's dispatch span: a child of the newest commit's (or, for new configs alone, of the
    call that wrote them), linked to the batch's other commits."""
    newest = changes.traces[max(changes.traces)] if changes.traces else ""
    others = sorted(set(changes.traces.values()) - {newest})  # a commit's log items share its trace
    return telemetry.dispatch(
        newest, task_id=changes.task_id, up_to_seq=changes.last_seq, records=len(changes.records), links=others
    )


def _items(store: TaskStore, changes: _TaskChanges) -> list[DeliveryItem]:
    scope, task_id = changes.scope, changes.task_id
    items = items_for_event(store, scope, task_id, changes.last_seq) if changes.last_seq else []
    covered = {item.config_id for item in items}
    for config_id, delivered in changes.new_configs.items():
        if config_id not in covered:
            items.extend(items_for_new_config(store, scope, task_id, config_id, delivered))
    return items
