"""Waiting for something that has no event to wait on (a queue drained, a process gone): asked again
and again until it holds, with a hang guard."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_until"]

T = TypeVar("T")


def wait_until(check: Callable[[], T], what: str, *, within: float, every: float = 0.1) -> T:
    """``check()``'s first truthy answer, asked every ``every`` seconds. After ``within`` seconds (a
    hang guard, never a measured expectation) the test fails, naming ``what`` it waited for."""
    deadline = time.monotonic() + within
    while not (found := check()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        time.sleep(every)
    return found
