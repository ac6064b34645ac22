"""Ports: the small interfaces the core talks to. Adapters live in :mod:`a2a_serverless.adapters`."""

from .queue import WorkItem, WorkQueue
from .store import (
    DuplicateMessage,
    InvalidPageToken,
    ItemTooLarge,
    PushTarget,
    Scope,
    StoredEvent,
    StoreError,
    TaskPage,
    TaskQuery,
    TaskRecord,
    TaskStore,
    VersionConflict,
)

__all__ = [
    "DuplicateMessage",
    "InvalidPageToken",
    "ItemTooLarge",
    "PushTarget",
    "Scope",
    "StoreError",
    "StoredEvent",
    "TaskPage",
    "TaskQuery",
    "TaskRecord",
    "TaskStore",
    "VersionConflict",
    "WorkItem",
    "WorkQueue",
]
