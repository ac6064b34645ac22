"""Pydantic AI agents behind A2A: ``executor = pydantic_ai_executor(agent)``
(``pip install 'a2a-serverless[pydantic-ai]'``; ``docs/frameworks.md``).

The run is :meth:`pydantic_ai.Agent.run_stream_events`, Pydantic AI's public event stream:

* text parts' deltas (``PartStartEvent``/``PartDeltaEvent`` of a ``TextPart``) -> the answer's chunks;
* ``FunctionToolCallEvent`` / ``FunctionToolResultEvent`` -> tool statuses;
* a run that ends with :class:`~pydantic_ai.DeferredToolRequests` (a tool declared with
  ``requires_approval=True``, or one that raised ``ApprovalRequired`` or ``CallDeferred(kind="question")``)
  -> INPUT_REQUIRED asking for the approval or the answer. The run's messages and the pending call
  ids are the paused state; the next message on the task answers them (``DeferredToolResults``:
  an approval when :attr:`PydanticAIExecutor.approves` says the reply approves, a denial carrying
  the reply otherwise; the reply's text for a question) and the run goes on from there;
* output that is not text (a structured ``output_type``) -> an ``output`` artifact with a data part;
* files the model produces (a ``FilePart`` of its response: an image model's picture, the
  ``BinaryImage`` output type) -> an ``output`` artifact with a file part each; files a tool
  returns (its return value, a ``ToolReturn``'s content) too, with ``tool_files=True`` (off by
  default: a tool's file is shown to the model, and may not be meant for the caller);
* memory: the conversation's messages (``result.all_messages()``) serialized with
  :data:`pydantic_ai.ModelMessagesTypeAdapter`, passed back as ``message_history``.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from ..execution.api import RequestContext
from ..models import Part
from ._bridge import FrameworkExecutor, Turn
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult, approves
from ._made import Made

INSTALL_HINT = (
    "a2a_serverless.frameworks.pydantic_ai runs Pydantic AI agents, and pydantic-ai is not installed: "
    "pip install 'a2a-serverless[pydantic-ai]'"
)

try:
    from pydantic import TypeAdapter
    from pydantic_ai import (
        Agent,
        AgentRunResultEvent,
        BinaryContent,
        DeferredToolRequests,
        DeferredToolResults,
        FilePart,
        FunctionToolCallEvent,
        FunctionToolResultEvent,
        ModelMessagesTypeAdapter,
        PartDeltaEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
        ToolApproved,
        ToolDenied,
        ToolReturnPart,
        UserContent,
    )
    from pydantic_core import to_jsonable_python
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

__all__ = ["INSTALL_HINT", "PydanticAIExecutor", "pydantic_ai_executor"]

AgentSource = Agent[Any, Any] | Callable[[], Agent[Any, Any]]
DepsFactory = Callable[[RequestContext], Any]


class _Paused:
    """What a pause keeps for the task: the run's messages (``start``: how many of them were the
    context's memory when the task's run began), and the calls waiting for the person."""

    adapter: TypeAdapter[DeferredToolRequests] = TypeAdapter(DeferredToolRequests)

    @classmethod
    def dump(cls, messages: Sequence[Any], start: int, requests: DeferredToolRequests) -> bytes:
        return json.dumps(
            {
                "messages": json.loads(ModelMessagesTypeAdapter.dump_json(list(messages))),
                "start": start,
                "requests": json.loads(cls.adapter.dump_json(requests)),
            }
        ).encode()

    @classmethod
    def load(cls, data: bytes) -> tuple[list[Any], int, DeferredToolRequests]:
        saved = json.loads(data)
        messages = ModelMessagesTypeAdapter.validate_python(saved["messages"])
        return messages, int(saved["start"]), cls.adapter.validate_python(saved["requests"])


class PydanticAIExecutor(FrameworkExecutor):
    """Runs a Pydantic AI agent for each message (see the module's docstring)."""

    framework = "pydantic-ai"

    def __init__(
        self,
        agent: AgentSource,
        *,
        deps: DepsFactory | None = None,
        approves: Callable[[str], bool] = approves,
        tool_details: bool = False,
        tool_files: bool = False,
    ) -> None:
        super().__init__(tool_details=tool_details)
        self._agent: Made[Agent[Any, Any]] = Made(agent, Agent, "a pydantic_ai.Agent")
        self._deps = deps
        self.approves = approves
        self.tool_files = tool_files

    @property
    def agent(self) -> Agent[Any, Any]:
        """The agent (a factory is called once, on the first run)."""
        return self._agent.get()

    async def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        agent = self.agent
        prompt: str | list[UserContent] | None = _prompt(turn)
        memory: list[Any] = ModelMessagesTypeAdapter.validate_json(turn.memory) if turn.memory else []
        history, start, results = memory, len(memory), None
        if turn.resume is not None:
            history, start, pending = _Paused.load(turn.resume)
            results = self._answer(pending, turn.text)
            prompt = None  # the reply answers the pending calls; it is not a new prompt
        output_type = agent.output_type
        if not _allows_deferred(output_type):
            output_type = [*(output_type if isinstance(output_type, list) else [output_type]), DeferredToolRequests]
        deps = self._deps(turn.context) if self._deps is not None else None
        sent: list[BinaryContent] = []  # the files already in an artifact
        async with agent.run_stream_events(
            prompt, message_history=history or None, deferred_tool_results=results, output_type=output_type, deps=deps
        ) as events:
            async for event in events:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    yield TextDelta(event.part.content)
                elif isinstance(event, PartStartEvent) and isinstance(event.part, FilePart):
                    yield _files([event.part.content], sent)  # a file part comes whole: no deltas
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    yield TextDelta(event.delta.content_delta)
                elif isinstance(event, FunctionToolCallEvent):
                    yield ToolCall(
                        event.part.tool_name,
                        event.part.tool_call_id,
                        to_jsonable_python(event.part.args_as_dict(), fallback=str),
                    )
                elif isinstance(event, FunctionToolResultEvent):
                    done = event.part
                    yield ToolResult(done.tool_name, done.tool_call_id, to_jsonable_python(done.content, fallback=str))
                    if self.tool_files and (returned := _returned_files(event)):
                        yield _files(returned, sent)
                elif isinstance(event, AgentRunResultEvent):
                    result = event.result
                    output = result.output
                    if isinstance(output, DeferredToolRequests):
                        yield self._pause(output, result.all_messages(), start)
                        return
                    # The context's memory as it is now (other tasks of the context may have added
                    # to it while this one was paused), then this task's own messages.
                    turn.keep(ModelMessagesTypeAdapter.dump_json([*memory, *result.all_messages()[start:]]))
                    if isinstance(output, BinaryContent):
                        if output not in sent:  # a BinaryImage output is the model's FilePart, already sent
                            yield _files([output], sent)
                    elif not isinstance(output, str):
                        yield Output([Part(data=to_jsonable_python(output, fallback=str))])

    def _pause(self, requests: DeferredToolRequests, messages: Sequence[Any], start: int) -> Pause:
        pending = [*requests.approvals, *requests.calls]
        first = pending[0]
        if requests.kind(first.tool_call_id) == "approval":
            question = f"Approve calling tool {first.tool_name}? Reply yes to approve, anything else to deny."
        else:
            args = first.args_as_dict()
            asked = args.get("question") if isinstance(args.get("question"), str) else None
            question = asked or f"The tool {first.tool_name} needs your answer."
        tools: list[dict[str, Any]] = [{"tool": c.tool_name, "toolCallId": c.tool_call_id} for c in pending]
        if self.tool_details:
            tools = [{**tool, "arguments": call.args_as_dict()} for tool, call in zip(tools, pending, strict=True)]
        return Pause(question, state=_Paused.dump(messages, start, requests), data={"tools": to_jsonable_python(tools)})

    def _answer(self, pending: DeferredToolRequests, reply: str) -> DeferredToolResults:
        approved = self.approves(reply)
        results = DeferredToolResults()
        for call in pending.approvals:
            results.approvals[call.tool_call_id] = ToolApproved() if approved else ToolDenied(reply or "Denied.")
        for call in pending.calls:
            results.calls[call.tool_call_id] = reply
        return results


def pydantic_ai_executor(
    agent: AgentSource,
    *,
    deps: DepsFactory | None = None,
    approves: Callable[[str], bool] = approves,
    tool_details: bool = False,
    tool_files: bool = False,
) -> PydanticAIExecutor:
    """An executor running ``agent`` (a ``pydantic_ai.Agent``, or a function making one, called on
    the first run). ``deps`` makes the run's dependencies from its :class:`RequestContext` (the
    caller, the tenant); ``approves`` decides whether a reply approves a tool call (yes, ok,
    approve...); ``tool_details`` puts tool arguments and results in the task (off: they can hold
    secrets); ``tool_files`` puts the files tools return in an ``output`` artifact (off: a tool's
    file is for the model, and may not be meant for the caller)."""
    return PydanticAIExecutor(agent, deps=deps, approves=approves, tool_details=tool_details, tool_files=tool_files)


def _files(files: Sequence[BinaryContent], sent: list[BinaryContent]) -> Output:
    """An ``output`` artifact of file parts (named by Pydantic AI's identifier of the content)."""
    sent.extend(files)
    return Output(
        [
            Part(
                raw=file.data,
                media_type=file.media_type,
                filename=file.identifier + (mimetypes.guess_extension(file.media_type) or ""),
            )
            for file in files
        ]
    )


def _returned_files(event: FunctionToolResultEvent) -> list[BinaryContent]:
    """The files a tool returned: in its return value, or in a ``ToolReturn``'s content."""
    found: list[BinaryContent] = []
    returned = event.part.content if isinstance(event.part, ToolReturnPart) else None
    for value in (returned, event.content):
        items = value if isinstance(value, list | tuple) else [value]
        found.extend(item for item in items if isinstance(item, BinaryContent))
    return found


def _allows_deferred(output_type: Any) -> bool:
    kinds = output_type if isinstance(output_type, list | tuple) else [output_type]
    return DeferredToolRequests in kinds


def _prompt(turn: Turn) -> str | list[UserContent]:
    """The user's message: its text, its files (raw bytes) as binary content, its data parts as
    their JSON text."""
    message = turn.message
    if message is None:
        return ""
    more: list[UserContent] = []
    for part in message.parts:
        if part.raw is not None:
            more.append(BinaryContent(data=bytes(part.raw), media_type=part.media_type or "application/octet-stream"))
        elif part.data is not None:
            more.append(json.dumps(part.data, ensure_ascii=False))
    return [turn.text, *more] if more else turn.text
