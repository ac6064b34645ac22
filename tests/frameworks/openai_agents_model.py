"""A scripted model for the OpenAI Agents SDK: no network, no key. Each call streams what the test's
function yields for the model's input: text pieces (each one ``response.output_text.delta``) and
function calls (``agents.testing.function_call``), then ``response.completed`` with the response
they make, as a Responses API model streams. (The SDK's own ``agents.testing.ScriptedModel``
streams each message as one delta: these tests need the chunks.)

Imported by the framework suite and by the agent module its end-to-end test serves."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

from agents import Agent, ImageGenerationTool, TResponseInputItem
from agents.items import ModelResponse, TResponseOutputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.testing import assistant_message
from openai.types.responses import Response, ResponseCompletedEvent, ResponseTextDeltaEvent
from openai.types.responses.response_output_item import ImageGenerationCall

__all__ = ["ScriptedModel", "Stream", "drawing_agent", "said_by_user", "tool_outputs"]

Stream = AsyncIterator[str | TResponseOutputItem]


class ScriptedModel(Model):
    """Streams ``script(input)`` for every call of the run (the input: the conversation so far)."""

    def __init__(self, script: Callable[[list[TResponseInputItem]], Stream]) -> None:
        self.script = script
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the adapter streams: Runner.run_streamed calls stream_response")

    async def stream_response(
        self, system_instructions: str | None, input: str | list[TResponseInputItem], *args: Any, **kwargs: Any
    ) -> AsyncIterator[TResponseStreamEvent]:
        items: list[TResponseInputItem] = [{"role": "user", "content": input}] if isinstance(input, str) else input
        self.inputs.append(items)
        text: list[str] = []
        calls: list[TResponseOutputItem] = []
        async for piece in self.script(items):
            if isinstance(piece, str):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id="message",
                    output_index=0,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                    sequence_number=len(text),
                )
                text.append(piece)
            else:
                calls.append(piece)
        output = [assistant_message("".join(text)), *calls] if text else calls
        response = Response(
            id="scripted",
            created_at=0,
            model="scripted",
            object="response",
            output=output,
            tool_choice="auto",
            tools=[],
            top_p=None,
            parallel_tool_calls=False,
            status="completed",
        )
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=len(text))


def said_by_user(items: list[TResponseInputItem]) -> list[str]:
    """The text of each user message of the input."""
    said = []
    for item in _dicts(items):
        if item.get("role") == "user":
            content = item["content"]
            said.append(content if isinstance(content, str) else "".join(str(c.get("text", "")) for c in content))
    return said


def tool_outputs(items: list[TResponseInputItem]) -> list[str]:
    """The outputs of the tool calls in the input, in order."""
    return [str(item.get("output")) for item in _dicts(items) if item.get("type") == "function_call_output"]


def _dicts(items: list[TResponseInputItem]) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", items)


def drawing_agent(image: bytes) -> Agent[Any]:
    """An agent whose model calls the hosted image generation tool (which made ``image``) and says
    what it drew."""

    async def script(items: list[TResponseInputItem]) -> Stream:
        yield ImageGenerationCall(
            id="ig1", result=base64.b64encode(image).decode(), status="completed", type="image_generation_call"
        )
        yield "Here is "
        yield "your cat."

    tools = [ImageGenerationTool(tool_config={"type": "image_generation"})]
    return Agent(name="painter", model=ScriptedModel(script), tools=tools)
