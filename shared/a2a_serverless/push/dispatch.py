"""From the table's change stream to delivery items (the dispatcher function's core).

The dispatcher is fed by DynamoDB Streams, filtered to two kinds of inserts:

* an event-log item (``sk=EVT#<seq>``): every config of its task must receive events up to that
  seq, so one :class:`~.delivery.DeliveryItem` per config is queued;
* a push-config item (``sk=PUSH#<id>``): a config created while its task was logging events may
  have missed the events written between the creating request's read and its write, so it is
  queued up to the task's current last event (a no-op when its cursor is already there).

Scope and ids come from the item's own attributes, never from parsing keys. Everything here is
idempotent: a record processed twice queues items that the FIFO queue deduplicates or that find
the config's cursor already past them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..ports import Scope, TaskStore
from .delivery import DeliveryItem
from .queue import DeliveryQueue

__all__ = ["dispatch_image", "items_for_event", "items_for_new_config"]

logger = logging.getLogger(__name__)

EVENT_PREFIX = "EVT#"
PUSH_PREFIX = "PUSH#"
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
    record = store.get_task(scope, task_id)
    if record is None or record.last_seq <= delivered_seq:
        return []
    return [DeliveryItem(scope.tenant, scope.owner, task_id, config_id, up_to_seq=record.last_seq)]


def dispatch_image(image: Mapping[str, Any], store: TaskStore, queue: DeliveryQueue) -> int:
    """Queue the deliveries one inserted item calls for (``image``: the stream record's NewImage,
    deserialized). Returns how many items were queued; raises if queueing failed."""
    sk = str(image.get("sk", ""))
    scope = Scope(str(image.get("tenant", "")), str(image["owner"]))
    task_id = str(image["taskId"])
    if sk.startswith(EVENT_PREFIX):
        items = items_for_event(store, scope, task_id, int(image["seq"]))
    elif sk.startswith(PUSH_PREFIX):
        items = items_for_new_config(store, scope, task_id, str(image["configId"]), int(image.get("deliveredSeq", 0)))
    else:
        logger.warning("ignoring a stream record the filter should have dropped", extra={"sk_kind": sk[:5]})
        return 0
    if items:
        queue.send(items)
    return len(items)
