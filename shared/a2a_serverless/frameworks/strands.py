"""Strands Agents behind A2A: ``executor = strands_executor(make_agent)``
(``pip install 'a2a-serverless[strands]'``; ``docs/frameworks.md``).

Every run makes a fresh agent with ``make_agent`` (a ``strands.Agent`` holds one conversation and
refuses a second invocation while one runs, so one agent cannot serve concurrent tasks), loads the
conversation into it, and runs :meth:`strands.Agent.stream_async`, Strands' public event stream:

* the model's text deltas (``data`` events, read from their raw ``delta``) -> the answer's chunks;
* ``message`` events: the model's ``toolUse`` blocks -> tool statuses, as the model asks for the
  tools; the tool results message's ``toolResult`` blocks -> tool results;
* a run that stops with ``stop_reason == "interrupt"`` (a hook's ``event.interrupt(...)`` on
  ``BeforeToolCallEvent``/``BeforeToolsEvent``, or a tool's ``tool_context.interrupt(...)``) ->
  INPUT_REQUIRED asking the interrupts' reasons. The agent's snapshot (:meth:`strands.Agent.take_snapshot`:
  its messages, state and interrupt state) is the paused state; the task's next message loads it
  into a fresh agent and answers every pending interrupt with the reply (``interruptResponse``
  content: the reply's data part if it has one, else its text), and Strands resumes the run where
  it stopped (the interrupted tool runs, or is cancelled, as the hook decides from the response);
* ``result.structured_output`` (an agent with a ``structured_output_model``) -> an ``output`` artifact;
  the final message's image and document blocks (a hook's ``AfterToolsEvent.end_turn``) -> an
  ``output`` artifact of file parts, and its text, which the model did not stream, -> the answer;
* memory: the agent's snapshot after the run (the ``session`` preset without the interrupt state:
  messages, agent state, conversation manager and model state; not the system prompt, which is
  ``make_agent``'s), loaded into the next turn's fresh agent with :meth:`strands.Agent.load_snapshot`.
  A run resumed after a pause keeps the turns of the context that ended while it waited: their
  messages, then the paused turn's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from contextlib import aclosing
from pathlib import PurePath
from typing import Any, cast

from ..execution.api import RequestContext
from ..json_types import JsonValue
from ..models import Part
from ._bridge import FrameworkExecutor, Turn
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult

INSTALL_HINT = (
    "a2a_serverless.frameworks.strands runs Strands Agents, and strands-agents is not installed: "
    "pip install 'a2a-serverless[strands]'"
)

try:
    from strands import Agent, Snapshot
    from strands.agent import AgentResult
    from strands.handlers.callback_handler import PrintingCallbackHandler, null_callback_handler
    from strands.interrupt import Interrupt
    from strands.types.content import ContentBlock, Message, Messages
    from strands.types.interrupt import InterruptResponseContent
    from strands.types.session import decode_bytes_values, encode_bytes_values
    from strands.types.tools import ToolUse
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

__all__ = ["INSTALL_HINT", "StrandsExecutor", "strands_executor"]

logger = logging.getLogger(__name__)

AgentFactory = Callable[[], Agent]
InvocationState = Callable[[RequestContext], dict[str, Any]]

_IMAGES = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
_DOCUMENTS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_MEDIA_TYPES = {format_: media_type for media_type, format_ in (_IMAGES | _DOCUMENTS).items()}


class StrandsExecutor(FrameworkExecutor):
    """Runs a Strands agent for each message (see the module's docstring)."""

    framework = "strands"

    def __init__(
        self,
        make_agent: AgentFactory,
        *,
        invocation_state: InvocationState | None = None,
        tool_details: bool = False,
    ) -> None:
        super().__init__(tool_details=tool_details)
        if isinstance(make_agent, Agent):
            raise TypeError(
                "strands_executor takes a function that makes the agent, not an Agent: an Agent holds one "
                "conversation and runs one invocation at a time (strands_executor(lambda: Agent(...)))"
            )
        self._make_agent = make_agent
        self._invocation_state = invocation_state

    def agent(self) -> Agent:
        """A fresh agent for one run."""
        agent = self._make_agent()
        if not isinstance(agent, Agent):
            raise TypeError(f"the agent factory returned {type(agent).__name__}, not a strands.Agent")
        if isinstance(agent.callback_handler, PrintingCallbackHandler):
            # Strands' default prints the whole answer to stdout: on Lambda, into the logs.
            agent.callback_handler = null_callback_handler
        return agent

    async def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        agent = self.agent()
        prompt: str | list[ContentBlock] | list[InterruptResponseContent]
        paused: Snapshot | None = None
        start: int | None  # where this turn's messages begin (None: paused by an adapter that kept no start)
        if turn.resume is not None:
            paused = _load(turn.resume)
            agent.load_snapshot(paused)
            prompt = _responses(agent, _reply(turn))
            start = paused.app_data.get("start")
        else:
            if turn.memory is not None:
                agent.load_snapshot(_load(turn.memory))
            prompt = _prompt(turn)
            start = len(agent.messages)  # the context's messages, before this turn's
        state = self._invocation_state(turn.context) if self._invocation_state is not None else None
        names = _tool_names(agent.messages)
        tools: dict[str, ToolUse] = {}  # the tool each interrupt holds, by the interrupt's id
        reported: Message | None = None  # the last message the stream reported
        # stream_async is an async generator (typed as an iterator): closing it on cancel closes the model's stream.
        stream = cast("AsyncGenerator[dict[str, Any], None]", agent.stream_async(prompt, invocation_state=state))
        async with agent, aclosing(stream) as events:  # the agent's scope ends its run (flushes its memory manager)
            async for event in events:
                # Strands merges the invocation state into some events (the first, and the model's
                # deltas: a state's "data" would replace a delta's), so each kind is told, and read,
                # by what only it has: a text delta by its raw delta, not by its "data".
                if "delta" in event:
                    if isinstance(event["delta"], dict) and "text" in event["delta"]:
                        yield TextDelta(event["delta"]["text"])
                elif isinstance(event.get("message"), dict) and "init_event_loop" not in event:
                    reported = event["message"]
                    for call in _tool_events(event["message"]["content"], names):
                        yield call
                elif "tool_interrupt_event" in event:
                    interrupted = event["tool_interrupt_event"]
                    tools.update({i.id: interrupted["tool_use"] for i in interrupted["interrupts"]})
                elif isinstance(event.get("result"), AgentResult):
                    result = event["result"]
                    if result.stop_reason == "interrupt":
                        yield self._pause(result.interrupts or [], tools, agent, start)
                        return
                    if result.stop_reason == "checkpoint":
                        raise RuntimeError("Strands checkpointing is not supported here: build the agent without it")
                    ended = agent.take_snapshot(preset="session", exclude=["interrupt_state"])
                    turn.keep(_dump(_memory(ended, turn, paused, start)))
                    for out in _final(result.message, streamed=result.message == reported):
                        yield out
                    if result.structured_output is not None:
                        yield Output([Part(data=result.structured_output.model_dump(mode="json"))])

    def _pause(
        self, interrupts: Sequence[Interrupt], tools: dict[str, ToolUse], agent: Agent, start: int | None
    ) -> Pause:
        """INPUT_REQUIRED asking the interrupts' questions, with the whole agent as the paused state.
        The client sees each interrupt's name and the tool it holds; the reason (beyond the question)
        and the tool's arguments only with ``tool_details``."""
        questions = list(dict.fromkeys(_question(i) for i in interrupts))
        shown: list[JsonValue] = []
        for interrupt in interrupts:
            item: dict[str, JsonValue] = {"name": interrupt.name}
            use = tools.get(interrupt.id)
            if use is not None:
                item |= {"tool": use["name"], "toolCallId": use["toolUseId"]}
            if self.tool_details:
                item["reason"] = _json(interrupt.reason)
                if use is not None:
                    item["arguments"] = _json(use["input"])
            shown.append(item)
        state = _dump(agent.take_snapshot(preset="session", app_data={"start": start}))
        return Pause("\n".join(questions), state=state, data={"interrupts": shown})


def strands_executor(
    make_agent: AgentFactory,
    *,
    invocation_state: InvocationState | None = None,
    tool_details: bool = False,
) -> StrandsExecutor:
    """An executor running the agents ``make_agent`` makes (a function returning a ``strands.Agent``,
    called for every run). ``invocation_state`` makes the run's ``invocation_state`` (what tools see
    as ``tool_context.invocation_state``) from its :class:`RequestContext` (the caller, the tenant);
    ``tool_details`` puts tool arguments and results in the task (off: they can hold secrets)."""
    return StrandsExecutor(make_agent, invocation_state=invocation_state, tool_details=tool_details)


def _dump(snapshot: Snapshot) -> bytes:
    return json.dumps(encode_bytes_values(snapshot.to_dict()), ensure_ascii=False).encode()


def _load(data: bytes) -> Snapshot:
    return Snapshot.from_dict(decode_bytes_values(json.loads(data)))


def _memory(ended: Snapshot, turn: Turn, paused: Snapshot | None, start: int | None) -> Snapshot:
    """The context's memory after this turn: the run's snapshot, unless this run resumed a pause and
    another turn of the context kept its memory while the task waited. Then the context's messages
    (and its conversation manager's state, which describes them) come first, followed by what this
    task's turn added (its messages after ``start``, where the paused turn began), with this run's
    agent and model state."""
    if paused is None or turn.memory is None or start is None:
        return ended  # not a resumed run, or no memory in the context
    context = _load(turn.memory)
    began = paused.data["messages"][:start]
    if context.data["messages"] == began:
        return ended  # no other turn of the context ended while this one waited
    if ended.data["messages"][:start] != began:
        # The conversation manager rewrote the history before this turn's messages (a trim, a
        # summary): where this turn's messages begin is lost, so its conversation wins as a whole.
        logger.warning(
            "the conversation changed while this task waited and its history was rewritten; "
            "the turns that ended meanwhile are not kept",
            extra={"task_id": turn.context.task_id},
        )
        return ended
    messages = [*context.data["messages"], *ended.data["messages"][start:]]
    data = {**ended.data, "messages": messages}
    if "conversation_manager_state" in context.data:
        data["conversation_manager_state"] = context.data["conversation_manager_state"]
    return Snapshot(scope=ended.scope, schema_version=ended.schema_version, data=data, app_data=ended.app_data)


def _tool_names(messages: Messages) -> dict[str, str]:
    return {
        block["toolUse"]["toolUseId"]: block["toolUse"]["name"]
        for message in messages
        for block in message["content"]
        if "toolUse" in block
    }


def _tool_events(content: Iterable[ContentBlock], names: dict[str, str]) -> Iterable[ToolCall | ToolResult]:
    for block in content:
        if "toolUse" in block:
            use = block["toolUse"]
            names[use["toolUseId"]] = use["name"]
            yield ToolCall(use["name"], use["toolUseId"], _json(use["input"]))
        elif "toolResult" in block:
            done = block["toolResult"]
            result = {"status": done["status"], "content": done["content"]}
            yield ToolResult(names.get(done["toolUseId"], ""), done["toolUseId"], _json(result))


def _final(message: Message, *, streamed: bool) -> Iterable[TextDelta | Output]:
    """The final message's images and documents as an ``output`` artifact of file parts; its text
    too when it was not streamed (a hook's ``AfterToolsEvent.end_turn`` message is not)."""
    files: list[Part] = []
    for block in message["content"]:
        if "text" in block and not streamed:
            yield TextDelta(block["text"])
        elif (part := _file_part(block)) is not None:
            files.append(part)
    if files:
        yield Output(files)


def _file_part(block: ContentBlock) -> Part | None:
    """An image or document block with its bytes as a file part (one at a location, an S3 URI
    only its model provider reads, is left out)."""
    if "image" in block and "bytes" in block["image"]["source"]:
        image = block["image"]
        return Part(raw=image["source"]["bytes"], media_type=_MEDIA_TYPES.get(image["format"], ""))
    if "document" in block and "bytes" in block["document"].get("source", {}):
        document = block["document"]
        format_, name = document.get("format", ""), document.get("name") or "document"
        filename = name if not format_ or name.endswith(f".{format_}") else f"{name}.{format_}"
        media_type = _MEDIA_TYPES.get(format_, "")
        return Part(raw=document["source"]["bytes"], media_type=media_type, filename=filename)
    return None


def _question(interrupt: Interrupt) -> str:
    reason = interrupt.reason
    if isinstance(reason, dict) and isinstance(reason.get("question"), str):
        reason = reason["question"]
    return reason if isinstance(reason, str) and reason else f"The agent waits for your answer ({interrupt.name})."


def _responses(agent: Agent, reply: Any) -> list[InterruptResponseContent]:
    """The reply answers every interrupt the paused run raised and has no response yet."""
    snapshot = agent.take_snapshot(include=["interrupt_state"]).data["interrupt_state"]
    pending = [i for i, raised in snapshot["interrupts"].items() if raised.get("response") is None]
    return [{"interruptResponse": {"interruptId": i, "response": reply}} for i in pending]


def _reply(turn: Turn) -> Any:
    message = turn.message
    data = [p.data for p in message.parts if p.data is not None] if message is not None else []
    return data[0] if data else turn.text


def _prompt(turn: Turn) -> str | list[ContentBlock]:
    """The user's message: its text, and its files and data as content blocks where Strands has one."""
    message = turn.message
    if message is None or all(p.text is not None for p in message.parts):
        return turn.text
    blocks: list[ContentBlock] = []
    for part in message.parts:
        if part.text is not None:
            blocks.append({"text": part.text})
        elif part.data is not None:
            blocks.append({"text": json.dumps(part.data)})
        elif part.url is not None:
            blocks.append({"text": f"(file at {part.url})"})
        elif part.raw is not None:
            blocks.append(_file(part.raw, part.media_type, part.filename))
    return blocks


def _file(raw: bytes, media_type: str, filename: str) -> ContentBlock:
    if media_type in _IMAGES:
        return cast(ContentBlock, {"image": {"format": _IMAGES[media_type], "source": {"bytes": raw}}})
    if media_type in _DOCUMENTS:
        name = PurePath(filename).stem or "document"
        return cast(
            ContentBlock, {"document": {"format": _DOCUMENTS[media_type], "name": name, "source": {"bytes": raw}}}
        )
    return {
        "text": f"(a file{f' {filename}' if filename else ''} of type {media_type or 'unknown'}, not readable here)"
    }


def _json(value: Any) -> JsonValue:
    """A framework value as JSON (bytes as base64, as Strands serializes them; anything else as text)."""
    return cast(JsonValue, json.loads(json.dumps(encode_bytes_values(value), default=str)))
