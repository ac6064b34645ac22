"""What the transport holds of an A2A call's server span; this base class is the span when tracing
is off, and does nothing (:mod:`._server` is the live one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["ServerCall"]

R = TypeVar("R")


class ServerCall:
    """Used as ``with telemetry.server_call(...) as call:`` around one call: the span is current
    inside, and an exception leaving the block is its error."""

    def __enter__(self) -> ServerCall:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        return None

    def request(self, *, version: str, tenant: str, fields: Mapping[str, Any]) -> None:
        """The request as v1.0 ProtoJSON: its message, task and context ids (never its text)."""

    def result(self, body: object) -> None:
        """A unary call's answer (the task's id, context and state, when it holds a Task)."""

    def streaming(self, response: R) -> R:
        """A streamed answer: the span ends when its body does."""
        return response
