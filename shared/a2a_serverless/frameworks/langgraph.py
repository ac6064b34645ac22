"""LangGraph graphs behind A2A: ``executor = langgraph_executor(graph)``
(``pip install 'a2a-serverless[langgraph]'``; ``docs/frameworks.md``).

The run is the compiled graph's public ``astream`` with ``stream_mode=["messages", "updates"]``:

* ``messages``: the text of AI messages, token by token from a streaming model (whole from a node
  that returns one) -> the answer's chunks; their image, audio, video and file content blocks
  (LangChain's standard blocks, ``message.content_blocks``) -> an ``output`` artifact of file parts;
* ``updates``: an AI message with ``tool_calls`` in a node's output -> a tool status per call, a
  ``ToolMessage`` -> its result (with ``tool_details``); ``__interrupt__`` (a node called
  ``interrupt(value)``) -> INPUT_REQUIRED asking ``value`` (a string, or a mapping's ``question``;
  a mapping is also shown as a data part). The next message on the task resumes the run with
  ``Command(resume=<its text, or its data part>)``.

The default input is a ``MessagesState`` update: the message as a ``HumanMessage``, its text alone
as a string, else one standard content block per part (files as image/audio/video/file blocks,
base64 or URL; data parts as text blocks of their JSON).

**State.** The graph runs with a checkpointer of our own: a fresh ``InMemorySaver`` per run, filled
from our store before the run and written back after it, one entry per run (not per step: a
checkpointer writing to DynamoDB at every super-step would cost a write per node). What is kept is
the latest checkpoint of each namespace with its pending writes (interrupts included), serialized
by LangGraph's own serializer: per context when the run ends (the conversation's memory: a
``MessagesState`` graph remembers its turns), per task when it pauses (so the pause resumes
exactly, whatever other tasks of the context did meanwhile; when the resumed run ends, a graph whose
``messages`` channel is reduced by ``add_messages`` keeps the context's messages as they are then
followed by the task's own, so a turn another task finished meanwhile is kept). A graph's own checkpointer is
replaced for the run; its history of older checkpoints is not kept (``get_state_history`` sees the
latest only).
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from typing import Any

from ..models import Message, Part
from ._bridge import FrameworkExecutor, Turn
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult
from ._made import Made

INSTALL_HINT = (
    "a2a_serverless.frameworks.langgraph runs LangGraph graphs, and langgraph is not installed: "
    "pip install 'a2a-serverless[langgraph]'"
)

try:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph.message import add_messages
    from langgraph.pregel import Pregel
    from langgraph.types import Command, Interrupt
    from pydantic_core import to_jsonable_python
except ImportError as exc:
    raise ImportError(INSTALL_HINT) from exc

__all__ = ["INSTALL_HINT", "LangGraphExecutor", "langgraph_executor"]

GraphSource = Pregel[Any, Any, Any, Any] | Callable[[], Pregel[Any, Any, Any, Any]]
InputOf = Callable[[Turn], Any]


_FILE_BLOCKS = frozenset({"image", "audio", "video", "file", "text-plain"})
"""LangChain's standard multimodal content block types (``langchain_core.messages.content``)."""


def _messages_input(turn: Turn) -> Any:
    message = turn.message
    if message is None or all(part.text is not None for part in message.parts):
        return {"messages": [HumanMessage(content=turn.text)]}
    return {"messages": [HumanMessage(content=_blocks(message))]}


