"""The object an executor path (``package.module:Class``) names, or one line saying why not.

Whatever a module raises while it is imported (an ImportError, a SyntaxError, a KeyError for a missing
setting) is the path's fault as far as the deployment can tell: it becomes a ``ConfigError`` naming the
path and the cause, so a cold start fails with that line, not a traceback.
"""

from __future__ import annotations

import importlib

from ..config import ConfigError

__all__ = ["describe", "executor_target"]


def executor_target(path: str) -> object:
    """The attribute ``path`` names (imported, never called). Raises ``ConfigError``."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(f"executor {path!r}: cannot import module {module_name!r} ({describe(exc)})") from exc
    target = getattr(module, attr, None)
    if target is None:
        raise ConfigError(f"executor {path!r}: module {module_name!r} has no attribute {attr!r}")
    return target


def describe(exc: BaseException) -> str:
    """One line: the exception's type and message, and for a syntax error where it is."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.__class__.__name__}: {exc.msg} ({exc.filename}, line {exc.lineno})"
    return f"{exc.__class__.__name__}: {exc}".replace("\n", " ")
