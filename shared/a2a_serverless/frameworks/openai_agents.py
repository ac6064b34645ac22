"""OpenAI Agents SDK agents behind A2A: ``executor = openai_agents_executor(agent)``
(``pip install 'a2a-serverless[openai-agents]'``; ``docs/frameworks.md``).

The run is :meth:`agents.Runner.run_streamed` and its ``stream_events()``, the SDK's public stream:

* raw response events carrying text (``response.output_text.delta``, and a refusal's
  ``response.refusal.delta``) -> the answer's chunks, when the running agent answers in text;
* run item events ``tool_called`` / ``tool_output`` -> tool statuses;
* a run that ends with ``interruptions`` (tools declared with ``needs_approval``, at any depth:
  handoffs, ``Agent.as_tool()``) -> INPUT_REQUIRED asking for the approval. The paused state is the
  SDK's own :class:`agents.RunState` (``to_string()``, kept by the bridge for the task in the
  caller's scope, never sent to the client); the next message on the task approves every pending
  call when :attr:`OpenAIAgentsExecutor.approves` says the reply approves, rejects them with the
  reply as the message the model sees otherwise, and the same run resumes from that state;
* a final output that is not text (``output_type``) -> an ``output`` artifact with a data part;
* files out: a hosted image generation's result (``ImageGenerationCall``, base64) -> an ``output``
  artifact with the image, as its item comes; a tool output that ends the run (``tool_use_behavior``)
  -> its text as the answer, its ``ToolOutputImage``/``ToolOutputFileContent`` as file parts. A
  tool's images the model is given next are its input, not the task's;
* memory: the conversation as input items (``result.to_input_list()``), JSON, given back as the
  next turn's input. Not a :class:`agents.memory.Session`: the bridge already keeps memory per
  ``contextId`` in the caller's scope, saved once per turn, only when the turn ends or pauses and
  conditional on the version it loaded; a session would be a second writer, saving during the run
  (a failed or cancelled turn included) with no owner scope of its own.

The agent, or a function making one, is called for every run: an ``Agent`` holds no conversation
state, so one object serves every run; a factory suits agents whose tools hold per-run resources.
"""

from __future__ import annotations

import asyncio
import base64
import json
import mimetypes
import re
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any, cast

from ..execution.api import RequestContext
from ..models import Part
from ._bridge import FrameworkExecutor, Turn
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult

INSTALL_HINT = (
    "a2a_serverless.frameworks.openai_agents runs OpenAI Agents SDK agents, and openai-agents is not "
    "installed: pip install 'a2a-serverless[openai-agents]'"
)

try:
    from agents import (
        Agent,
        AgentUpdatedStreamEvent,
        RawResponsesStreamEvent,
        RunConfig,
        RunContextWrapper,
        RunItem,
        RunItemStreamEvent,
        Runner,
        RunResultStreaming,
        RunState,
        StreamEvent,
        ToolApprovalItem,
        ToolCallItem,
        ToolCallOutputItem,
        TResponseInputItem,
    )
    from agents.run import DEFAULT_MAX_TURNS
    from openai.types.responses import (
        EasyInputMessageParam,
        ResponseInputContentParam,
        ResponseInputFileParam,
        ResponseInputImageParam,
        ResponseInputTextParam,
        ResponseRefusalDeltaEvent,
        ResponseTextDeltaEvent,
    )
    from openai.types.responses.response_output_item import ImageGenerationCall
    from pydantic_core import to_jsonable_python
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

__all__ = ["INSTALL_HINT", "OpenAIAgentsExecutor", "openai_agents_executor"]

AgentSource = Agent[Any] | Callable[[], Agent[Any]]
ContextFactory = Callable[[RequestContext], Any]

_YES = re.compile(r"^\s*(y|yes|ok|okay|approve|approved|go ahead|sure|confirm|confirmed)\b", re.IGNORECASE)


def _approves(reply: str) -> bool:
    return bool(_YES.match(reply))


