"""A Pydantic AI test model for what ``FunctionModel``'s stream function cannot yield (files)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import CompletedStreamedResponse, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings


class WholeResponses(FunctionModel):
    """A ``FunctionModel`` whose ``function`` answers whole responses, streamed part by part
    (``CompletedStreamedResponse`` replays them): its stream function cannot yield a file."""

    def __init__(self, function: Any) -> None:
        super().__init__(function, profile=ModelProfile(supports_image_output=True))

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        response = await self.request(messages, model_settings, model_request_parameters)
        yield CompletedStreamedResponse(response, model_request_parameters=model_request_parameters, replay_events=True)