class LangGraphExecutor(FrameworkExecutor):
    """Runs a compiled LangGraph graph for each message (see the module's docstring)."""

    framework = "langgraph"

    def __init__(
        self,
        graph: GraphSource,
        *,
        input_of: InputOf = _messages_input,
        config: RunnableConfig | None = None,
        tool_details: bool = False,
    ) -> None:
        super().__init__(tool_details=tool_details)
        self._graph: Made[Pregel[Any, Any, Any, Any]] = Made(graph, Pregel, "a compiled LangGraph graph")
        self._input_of = input_of
        self._config: RunnableConfig = config or {}

    @property
    def graph(self) -> Pregel[Any, Any, Any, Any]:
        """The compiled graph (a factory is called once, on the first run)."""
        return self._graph.get()

    async def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        saver = InMemorySaver()
        thread = turn.context.context_id
        saved = turn.resume if turn.resume is not None else turn.memory
        if saved is not None:
            _restore(saver, thread, saved)
        graph = self.graph.copy(update={"checkpointer": saver})
        configurable = {**self._config.get("configurable", {}), "thread_id": thread}
        config: RunnableConfig = {**self._config, "configurable": configurable}
        arguments = _resume_value(turn) if turn.resume is not None else self._input_of(turn)
        run_input = Command(resume=arguments) if turn.resume is not None else arguments
        interrupts: list[Interrupt] = []
        seen = await _message_ids(graph, config)  # a subgraph node's update repeats its whole state
        async for mode, chunk in graph.astream(run_input, config, stream_mode=["messages", "updates"]):
            if mode == "messages":
                message = chunk[0]  # (message, metadata)
                if isinstance(message, AIMessage):
                    if text := _text(message):
                        yield TextDelta(text)
                    if files := _files(message):
                        yield Output(files)
            elif isinstance(chunk, Mapping):
                for node, update in chunk.items():
                    if node == "__interrupt__":
                        interrupts.extend(update)
                    else:
                        for event in _tool_events(update, seen):
                            yield event
        state = _dump(saver, thread)
        if interrupts:
            yield _pause(interrupts[0], state)
            return
        if turn.resume is not None and turn.memory is not None and self._merges_messages(graph):
            state = _with_messages_of(turn.memory, state, saver)
        turn.keep(state)

    @staticmethod
    def _merges_messages(graph: Pregel[Any, Any, Any, Any]) -> bool:
        """Whether the graph's ``messages`` channel is reduced by ``add_messages`` (``MessagesState``)."""
        return getattr(graph.channels.get("messages"), "operator", None) is add_messages


def langgraph_executor(
    graph: GraphSource,
    *,
    input_of: InputOf = _messages_input,
    config: RunnableConfig | None = None,
    tool_details: bool = False,
) -> LangGraphExecutor:
    """An executor running ``graph`` (a compiled graph, or a function making one, called on the
    first run). ``input_of`` makes the graph's input from the turn (default: a ``MessagesState``
    update with the user's text as a ``HumanMessage``); ``config`` is passed to every run (its
    ``thread_id`` is the A2A context's); ``tool_details`` puts tool arguments and results in the
    task (off: they can hold secrets)."""
    return LangGraphExecutor(graph, input_of=input_of, config=config, tool_details=tool_details)


def _blocks(message: Message) -> list[str | dict[str, Any]]:
    """The message's parts as LangChain's standard content blocks, in order."""
    blocks: list[str | dict[str, Any]] = []
    for part in message.parts:
        if part.text is not None:
            blocks.append({"type": "text", "text": part.text})
        elif part.data is not None:
            blocks.append({"type": "text", "text": json.dumps(part.data, ensure_ascii=False)})
        else:
            blocks.append(_file_block(part))
    return blocks


def _file_block(part: Part) -> dict[str, Any]:
    media_type = part.media_type.split(";")[0].strip().lower()
    kind = media_type.partition("/")[0]
    block: dict[str, Any] = {
        "type": "text-plain" if media_type == "text/plain" else kind if kind in ("image", "audio", "video") else "file"
    }
    if part.raw is not None:
        block["base64"] = base64.b64encode(part.raw).decode()
    else:
        block["url"] = part.url
    if block["type"] == "text-plain":
        block["mime_type"] = "text/plain"  # the block's one type
    elif part.media_type or part.raw is not None:
        block["mime_type"] = part.media_type or "application/octet-stream"  # required with base64
    if part.filename:
        block["extras"] = {"filename": part.filename}  # where LangChain's provider translators read it
    return block


def _files(message: AIMessage) -> list[Part]:
    """The message's image, audio, video and file blocks as file parts (a ``file_id`` block, a file
    in the provider's own store, is left out: there is nothing to fetch it with)."""
    content = message.content
    if isinstance(content, str) or all(isinstance(block, str) or block.get("type") == "text" for block in content):
        return []  # text alone (every token of a streamed answer): nothing to translate
    blocks = (dict(block) for block in message.content_blocks if block["type"] in _FILE_BLOCKS)
    return [part for block in blocks if (part := _file_part(block)) is not None]


def _file_part(block: dict[str, Any]) -> Part | None:
    media_type = str(block.get("mime_type") or "")
    extras = block.get("extras")
    filename = str(block.get("filename") or (extras.get("filename") if isinstance(extras, dict) else None) or "")
    url = block.get("url")
    if isinstance(block.get("base64"), str):
        data = _b64decode(block["base64"])
    elif isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        given, _, encoded = url.removeprefix("data:").partition(";base64,")
        media_type, data = media_type or given, _b64decode(encoded)
    elif isinstance(url, str) and url:
        return Part(url=url, media_type=media_type, filename=filename)
    elif isinstance(block.get("text"), str):  # a text-plain block's own text
        media_type, data = media_type or "text/plain", block["text"].encode()
    else:
        return None
    if data is None:
        return None
    if not filename:
        filename = block["type"] + (mimetypes.guess_extension(media_type) or "")
    return Part(raw=data, media_type=media_type, filename=filename)


