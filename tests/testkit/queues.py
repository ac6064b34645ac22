"""A work queue that keeps what it is given, for tests that run the worker themselves."""

from __future__ import annotations

from a2a_serverless.ports import WorkItem

__all__ = ["RecordingQueue"]


class RecordingQueue:
    """The ``WorkQueue`` port as a list: ``items`` in the order they were queued."""

    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def enqueue(self, item: WorkItem) -> None:
        self.items.append(item)
