"""A scripted model for Google ADK agents, on ADK's public model interface (``BaseLlm``): no
network, no key. Each call of the model runs its script on the request and streams what the
script yields: text deltas (partial responses), then the final response that aggregates them with
the function calls and files the script yielded, as ADK's own models answer in SSE mode."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

Step = str | types.FunctionCall | types.Part | LlmResponse
"""A text delta, a function call, any other part of the answer (a file), or a response of the
model's own making (an error response), passed on as it is."""
Script = Callable[[LlmRequest], AsyncIterator[Step]]


class ScriptedLlm(BaseLlm):
    model: str = "scripted"
    script: Script

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncIterator[LlmResponse]:
        texts: list[str] = []
        others: list[types.Part] = []
        async for step in self.script(llm_request):
            if isinstance(step, str):
                texts.append(step)
                if stream:
                    yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=step)]), partial=True)
            elif isinstance(step, LlmResponse):
                yield step
                return
            elif isinstance(step, types.FunctionCall):
                others.append(types.Part(function_call=step))
            else:
                others.append(step)
        parts = [types.Part(text="".join(texts))] if texts else []
        yield LlmResponse(content=types.Content(role="model", parts=[*parts, *others]), partial=False)


def said(request: LlmRequest) -> list[str]:
    """The user's texts in the request, oldest first: what the model is given of the conversation."""
    return [p.text for c in request.contents if c.role == "user" for p in c.parts or [] if p.text]


def returned(request: LlmRequest) -> list[Any]:
    """The responses of the last content, when it answers function calls."""
    last = request.contents[-1].parts or [] if request.contents else []
    return [p.function_response.response for p in last if p.function_response is not None]


def scripted_agent(script: Script, **options: Any) -> LlmAgent:
    return LlmAgent(name="assistant", model=ScriptedLlm(script=script), **options)
