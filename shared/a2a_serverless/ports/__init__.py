"""Ports: the small interfaces the core talks to. Adapters live in :mod:`a2a_serverless.adapters`."""

from .blobs import BlobError, BlobStore
from .delegation import DelegationRef, DelegationRefs
from .queue import DeliveryItem, DeliveryQueue, WorkItem, WorkQueue
from .signing import SigningKey
from .store import (
    MAX_ITEM_PAYLOAD_BYTES,
    AcceptedMessage,
    Checkpoint,
    DuplicateMessage,
    InvalidPageToken,
    ItemTooLarge,
    KeyKind,
    PushProgress,
    PushTarget,
    Scope,
    SendKey,
    StoredEvent,
    StoreError,
    TaskHead,
    TaskPage,
    TaskQuery,
    TaskRecord,
    TaskStore,
    VersionConflict,
)

__all__ = [
    "MAX_ITEM_PAYLOAD_BYTES",
    "AcceptedMessage",
    "BlobError",
    "BlobStore",
    "Checkpoint",
    "DelegationRef",
    "DelegationRefs",
    "DeliveryItem",
    "DeliveryQueue",
    "DuplicateMessage",
    "InvalidPageToken",
    "ItemTooLarge",
    "KeyKind",
    "PushProgress",
    "PushTarget",
    "Scope",
    "SendKey",
    "SigningKey",
    "StoreError",
    "StoredEvent",
    "TaskHead",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskStore",
    "VersionConflict",
    "WorkItem",
    "WorkQueue",
]
