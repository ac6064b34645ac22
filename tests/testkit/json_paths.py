"""Paths into JSON values, for strategies that mutate one node of a valid input."""

from __future__ import annotations

from typing import Any

__all__ = ["node_paths"]


def node_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path (keys and indexes) of every node of ``value``, the root (``()``) first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += node_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += node_paths(child, (*prefix, index))
    return found
