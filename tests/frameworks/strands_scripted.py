"""A Strands model that plays a script, for the Strands suites (no network, no model key): each
call of the model streams the next reply, in the Bedrock ConverseStream events every Strands model
yields (``strands.models.Model.stream``). Also copied beside the agent module the local stack runs
in the end-to-end test, so it imports nothing from the test suite."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from strands import tool
from strands.hooks import AfterToolsEvent
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent

__all__ = ["Call", "Fail", "Forever", "Reply", "ScriptedModel", "Text", "drawing"]


@dataclass(frozen=True)
class Text:
    """A text answer, streamed in these pieces."""

    pieces: tuple[str, ...]

    def __init__(self, *pieces: str) -> None:
        object.__setattr__(self, "pieces", pieces)


@dataclass(frozen=True)
class Call:
    """The model asks for a tool."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str = "call-1"


@dataclass(frozen=True)
class Forever:
    """Text pieces without end (a pause between them), until the stream is closed."""

    closed: list[str] = field(default_factory=list)
    """Gets "closed" when the stream is closed."""


@dataclass(frozen=True)
class Fail:
    """Streams ``before``, then the model fails with ``error``."""

    error: Exception
    before: str = ""


Reply = Text | Call | Forever | Fail
Script = Reply | Callable[[Messages], Reply]
"""A reply, or a function of the conversation the model is given that makes it."""


class ScriptedModel(Model):
    """Each call streams the next reply of ``script``; ``seen`` keeps the conversation each call got."""

    def __init__(self, *script: Script) -> None:
        self.script = list(script)
        self.seen: list[Messages] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(  # the agent's own structured output runs through stream (a tool call)
        self, output_model: type[BaseModel], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError

    def stream(self, messages: Messages, *args: Any, **kwargs: Any) -> AsyncIterable[StreamEvent]:
        self.seen.append(copy.deepcopy(messages))
        assert self.script, "the model was called more times than the script says"
        step = self.script.pop(0)
        return _stream(step(messages) if callable(step) else step)


async def _stream(reply: Reply) -> AsyncGenerator[StreamEvent, None]:
    yield {"messageStart": {"role": "assistant"}}
    if isinstance(reply, Call):
        yield {"contentBlockStart": {"start": {"toolUse": {"name": reply.name, "toolUseId": reply.id}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(reply.input)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}
        return
    yield {"contentBlockStart": {"start": {}}}
    if isinstance(reply, Text):
        for piece in reply.pieces:
            yield {"contentBlockDelta": {"delta": {"text": piece}}}
    elif isinstance(reply, Fail):
        if reply.before:
            yield {"contentBlockDelta": {"delta": {"text": reply.before}}}
        raise reply.error
    else:
        try:
            n = 0
            while True:
                n += 1
                yield {"contentBlockDelta": {"delta": {"text": f"chunk {n} "}}}
                await asyncio.sleep(0.02)
        finally:
            reply.closed.append("closed")
    yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": "end_turn"}}


def drawing(image: bytes) -> tuple[Any, Any]:
    """A tool that draws a chart and writes its report, and a hook that hands them to the person:
    Strands' way to end a turn with a tool's files (``AfterToolsEvent.end_turn``), not asking the
    model again."""

    @tool
    def draw(subject: str) -> dict[str, Any]:
        """Draw a chart and write its report."""
        return {
            "status": "success",
            "content": [
                {"image": {"format": "png", "source": {"bytes": image}}},
                {"document": {"format": "pdf", "name": "report", "source": {"bytes": b"%PDF-1.7 report"}}},
            ],
        }

    def hand_over(event: AfterToolsEvent) -> None:
        results = [b["toolResult"] for b in event.message["content"] if "toolResult" in b]
        files = [c for r in results for c in r["content"] if "image" in c or "document" in c]
        if files:
            event.end_turn = [{"text": f"Here is your {len(files)}-file chart."}, *files]

    return draw, hand_over
