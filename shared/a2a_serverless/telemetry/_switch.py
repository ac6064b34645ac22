"""The switch: which exporters tracing uses, read once from the environment on first use.

``A2A_TRACING`` names them, comma-separated: ``otlp`` (OTLP over HTTP, configured by
OpenTelemetry's own ``OTEL_*`` variables), ``file`` (JSON lines in ``A2A_TRACING_DIR``, one file per
process: what the local stack serves), ``memory`` (kept in the process, for tests); ``off`` or
nothing turns tracing off, and then no OpenTelemetry module is ever imported.
``A2A_TRACING_CONTENT=true`` lets message text into spans (off by default).

Not part of :mod:`a2a_serverless.config`: tracing is decided before (and apart from) the settings of
the function, and reading it costs the functions that never trace nothing but this module.

The request path asks it through the two entry points here, which answer at once when tracing is
off: :func:`server_call` (the transport's span of an A2A call: :class:`ServerCall`, a do-nothing one
when off, :mod:`._server`'s live one when on) and :func:`traceparent` (what the store writes with a
log item). The package re-exports them with its other entry points (:mod:`a2a_serverless.telemetry`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..config import env_flag
from ._errors import TracingConfigError

if TYPE_CHECKING:
    from types import TracebackType

    from starlette.responses import Response

__all__ = [
    "CONTENT_ENV",
    "DIR_ENV",
    "MODES",
    "SWITCH_ENV",
    "ServerCall",
    "Switch",
    "TracingConfigError",
    "checked",
    "parse",
    "reset",
    "server_call",
    "switch",
    "traceparent",
]

SWITCH_ENV = "A2A_TRACING"
CONTENT_ENV = "A2A_TRACING_CONTENT"
DIR_ENV = "A2A_TRACING_DIR"
MODES = frozenset({"otlp", "file", "memory"})
_OFF = frozenset({"", "off", "none", "false", "0"})


@dataclass(frozen=True, slots=True)
class Switch:
    modes: frozenset[str] = frozenset()
    content: bool = False
    """Message text may go into spans (``A2A_TRACING_CONTENT``)."""
    directory: str = ""
    """Where ``file`` writes (``A2A_TRACING_DIR``)."""

    @property
    def on(self) -> bool:
        return bool(self.modes)


def parse(environ: Mapping[str, str]) -> Switch:
    words = {w.strip().lower() for w in environ.get(SWITCH_ENV, "").split(",")} - _OFF
    unknown = words - MODES
    if unknown:
        raise TracingConfigError(
            f"{SWITCH_ENV} names no exporter {', '.join(sorted(unknown))} (one or more of otlp, file, memory; or off)"
        )
    directory = environ.get(DIR_ENV, "")
    if "file" in words and not directory:
        raise TracingConfigError(f"{SWITCH_ENV}=file needs {DIR_ENV}, the directory to write spans to")
    content = env_flag(environ.get(CONTENT_ENV))
    return Switch(frozenset(words), content, directory)


def checked(environ: Mapping[str, str]) -> Switch:
    """The switch ``environ`` sets, once the packages its exporters need import (nothing is
    installed): what a function's cold start and the local stack check before serving anything
    (:mod:`a2a_serverless.lambda_.startup`). Raises :class:`TracingConfigError` in one line that names
    what to set or install."""
    parsed = parse(environ)
    if not parsed.on:
        return parsed
    try:
        from . import _sdk  # noqa: F401  # the SDK, and what file and memory export with

        if "otlp" in parsed.modes:
            import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
    except ImportError as exc:
        raise TracingConfigError(
            f"{SWITCH_ENV}={','.join(sorted(parsed.modes))} needs the OpenTelemetry SDK, which is not installed "
            f"(no module {exc.name or 'opentelemetry'}): pip install 'a2a-serverless[tracing]'"
        ) from None
    if "otlp" in parsed.modes:
        from ._sigv4 import signing_target

        signing_target(environ)  # a signed export's region (its credentials are the function's, found then)
    return parsed


_lock = threading.Lock()
_current: Switch | None = None


def switch() -> Switch:
    """The process's switch, read from ``os.environ`` on first use; turning tracing on installs the
    OpenTelemetry SDK then (:mod:`._sdk`), never at import."""
    global _current
    current = _current
    if current is not None:
        return current
    with _lock:
        if _current is None:
            parsed = checked(os.environ)
            if parsed.on:
                from . import _sdk

                _sdk.install(parsed.modes, parsed.directory, _content_now)
            _current = parsed
        return _current


def _content_now() -> bool:
    """Content capture as the switch says now (the SDK's exporters ask at each export)."""
    return switch().content


def reset() -> None:
    """Read the environment again on next use (tests that switch tracing on and off). Exporters
    already installed stay installed; spans are made only while the switch is on."""
    global _current
    with _lock:
        _current = None


class ServerCall(Protocol):
    """What the transport holds of an A2A call's server span, used as ``with server_call(...) as
    call:`` around one call: the span is current inside, and an exception leaving the block is its
    error."""

    def __enter__(self) -> ServerCall: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def request(self, *, version: str, tenant: str, fields: Mapping[str, object]) -> None:
        """The request as v1.0 ProtoJSON: its message, task and context ids (never its text)."""

    def result(self, body: object) -> None:
        """A unary call's answer (the task's id, context and state, when it holds a Task)."""

    def streaming(self, response: Response) -> Response:
        """A streamed answer: the span ends when its body does."""


class _OffCall:
    """The server call when tracing is off: does nothing."""

    def __enter__(self) -> _OffCall:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def request(self, *, version: str, tenant: str, fields: Mapping[str, object]) -> None:
        return None

    def result(self, body: object) -> None:
        return None

    def streaming(self, response: Response) -> Response:
        return response


_OFF_CALL = _OffCall()


def server_call(method: str, headers: Mapping[str, str]) -> ServerCall:
    """The server span of an A2A call of ``method`` (its v1.0 name), a child of the request's own
    trace context when its ``headers`` carry one."""
    current = switch()
    if not current.on:
        return _OFF_CALL
    from ._server import LiveServerCall

    return LiveServerCall(method, headers, current.content)


def traceparent() -> str:
    """The current span's W3C ``traceparent`` ('' when tracing is off or nothing is traced)."""
    if not switch().on:
        return ""
    from ._spans import carrier_of

    return carrier_of()
