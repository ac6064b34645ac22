"""Resolve ``package.module:attr`` import paths with one clear error."""

from __future__ import annotations

import importlib

from a2a_serverless.execution._path import describe

__all__ = ["ImportPathError", "import_object"]


class ImportPathError(ValueError):
    """An import path that does not resolve; the message says why, in one line."""


def import_object(path: str) -> object:
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ImportPathError(f"{path!r} must look like 'package.module:Name'")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any failure while importing the module: a SyntaxError, a KeyError for a missing setting
        raise ImportPathError(f"cannot import module {module_name!r} ({describe(exc)})") from exc
    target: object = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ImportPathError(f"module {module_name!r} has no attribute {attr!r}") from None
    return target