class OpenAIAgentsExecutor(FrameworkExecutor):
    """Runs an OpenAI Agents SDK agent for each message (see the module's docstring)."""

    framework = "openai-agents"

    def __init__(
        self,
        agent: AgentSource,
        *,
        context: ContextFactory | None = None,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        approves: Callable[[str], bool] = _approves,
        tool_details: bool = False,
    ) -> None:
        super().__init__(tool_details=tool_details)
        self._source = agent
        self._context = context
        self.run_config = run_config
        self.max_turns = max_turns
        self.approves = approves

    def agent(self) -> Agent[Any]:
        """The agent for one run (a factory is called each time)."""
        made = self._source if isinstance(self._source, Agent) else self._source()
        if not isinstance(made, Agent):
            raise TypeError(f"the agent factory returned {type(made).__name__}, not an agents.Agent")
        return made

    async def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        agent = self.agent()
        context = self._context(turn.context) if self._context is not None else None
        memory: list[TResponseInputItem] = json.loads(turn.memory) if turn.memory else []
        names: dict[str, str] = {}
        if turn.resume is not None:
            paused = json.loads(turn.resume)
            wrapper = RunContextWrapper(context) if self._context is not None else None
            state = await RunState.from_string(agent, paused["state"], context_override=wrapper)
            names = self._decide(state, turn.text)
            start: int = paused["start"]
            run_input: list[TResponseInputItem] | RunState[Any] = state
        else:
            start = len(memory)
            run_input = [*memory, _user_item(turn)]
        result = Runner.run_streamed(
            agent, run_input, context=context, max_turns=self.max_turns, run_config=self.run_config
        )
        texts = _answers_in_text(agent)
        # stream_events() is an async generator (typed as its iterator): closed by _stop.
        events = cast("AsyncGenerator[StreamEvent, None]", result.stream_events())
        try:
            async for event in events:
                if isinstance(event, AgentUpdatedStreamEvent):
                    texts = _answers_in_text(event.new_agent)
                elif isinstance(event, RawResponsesStreamEvent):
                    if texts and isinstance(event.data, ResponseTextDeltaEvent | ResponseRefusalDeltaEvent):
                        yield TextDelta(event.data.delta)
                elif isinstance(event, RunItemStreamEvent):
                    if reported := _tool_event(event.item, names):
                        yield reported
                    if image := _generated_image(event.item):
                        yield Output([image])
        finally:
            await _stop(result, events)
        if result.interruptions:
            yield self._pause(result.interruptions, result.to_state(), start)
            return
        # The conversation so far (as this turn loaded it) and what this run added: a turn of the
        # same context that ended while this task was paused is kept, not overwritten.
        turn.keep(json.dumps(to_jsonable_python([*memory, *result.to_input_list()[start:]])).encode())
        for final in _final_output(result):
            yield final

    def _pause(self, pending: Sequence[ToolApprovalItem], state: RunState[Any], start: int) -> Pause:
        named = list(dict.fromkeys(item.name or "the tool" for item in pending))
        calling = f"tool {named[0]}" if len(named) == 1 else f"tools {', '.join(named[:-1])} and {named[-1]}"
        question = f"Approve calling {calling}? Reply yes to approve, anything else to deny."
        tools: list[dict[str, Any]] = [{"tool": item.name, "toolCallId": item.call_id} for item in pending]
        if self.tool_details:
            tools = [{**tool, "arguments": _json(item.arguments)} for tool, item in zip(tools, pending, strict=True)]
        saved = {"state": state.to_string(context_serializer=_not_kept), "start": start}
        return Pause(question, state=json.dumps(saved).encode(), data={"tools": to_jsonable_python(tools)})

    def _decide(self, state: RunState[Any], reply: str) -> dict[str, str]:
        """Approves or rejects every pending call with the person's reply; their tool names."""
        approved = self.approves(reply)
        names: dict[str, str] = {}
        for item in state.get_interruptions():
            if approved:
                state.approve(item)
            else:
                state.reject(item, rejection_message=reply or None)
            if item.call_id and item.name:
                names[item.call_id] = item.name
        return names


def openai_agents_executor(
    agent: AgentSource,
    *,
    context: ContextFactory | None = None,
    run_config: RunConfig | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    approves: Callable[[str], bool] = _approves,
    tool_details: bool = False,
) -> OpenAIAgentsExecutor:
    """An executor running ``agent`` (an ``agents.Agent``, or a function making one, called for each
    run). ``context`` makes the run's context object from its :class:`RequestContext` (the caller,
    the tenant; made again when a paused run resumes, never stored); ``run_config`` and
    ``max_turns`` go to ``Runner.run_streamed``; ``approves`` decides whether a reply approves the
    pending tool calls (yes, ok, approve...); ``tool_details`` puts tool arguments and results in
    the task (off: they can hold secrets)."""
    return OpenAIAgentsExecutor(
        agent,
        context=context,
        run_config=run_config,
        max_turns=max_turns,
        approves=approves,
        tool_details=tool_details,
    )


async def _stop(result: RunResultStreaming, events: AsyncGenerator[StreamEvent, None]) -> None:
    """Closes the run: cancelled first when it is not over (the stream was closed, or the task
    cancelled), so closing its event stream does not wait for the model to finish; then waits for
    the run's task to unwind, so the model's stream is closed before the bridge reports."""
    if not result.is_complete:
        result.cancel()
    await events.aclose()
    task = result.run_loop_task
    if task is not None and not task.done():
        await asyncio.wait({task})


def _tool_event(item: RunItem, names: dict[str, str]) -> ToolCall | ToolResult | None:
    """A tool call (function tools by name, hosted tools by their item's type) or its output,
    named after the call (``names``: the run's calls so far, and those a resumed run approved)."""
    if isinstance(item, ToolCallItem):
        name = item.tool_name or str(getattr(item.raw_item, "type", None) or "tool")
        call_id = item.call_id or ""
        names[call_id] = name
        return ToolCall(name, call_id, _json(getattr(item.raw_item, "arguments", None)))
    if isinstance(item, ToolCallOutputItem):
        call_id = item.call_id or ""
        return ToolResult(names.get(call_id, "tool"), call_id, to_jsonable_python(item.output, fallback=str))
    return None


