"""Resolve ``package.module:attr`` import paths with one clear error."""

from __future__ import annotations

import importlib

__all__ = ["ImportPathError", "import_object"]


class ImportPathError(ValueError):
    """An import path that does not resolve; the message says why, in one line."""


def import_object(path: str) -> object:
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ImportPathError(f"{path!r} must look like 'package.module:Name'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        reason = f"{exc.__class__.__name__}: {exc}"
        raise ImportPathError(f"cannot import module {module_name!r} ({reason})") from exc
    target: object = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ImportPathError(f"module {module_name!r} has no attribute {attr!r}") from None
    return target
