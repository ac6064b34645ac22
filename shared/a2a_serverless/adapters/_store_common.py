"""What both ``TaskStore`` adapters must compute identically, so the in-memory fake cannot drift
from DynamoDB: listing sort keys, page tokens, transaction limits and argument checks.

Pure Python (no boto3): the memory store imports it too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

from ..models import StreamResponse, Task, TaskPushNotificationConfig, format_timestamp
from ..ports.store import InvalidPageToken, ItemTooLarge, Scope, TaskQuery

__all__ = [
    "MAX_ITEM_PAYLOAD_BYTES",
    "MAX_TRANSACTION_ITEMS",
    "check_commit_size",
    "check_create",
    "check_listing_position",
    "check_page_size",
    "check_payload_size",
    "commit_listing_key",
    "decode_page_token",
    "encode_page_token",
    "listing_fingerprint",
    "listing_key",
    "parse_timestamp",
    "push_config_for",
    "push_fingerprint",
    "status_floor",
    "to_millis",
]

MAX_TRANSACTION_ITEMS = 100
"""DynamoDB's TransactWriteItems limit. The fake enforces it too, so code that passes against the
fake cannot fail on AWS for writing too many events at once."""

_TIMESTAMP_WIDTH = len("2025-01-01T00:00:00.000Z")


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


def to_millis(value: datetime) -> datetime:
    """``value`` in UTC at the millisecond precision the store keeps."""
    return parse_timestamp(format_timestamp(value))


def listing_key(task: Task, created_at: datetime) -> str:
    """ListTasks sort key: the status timestamp (``created_at`` when the status has none), fixed
    width so it sorts as text, then the task id as the tie-break."""
    return f"{format_timestamp(task.status.timestamp or created_at)}#{task.id}"


def commit_listing_key(task: Task, created_at: datetime | None) -> str:
    """The listing key a commit writes, or '' to keep the stored one: without a status timestamp
    the key needs the creation time, and a commit only knows it if the caller's record carries it."""
    stamp = task.status.timestamp or created_at
    return f"{format_timestamp(stamp)}#{task.id}" if stamp is not None else ""


def status_floor(query: TaskQuery) -> str:
    """The lowest listing key ``status_after`` admits ('' when unset): inclusive, because
    ``"<ts>#<id>" >= "<ts>"``."""
    return format_timestamp(query.status_after) if query.status_after is not None else ""


def listing_fingerprint(scope: Scope, query: TaskQuery) -> str:
    state = query.state.value if query.state is not None else ""
    return _fingerprint("tasks", scope.tenant, scope.owner, query.context_id, state, status_floor(query))


def push_fingerprint(scope: Scope, task_id: str) -> str:
    return _fingerprint("push", scope.tenant, scope.owner, task_id)


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def encode_page_token(position: str, fingerprint: str) -> str:
    """An opaque token: the last returned sort position, bound to the scope and filters that
    produced it. Not a secret: positions only ever select within the caller's own scope."""
    raw = json.dumps({"p": position, "f": fingerprint}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


MAX_POSITION_BYTES = 1024
"""DynamoDB's limit on a sort key value: no position we issue comes near it."""
MAX_PAGE_TOKEN_CHARS = 4 * MAX_POSITION_BYTES
"""Generous for a base64 JSON object of a fingerprint and a position."""


def decode_page_token(token: str, fingerprint: str) -> str:
    """The position in ``token``; raises :class:`InvalidPageToken` unless this fingerprint issued it.
    The position becomes a DynamoDB key value (at most 1,024 bytes for a sort key), so a token
    holding a longer one is refused here rather than by DynamoDB."""
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise InvalidPageToken("malformed page token")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        raise InvalidPageToken("malformed page token") from exc
    if not isinstance(data, dict) or data.get("f") != fingerprint or not isinstance(data.get("p"), str):
        raise InvalidPageToken("page token was issued for another scope or query")
    position: str = data["p"]
    if not position or len(position.encode("utf-8", "surrogatepass")) > MAX_POSITION_BYTES:
        raise InvalidPageToken("malformed page token")
    return position


def check_listing_position(position: str, floor: str) -> None:
    if len(position) <= _TIMESTAMP_WIDTH or position[_TIMESTAMP_WIDTH] != "#" or position < floor:
        raise InvalidPageToken("malformed page token")


def check_page_size(page_size: int) -> None:
    if page_size < 1:
        raise ValueError("page_size must be at least 1")


def check_create(events: Sequence[StreamResponse], message_id: str, with_push: bool) -> None:
    if not message_id:
        raise ValueError("message_id is required")
    items = 2 + len(events) + (1 if with_push else 0)
    if items > MAX_TRANSACTION_ITEMS:
        raise ValueError(f"create_task writes {items} items; at most {MAX_TRANSACTION_ITEMS} fit one transaction")


MAX_ITEM_PAYLOAD_BYTES = 400 * 1024 - 8 * 1024
"""DynamoDB's item limit (400 KB, names and values) less room for the keys and bookkeeping
attributes next to the JSON payload(s) of a head or event item."""


def check_payload_size(*payloads: str) -> None:
    """Raise ItemTooLarge if the JSON payloads that share one item would not fit in it."""
    size = sum(len(p.encode("utf-8")) for p in payloads)
    if size > MAX_ITEM_PAYLOAD_BYTES:
        raise ItemTooLarge(f"{size} bytes of task data do not fit one item (at most {MAX_ITEM_PAYLOAD_BYTES})")


def check_commit_size(events: Sequence[StreamResponse]) -> None:
    items = 1 + len(events)
    if items > MAX_TRANSACTION_ITEMS:
        raise ValueError(f"commit writes {items} items; at most {MAX_TRANSACTION_ITEMS} fit one transaction")


def push_config_for(config: TaskPushNotificationConfig, task_id: str = "") -> TaskPushNotificationConfig:
    """Validate a config before it is stored; with ``task_id`` (create), an empty task id is filled
    in and a different one rejected."""
    if task_id:
        if config.task_id and config.task_id != task_id:
            raise ValueError("push config names another task")
        config = config.model_copy(update={"task_id": task_id})
    if not config.id or not config.task_id:
        raise ValueError("push config needs both id and task_id")
    return config
