"""What a fix expects of moto, and the check that moto still looks like it (run at start).

A fix replaces or wraps moto's private methods, and reads private attributes of its objects. A moto
release may rename, re-sign or remove any of them; a fix installed over a changed target would
half-work (a wrapper called with arguments moto no longer passes, an attribute read that fails on
the first request). So each fix names its targets, and :meth:`Fix.check` compares them with the
installed moto before anything is patched, failing with :class:`MotoShapeError`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

__all__ = ["TESTED_MOTO_VERSIONS", "Fix", "MotoShapeError", "Target"]

TESTED_MOTO_VERSIONS = ("5.2.5",)
"""The moto versions every fix was tested with (``pyproject.toml`` pins moto to their series)."""


def installed_moto_version() -> str:
    try:
        return version("moto")
    except PackageNotFoundError:
        return "unknown"


def sample_table(cls: Any) -> Any:
    """A ``moto.dynamodb.models.table.Table`` (``cls``) with a hash and a range key, to check the
    attributes its ``__init__`` sets."""
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    attr = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]
    return cls("t", account_id="123456789012", region="us-east-1", schema=schema, attr=attr)


@dataclass(frozen=True)
class Target:
    """One thing of moto a fix relies on: ``path`` is ``module:Qualified.name``.

    ``params`` are the exact parameter names the fix was written against (None: not checked, for
    builtins without a signature); ``attributes`` must exist on the target, or on ``sample(target)``
    when given (instance attributes, set in ``__init__``)."""

    path: str
    params: tuple[str, ...] | None = None
    callable: bool = True
    attributes: tuple[str, ...] = ()
    sample: Callable[[Any], Any] | None = None

    def problem(self) -> str | None:
        """What changed, or None if moto still has the expected shape."""
        module_name, _, qualname = self.path.partition(":")
        try:
            target: Any = importlib.import_module(module_name)
        except ImportError as error:
            return f"module {module_name} cannot be imported ({error})"
        for part in qualname.split("."):
            if not hasattr(target, part):
                return f"{part!r} no longer exists"
            target = getattr(target, part)
        if self.callable and not callable(target):
            return f"is no longer callable (it is {type(target).__name__})"
        if self.params is not None:
            # A fix's wrapper carries moto's function as ``__wrapped__``, which signature() follows:
            # after installation, the check still reads moto's own parameters.
            try:
                found = tuple(inspect.signature(target).parameters)
            except (TypeError, ValueError):
                return "has no readable signature any more"
            if found != self.params:
                return f"has parameters ({', '.join(found)}); the fix expects ({', '.join(self.params)})"
        if self.attributes:
            try:
                holder = target if self.sample is None else self.sample(target)
            except Exception as error:  # any failure to build one is a changed constructor
                return f"cannot be built as the fix expects ({type(error).__name__}: {error})"
            missing = [name for name in self.attributes if not hasattr(holder, name)]
            if missing:
                kind = "attribute" if self.sample is None else "instance attribute"
                return f"has no {kind} {', '.join(map(repr, missing))} any more"
        return None


@dataclass(frozen=True)
class Fix:
    """One fix of moto: its name, what it patches or relies on, and how it is installed. Its
    documentation (moto's behaviour, AWS's, a reproduction, the upstream report) is the
    docstring of the module that defines it."""

    name: str
    targets: tuple[Target, ...]
    install: Callable[[], None] = field(repr=False)
    module: str = field(default="", repr=False)

    def problems(self) -> list[tuple[Target, str]]:
        return [(target, problem) for target in self.targets if (problem := target.problem()) is not None]

    def check(self) -> None:
        """Raise :class:`MotoShapeError` if a target changed."""
        found = self.problems()
        if found:
            raise MotoShapeError([(self, target, problem) for target, problem in found])


class MotoShapeError(RuntimeError):
    """moto is not the moto a fix was written for: the fix is not installed, and the local stack
    does not start."""

    def __init__(self, problems: Sequence[tuple[Fix, Target, str]]) -> None:
        self.problems = list(problems)
        self.fixes = sorted({fix.name for fix, _, _ in problems})
        lines = [f"moto fix {fix.name!r}: {target.path} {problem}" for fix, target, problem in problems]
        tested = ", ".join(TESTED_MOTO_VERSIONS)
        super().__init__(
            "\n".join(
                [
                    f"moto {installed_moto_version()} is not shaped as the local stack's moto fixes expect"
                    f" (they were tested with moto {tested}):",
                    *lines,
                    "Install a tested moto (pyproject.toml pins it), or check each fix named here against"
                    " this moto (a2a_serverless_dev.moto_fixes, docs/local-stack.md).",
                ]
            )
        )