def _generated_image(item: RunItem) -> Part | None:
    """A hosted image generation's result (base64, in the call's item) as a file part."""
    raw = item.raw_item if isinstance(item, ToolCallItem) else None
    if not isinstance(raw, ImageGenerationCall) or not raw.result:
        return None
    format_ = raw.output_format or "png"
    media_type = "image/svg+xml" if format_ == "svg" else f"image/{format_}"
    return Part(raw=base64.b64decode(raw.result), media_type=media_type, filename=f"{raw.id}.{format_}")


def _final_output(result: RunResultStreaming) -> Iterable[FrameworkEvent]:
    """The run's final output when it is not the streamed text: structured output as a data part;
    and when a tool's output ended the run (``tool_use_behavior``), that output: its text as the
    answer (the model did not stream it), its images and files (``ToolOutputImage``,
    ``ToolOutputFileContent``) as file parts, anything else as a data part."""
    output = result.final_output
    if not result.new_items or not isinstance(result.new_items[-1], ToolCallOutputItem):
        if output is not None and not isinstance(output, str):
            yield Output([Part(data=to_jsonable_python(output, fallback=str))])
        return
    # With a text output type the SDK gives the tool's output as its str().
    outputs = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    made = next((i for i in reversed(outputs) if i.output is output or str(i.output) == output), None)
    raw = made.raw_item if made is not None else None
    content = raw.get("output") if isinstance(raw, dict) else getattr(raw, "output", None)
    if made is not None and isinstance(content, list):  # the SDK's input items for the tool's text, images, files
        files = [part for piece in content if (part := _content_file(piece)) is not None]
        for piece in content:
            if isinstance(piece, dict) and piece.get("type") == "input_text":
                yield TextDelta(str(piece.get("text", "")))
        if files:
            yield Output(files)
        return
    if made is not None:
        output = made.output
    if isinstance(output, str):
        yield TextDelta(output)
    elif output is not None:
        yield Output([Part(data=to_jsonable_python(output, fallback=str))])


def _content_file(piece: Any) -> Part | None:
    """An ``input_image`` or ``input_file`` of a tool's output as a file part: its bytes (a ``data:``
    URL, or base64 with its filename) or its URL. One known only by its OpenAI file id is left out."""
    if not isinstance(piece, dict) or piece.get("type") not in ("input_image", "input_file"):
        return None
    filename = str(piece.get("filename") or "")
    location = str(piece.get("image_url") or piece.get("file_url") or "")
    guessed = mimetypes.guess_type(filename or location)[0] or ""
    if data := piece.get("file_data") or (location if location.startswith("data:") else ""):
        header, comma, encoded = str(data).partition(",")
        if comma and header.startswith("data:"):
            guessed = header[len("data:") :].split(";")[0] or guessed
        else:
            encoded = header
        return Part(raw=base64.b64decode(encoded), media_type=guessed or "application/octet-stream", filename=filename)
    return Part(url=location, media_type=guessed, filename=filename) if location else None


def _answers_in_text(agent: Agent[Any]) -> bool:
    """Whether the agent's final output is text (streamed as the answer), not structured output
    (whose text deltas are its JSON, given as an ``output`` artifact instead)."""
    return agent.output_type is None or agent.output_type is str


def _json(arguments: str | None) -> Any:
    if arguments is None:
        return None
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _not_kept(context: Any) -> dict[str, Any]:
    """The run's context is not stored with a paused run (it may hold clients or credentials):
    ``context`` makes it again for the resumed run."""
    return {}


def _user_item(turn: Turn) -> EasyInputMessageParam:
    """The user's message as an input item: its text, data parts as JSON text, files as images
    (``image/*``) or files, inline (``raw``) or by URL."""
    message = turn.message
    content: list[ResponseInputContentParam] = []
    for part in message.parts if message is not None else []:
        if part.text is not None:
            content.append(ResponseInputTextParam(type="input_text", text=part.text))
        elif part.data is not None:
            content.append(ResponseInputTextParam(type="input_text", text=json.dumps(part.data)))
        elif part.raw is not None or part.url is not None:
            content.append(_file(part))
    return EasyInputMessageParam(role="user", content=content or turn.text)


def _file(part: Part) -> ResponseInputContentParam:
    media_type = part.media_type or "application/octet-stream"
    if part.raw is not None:
        location = f"data:{media_type};base64,{base64.b64encode(bytes(part.raw)).decode()}"
    else:
        location = part.url or ""
    if media_type.startswith("image/"):
        return ResponseInputImageParam(type="input_image", image_url=location, detail="auto")
    if part.raw is not None:
        return ResponseInputFileParam(type="input_file", file_data=location, filename=part.filename or "file")
    return ResponseInputFileParam(type="input_file", file_url=location)
