"""A push config's delivery marks, on its item (``sk=PUSH#<configId>``): how far its deliveries got.

``deliveredSeq`` is the delivery cursor (events up to it were delivered or dead-lettered);
``triedSeq`` the event the latest failed attempt failed on (:mod:`a2a_serverless.ports.push_marks`).
Each only ever moves up: an UpdateItem conditioned on the item existing (a deleted config is not
brought back) and on the mark being lower. An update, never an insert, so the dispatcher's stream
filter never sees it.
"""

from __future__ import annotations

from typing import Literal

from ...ports.push_marks import PushProgress, PushTarget
from ...ports.store import Scope
from ...versions import stored_version
from .codec import PUSH_SK_PREFIX, Item, Keys, config_from_item, push_sk
from .queries import push_progress_query
from .table import Table

__all__ = ["push_progress", "push_target_from_item", "raise_push_mark"]


def push_target_from_item(item: Item) -> PushTarget:
    version = stored_version(item.get("protocolVersion", {}).get("S"))
    return PushTarget(config_from_item(item), _mark(item, "deliveredSeq"), version, _mark(item, "triedSeq"))


def raise_push_mark(
    table: Table, scope: Scope, task_id: str, config_id: str, mark: Literal["deliveredSeq", "triedSeq"], seq: int
) -> bool:
    """Set the config's ``mark`` to ``seq`` if the config exists and the mark is lower (or unset);
    returns whether it moved."""
    return table.update_if(
        {"pk": {"S": Keys(scope).task_pk(task_id)}, "sk": {"S": push_sk(config_id)}},
        f"SET {mark} = :seq",
        f"attribute_exists(pk) AND (attribute_not_exists({mark}) OR {mark} < :seq)",
        {":seq": {"N": str(seq)}},
    )


def push_progress(table: Table, scope: Scope, task_id: str) -> dict[str, PushProgress]:
    """Config id -> its marks, for every config of the task (one Query that projects the keys and
    the marks: no config bodies)."""
    return {
        str(item["sk"]["S"])[len(PUSH_SK_PREFIX) :]: PushProgress(_mark(item, "deliveredSeq"), _mark(item, "triedSeq"))
        for item in table.query(push_progress_query(scope, task_id))
    }


def _mark(item: Item, name: str) -> int:
    return int(item.get(name, {}).get("N", "0"))
