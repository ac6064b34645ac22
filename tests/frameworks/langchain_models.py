"""A LangChain chat model that streams what a script gives it: for the LangGraph tests, the
frameworks' stack and ``bench/framework_writes.py`` (LangChain's own fake models stream a message
they were handed, not one made from the conversation, nor one that never ends)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult

__all__ = ["StreamedModel", "streamed"]


class StreamedModel(GenericFakeChatModel):
    """Streams each piece ``pieces(messages)`` yields as a token (``on_llm_new_token``, as a
    provider's model does), and closes ``pieces`` when its stream is closed (a cancel)."""

    pieces: Callable[[list[BaseMessage]], AsyncIterator[str]]

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        async with contextlib.aclosing(self.pieces(messages)) as pieces:
            async for piece in pieces:
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
                if run_manager:
                    await run_manager.on_llm_new_token(piece, chunk=chunk)
                yield chunk

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        raise AssertionError("the model is streamed")


def streamed(pieces: Callable[[list[BaseMessage]], AsyncIterator[str]]) -> StreamedModel:
    return StreamedModel(messages=iter([]), pieces=pieces)