def _b64decode(encoded: str) -> bytes | None:
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in content
        if isinstance(block, str) or block.get("type") == "text"
    )


async def _message_ids(graph: Pregel[Any, Any, Any, Any], config: RunnableConfig) -> set[str]:
    """The ids of the messages the thread's state holds before the run."""
    values = (await graph.aget_state(config)).values
    messages = values.get("messages", []) if isinstance(values, Mapping) else []
    return {m.id for m in messages if isinstance(m, BaseMessage) and m.id} if isinstance(messages, list) else set()


def _tool_events(update: Any, seen: set[str]) -> Iterator[FrameworkEvent]:
    """The tool calls and results of a node's update that the run has not reported yet."""
    messages = update.get("messages", []) if isinstance(update, Mapping) else []
    for message in messages if isinstance(messages, list) else [messages]:
        if isinstance(message, BaseMessage) and message.id:
            if message.id in seen:
                continue
            seen.add(message.id)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                yield ToolCall(call["name"], call.get("id") or "", to_jsonable_python(call["args"], fallback=str))
        elif isinstance(message, ToolMessage):
            yield ToolResult(
                message.name or "", message.tool_call_id, to_jsonable_python(message.content, fallback=str)
            )


def _pause(interrupt: Interrupt, state: bytes) -> Pause:
    value = interrupt.value
    if isinstance(value, str):
        return Pause(value, state=state)
    asked = value.get("question") if isinstance(value, Mapping) else None
    question = asked if isinstance(asked, str) else "The agent needs your input."
    return Pause(question, state=state, data={"interrupt": to_jsonable_python(value, fallback=str)})


def _resume_value(turn: Turn) -> Any:
    """The reply a paused node's ``interrupt()`` returns: the message's data part, else its text."""
    message = turn.message
    data = next((p.data for p in message.parts if p.data is not None), None) if message else None
    return data if data is not None else turn.text


def _dump(saver: InMemorySaver, thread: str) -> bytes:
    """The thread's latest checkpoint in each namespace, with its pending writes."""
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for saved in saver.list({"configurable": {"thread_id": thread}}):
        namespace = saved.config["configurable"].get("checkpoint_ns", "")
        if namespace in seen:
            continue  # older checkpoints of a namespace come after its latest
        seen.add(namespace)
        entries.append(
            {
                "ns": namespace,
                "checkpoint": saved.checkpoint,
                "metadata": saved.metadata,
                "writes": list(saved.pending_writes or []),
            }
        )
    return _encode(saver, entries)


def _encode(saver: InMemorySaver, entries: list[dict[str, Any]]) -> bytes:
    kind, data = saver.serde.dumps_typed(entries)
    return kind.encode() + b"\n" + data


def _decode(saver: InMemorySaver, saved: bytes) -> list[dict[str, Any]]:
    kind, _, data = saved.partition(b"\n")
    entries: list[dict[str, Any]] = saver.serde.loads_typed((kind.decode(), data))
    return entries


def _with_messages_of(memory: bytes, state: bytes, saver: InMemorySaver) -> bytes:
    """The resumed run's ``state`` with the context's messages as they are now (``memory``: turns
    other tasks of the context finished while this one waited included), followed by the run's
    messages the context does not hold (this task's own, before and after its pause)."""
    context = next((e for e in _decode(saver, memory) if e["ns"] == ""), None)
    entries = _decode(saver, state)
    resumed = next((e for e in entries if e["ns"] == ""), None)
    if context is None or resumed is None:
        return state
    kept = list(context["checkpoint"]["channel_values"].get("messages", []))
    ids = {m.id for m in kept if isinstance(m, BaseMessage) and m.id}
    run = resumed["checkpoint"]["channel_values"].get("messages", [])
    resumed["checkpoint"]["channel_values"]["messages"] = [
        *kept,
        *(m for m in run if not (isinstance(m, BaseMessage) and m.id in ids)),
    ]
    return _encode(saver, entries)


def _restore(saver: InMemorySaver, thread: str, saved: bytes) -> None:
    for entry in _decode(saver, saved):
        checkpoint = entry["checkpoint"]
        where: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": entry["ns"]}}
        stored = saver.put(where, checkpoint, entry["metadata"], checkpoint["channel_versions"])
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in entry["writes"]:
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, writes in by_task.items():
            saver.put_writes(stored, writes, task_id)
