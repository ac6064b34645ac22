"""The store the bad-input and hostile-input suites run on, and what no response may contain."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.blobs import PartOffloader

__all__ = ["LEAK_MARKERS", "SpyStore"]

LEAK_MARKERS = (
    "Traceback",
    'File "',
    "site-packages",
    "pydantic",
    "errors.pydantic.dev",
    "RuntimeError",
    "ValueError",
    "KeyError",
    "TypeError",
    "AttributeError",
    "RecursionError",
    "ValidationError",
    "ClientError",
    "ValidationException",
    "botocore",
    "Exception",
)
"""What must never reach a caller: Python internals and exception text."""


class SpyStore(MemoryTaskStore):
    """The memory store, counting every write it is asked for (``attempts``) and every write that
    went through (``writes``: a conditional write the store refused, such as the create of an
    idempotent re-send, changed nothing), and showing everything it holds (``contents``)."""

    def __init__(self, offloader: PartOffloader | None = None) -> None:
        super().__init__(offloader=offloader)
        self.attempts = 0
        self.writes = 0
        self._count_lock = threading.Lock()

    def _counted(self, write: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._count_lock:
            self.attempts += 1
        result = write(*args, **kwargs)
        with self._count_lock:
            self.writes += 1
        return result

    def create_task(self, *args: Any, **kwargs: Any) -> Any:
        return self._counted(super().create_task, *args, **kwargs)

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        return self._counted(super().commit, *args, **kwargs)

    def put_push_config(self, *args: Any, **kwargs: Any) -> Any:
        return self._counted(super().put_push_config, *args, **kwargs)

    def delete_push_config(self, *args: Any, **kwargs: Any) -> Any:
        return self._counted(super().delete_push_config, *args, **kwargs)

    def contents(self) -> Any:
        """Every task head, snapshot, event, push config and idempotency key, as stored (immutable
        values)."""
        with self._lock:
            return (
                dict(self._heads),
                dict(self._snapshots),
                {key: dict(events) for key, events in self._events.items()},
                {key: dict(configs) for key, configs in self._push.items()},
                dict(self._messages),
            )

    def snapshot(self) -> Any:
        """The write attempts so far and the contents: what a rejected request must leave alone."""
        return self.attempts, self.contents()
