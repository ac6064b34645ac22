"""The framework object an adapter runs: given as is, or made by the user's factory once, on the
first run (so importing the user's module stays cheap, and a cold start that never runs the agent
never builds it)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Made"]

T = TypeVar("T")


class Made(Generic[T]):
    """``source`` (an instance of ``kind``, or a function returning one), made once; ``what``
    names it in the error when the factory returns something else."""

    def __init__(self, source: T | Callable[[], T], kind: type[T], what: str) -> None:
        self._source = source
        self._kind = kind
        self._what = what
        self._made: T | None = source if isinstance(source, kind) else None
        self._lock = threading.Lock()  # the in-process queue runs items on threads

    def get(self) -> T:
        if self._made is None:
            with self._lock:
                if self._made is None:
                    made = self._source() if callable(self._source) else self._source
                    if not isinstance(made, self._kind):
                        raise TypeError(f"the factory returned {type(made).__name__}, not {self._what}")
                    self._made = made
        return self._made
