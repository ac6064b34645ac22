"""The bridge from an agent framework's event stream to a task: the part every framework adapter
shares (``docs/frameworks.md``).

An adapter subclasses :class:`FrameworkExecutor` and writes one method, :meth:`~FrameworkExecutor.run`:
given the :class:`Turn` (the user's message, the conversation's memory, the paused run's state when
the message answers a pause), run the framework and yield its events as :mod:`._events`. The bridge
does the rest, the same way for every framework:

* text deltas -> one ``answer`` artifact per run, appended chunk by chunk through the run's event
  queue (so the group commit applies: one event per delta, as a hand-written streaming executor
  emits), the last chunk marked (each delta is held until the next one arrives, so the last is
  known without an extra event). Every chunk is a log event, so each carries no more than a
  hand-written executor's would: a short artifact id (``answer``; ``answer-2`` for the next run of
  the task, after a pause), the name on the first chunk only (appends keep it);
* a tool call -> a WORKING status naming the tool (arguments and results only with
  ``tool_details=True``: they can hold secrets);
* a pause -> INPUT_REQUIRED with the question; the framework's resume state is saved for the task
  (``context.state``: the caller's scope, large state as an object) and handed back as
  ``Turn.resume`` with the task's next message;
* the conversation's memory is saved under the ``contextId`` in the caller's scope, so turns in one
  context share it and two owners never do (a save conditional on the version loaded: a concurrent
  turn of the same context is not overwritten, that turn's memory is dropped and logged instead);
* CancelTask -> the run's coroutine is cancelled (the framework's stream is closed, which is how
  every supported framework cancels), then CANCELED: nothing the framework produced afterwards is
  written;
* an exception from the framework -> FAILED with the worker's generic message; the exception is
  logged with the task id, never shown to the caller.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import ClassVar

from ..execution.agent_state import AgentState
from ..execution.api import AgentExecutor, EventQueue, RequestContext
from ..execution.updater import TaskUpdater
from ..json_types import Json
from ..models import Message, Part, Task, TaskState
from ..ports.agent_state import StateConflict
from ..transitions import FAILED_TEXT
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult

__all__ = ["FrameworkExecutor", "Turn"]

logger = logging.getLogger(__name__)

_CANCEL_WAIT_SECONDS = 4.0
"""How long ``cancel`` waits for the framework to unwind (the worker gives ``cancel`` 5 s)."""


@dataclass
class Turn:
    """One run of the agent, as the adapter sees it."""

    context: RequestContext
    memory: bytes | None
    """The conversation's memory as the adapter last kept it (:meth:`keep`), None in a new context."""
    resume: bytes | None
    """The state a :class:`Pause` of this task saved, when this message answers it; else None."""
    kept: bytes | None = None

    @property
    def text(self) -> str:
        return self.context.get_user_input()

    @property
    def message(self) -> Message | None:
        return self.context.message

    def keep(self, memory: bytes) -> None:
        """The conversation's memory after this turn: saved when the run ends or pauses (not when
        it fails or is cancelled)."""
        self.kept = memory


