"""What a framework adapter reports: the framework's stream, in the bridge's few words.

An adapter (:class:`~._bridge.FrameworkExecutor`) turns its framework's events into these; the
bridge turns these into the task (``docs/frameworks.md``). Arguments and results are JSON as the
framework gives them, and reach the task only when the executor opts in (``tool_details=True``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..json_types import JsonValue
from ..models import Part

__all__ = ["FrameworkEvent", "Output", "Pause", "TextDelta", "ToolCall", "ToolResult", "approves"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text, in order: appended to the run's one answer artifact."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The agent calls a tool: a WORKING status naming it."""

    name: str
    call_id: str = ""
    arguments: JsonValue = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool returned: a WORKING status only when tool details are opted in (it adds a write and
    says nothing new otherwise)."""

    name: str
    call_id: str = ""
    result: JsonValue = None


@dataclass(frozen=True, slots=True)
class Output:
    """Output that is not streamed text (structured data, files): an artifact of its own."""

    parts: list[Part]
    name: str = "output"


@dataclass(frozen=True, slots=True)
class Pause:
    """The run waits for a person: the task goes INPUT_REQUIRED with ``question``, and ``state``
    (what the framework needs to resume this run) is kept for the task until its next message,
    which the adapter then gets as ``Turn.resume``. The adapter's stream must end after it."""

    question: str
    state: bytes = b""
    data: dict[str, JsonValue] = field(default_factory=dict)
    """What the client may show beside the question (say, the tool awaiting approval), as a data
    part of the question message. Adapters put tool arguments in it only with ``tool_details``."""


FrameworkEvent = TextDelta | ToolCall | ToolResult | Output | Pause


_YES = re.compile(r"^\s*(y|yes|ok|okay|approve|approved|go ahead|sure|confirm|confirmed)\b", re.IGNORECASE)


def approves(reply: str) -> bool:
    """Whether a reply to an approval question approves: it starts with yes, ok, approve, go
    ahead, sure or confirm (any case). The adapters' default; each takes its own ``approves``."""
    return bool(_YES.match(reply))