class FrameworkExecutor(AgentExecutor):
    """An executor that runs a framework's agent and bridges its events to the task."""

    framework: ClassVar[str] = "framework"
    """Names the state this adapter keeps (``<framework>/context/<id>``, ``<framework>/task/<id>``)."""

    def __init__(self, *, tool_details: bool = False, answer_name: str = "answer") -> None:
        self.tool_details = tool_details
        self.answer_name = answer_name
        self._running: dict[str, asyncio.Task[object]] = {}

    @abc.abstractmethod
    def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        """Run the framework for ``turn`` and yield its events; end after a :class:`Pause`."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        state = _state_of(context)
        memory = await state.load(self._memory_key(context))
        paused = None
        task = context.current_task
        if task is not None and task.status.state is TaskState.TASK_STATE_INPUT_REQUIRED:
            paused = await state.load(self._pause_key(context))  # a new task has none: not read
        turn = Turn(context, memory.data if memory else None, paused.data if paused and paused.data else None)
        versions = (memory.version if memory else 0, paused.version if paused else 0)
        current = asyncio.current_task()
        if current is not None:
            self._running[context.task_id] = current
        try:
            await updater.start_work()
            await self._bridge(turn, updater, state, versions)
        finally:
            self._running.pop(context.task_id, None)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        running = self._running.get(context.task_id)
        if running is not None and running is not asyncio.current_task():
            running.cancel()  # the framework's stream is closed where it awaits
            await asyncio.wait({running}, timeout=_CANCEL_WAIT_SECONDS)
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    async def _bridge(self, turn: Turn, updater: TaskUpdater, state: AgentState, versions: tuple[int, int]) -> None:
        answer = _Answer(updater, self.answer_name, turn.context.current_task)
        stream = self.run(turn)
        try:
            while True:
                try:
                    event = await anext(stream)
                except StopAsyncIteration:
                    break
                except Exception:
                    # The framework's failure (the model's, a tool's): logged here, never shown.
                    logger.exception("the agent framework failed", extra={"task_id": turn.context.task_id})
                    await answer.close()
                    await updater.failed(updater.new_agent_message([Part(text=FAILED_TEXT)]))
                    return
                if isinstance(event, Pause):
                    await answer.close()
                    await self._keep(turn, state, versions[0])
                    await state.save(self._pause_key(turn.context), event.state, version=versions[1])
                    await updater.requires_input(self._question(updater, event))
                    return
                await self._emit(event, answer, updater)
        finally:
            await stream.aclose()
        await answer.close()
        await self._keep(turn, state, versions[0])
        await updater.complete()

    async def _emit(self, event: FrameworkEvent, answer: _Answer, updater: TaskUpdater) -> None:
        if isinstance(event, TextDelta):
            await answer.add(event.text)
        elif isinstance(event, ToolCall):
            details: Json = {"tool": event.name, "toolCallId": event.call_id}
            parts = [Part(text=f"Calling tool {event.name}")]
            if self.tool_details:
                parts.append(Part(data={"tool": event.name, "arguments": event.arguments}))
            await updater.update_status(
                TaskState.TASK_STATE_WORKING, updater.new_agent_message(parts), metadata=details
            )
        elif isinstance(event, ToolResult):
            if self.tool_details:
                parts = [
                    Part(text=f"Tool {event.name} returned"),
                    Part(data={"tool": event.name, "result": event.result}),
                ]
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING,
                    updater.new_agent_message(parts),
                    metadata={"tool": event.name, "toolCallId": event.call_id},
                )
        elif isinstance(event, Output):
            await updater.add_artifact(event.parts, name=event.name, last_chunk=True)

    def _memory_key(self, context: RequestContext) -> str:
        return f"{self.framework}/context/{context.context_id}"

    def _pause_key(self, context: RequestContext) -> str:
        return f"{self.framework}/task/{context.task_id}"

    def _question(self, updater: TaskUpdater, pause: Pause) -> Message:
        parts = [Part(text=pause.question)]
        if pause.data:
            parts.append(Part(data=pause.data))
        return updater.new_agent_message(parts)

    async def _keep(self, turn: Turn, state: AgentState, version: int) -> None:
        if turn.kept is None:
            return
        try:
            await state.save(self._memory_key(turn.context), turn.kept, version=version)
        except StateConflict:
            logger.warning(
                "another turn of this context saved its memory first; this turn's is not kept",
                extra={"task_id": turn.context.task_id},
            )


class _Answer:
    """The run's answer artifact: each delta is sent when the next arrives, the last one marked
    when the stream ends, so the chunks are exactly the deltas and the last is known."""

    def __init__(self, updater: TaskUpdater, name: str, task: Task | None) -> None:
        self._updater = updater
        self._name = name
        self._id = _answer_id(name, task)
        self._held: str | None = None
        self._sent = 0

    async def add(self, text: str) -> None:
        if not text:
            return
        if self._held is not None:
            await self._send(self._held, last=False)
        self._held = text

    async def close(self) -> None:
        if self._held is not None:
            await self._send(self._held, last=True)
            self._held = None

    async def _send(self, text: str, *, last: bool) -> None:
        first = self._sent == 0
        await self._updater.add_artifact(
            [Part(text=text)], artifact_id=self._id, name=self._name if first else "", append=not first, last_chunk=last
        )
        self._sent += 1


def _answer_id(name: str, task: Task | None) -> str:
    """An id for this run's answer that no artifact of the task has yet: the name, then the name
    numbered (a run resumed after a pause streams a new answer; the first one stays as it was).
    Short, since every chunk repeats it (a uuid would add 30 bytes to each 4-character delta)."""
    base = name or "answer"
    taken = {artifact.artifact_id for artifact in task.artifacts} if task is not None else set()
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _state_of(context: RequestContext) -> AgentState:
    if context.state is None:
        raise RuntimeError("this run has no agent state (the worker gives it: A2A_STORE names where it is kept)")
    return context.state
