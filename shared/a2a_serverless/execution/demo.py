"""The demo agent the product runs out of the box.

* anything: replies with an ``echo`` artifact and completes;
* ``ask me``: asks for your name (INPUT_REQUIRED); your next message on the task completes it;
* ``sleep N``: works for N seconds (at most 60), reporting progress each second; cancel it;
* ``fail``: raises, to show how an executor failure becomes a FAILED task with a safe message;
* ``file N`` (``N`` bytes, or with ``KB``/``MB``, at most 50 MB): returns a file of that size
  (:func:`demo_file`), and ``long N`` a text answer of that size (:func:`demo_text`): large
  content, stored in S3 and sent inline or by URL (``docs/large-content.md``).
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Mapping
from typing import ClassVar

from ..json_types import JsonValue
from ..models import Part, TaskState
from .api import AgentExecutor, EventQueue, RequestContext
from .updater import TaskUpdater

__all__ = ["DemoAgentExecutor", "demo_file", "demo_text"]

_SLEEP = re.compile(r"^\s*sleep\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_SIZED = re.compile(r"^\s*(file|long)\s+(\d+)\s*(kb|mb|)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "kb": 1024, "mb": 1024 * 1024}
MAX_DEMO_BYTES = 50 * 1024 * 1024
MAX_SLEEP_SECONDS = 60.0
_WORDS = ["the", "agent", "wrote", "a", "long", "answer", "about", "serverless", "tasks", "events", "and", "streams"]


def demo_file(size: int) -> bytes:
    """The bytes ``file N`` returns: pseudo-random, the same for the same size."""
    return random.Random(size).randbytes(size)


def demo_text(size: int) -> str:
    """The text ``long N`` returns: ``size`` ASCII characters of words, the same for the same size."""
    line = " ".join(_WORDS) + "\n"
    return (line * (size // len(line) + 1))[:size]


class DemoAgentExecutor(AgentExecutor):
    card: ClassVar[Mapping[str, JsonValue]] = {
        "name": "a2a-serverless demo agent",
        "description": "Echoes what you send as an artifact; say 'ask me' for a multi-turn exchange.",
        "version": "0.1.0",
        "skills": [
            {
                "id": "echo",
                "name": "Echo",
                "description": "Replies with an artifact that echoes the text it was sent.",
                "tags": ["demo", "echo"],
                "examples": ["hello there"],
            },
            {
                "id": "ask",
                "name": "Multi-turn greeting",
                "description": "Say 'ask me' and the agent asks for your name, then greets you (INPUT_REQUIRED turn).",
                "tags": ["demo", "multi-turn"],
                "examples": ["ask me"],
            },
        ],
    }

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        text = context.get_user_input().strip()
        await updater.start_work()
        waiting_for_name = (
            context.current_task is not None
            and context.current_task.status.state is TaskState.TASK_STATE_INPUT_REQUIRED
        )
        if waiting_for_name:
            await updater.add_artifact([Part(text=f"Nice to meet you, {text or 'stranger'}!")], name="greeting")
            await updater.complete()
            return
        if text.lower() == "ask me":
            await updater.requires_input(updater.new_agent_message([Part(text="What is your name?")]))
            return
        if text.lower() == "fail":
            raise RuntimeError("demo failure requested")
        sized = _SIZED.match(text)
        if sized:
            size = min(int(sized.group(2)) * _UNITS[sized.group(3).lower()], MAX_DEMO_BYTES)
            if sized.group(1).lower() == "file":
                part = Part(raw=demo_file(size), filename=f"demo-{size}.bin", media_type="application/octet-stream")
                await updater.add_artifact([part], name="file")
            else:
                await updater.add_artifact([Part(text=demo_text(size))], name="answer")
            await updater.complete()
            return
        match = _SLEEP.match(text)
        if match:
            asked = float(match.group(1))
            seconds = min(asked, MAX_SLEEP_SECONDS)
            if asked > seconds:
                capped = f"sleep is capped at {MAX_SLEEP_SECONDS:g}s: sleeping {seconds:g}s, not {asked:g}s"
                note = updater.new_agent_message([Part(text=capped)])
                await updater.update_status(TaskState.TASK_STATE_WORKING, note)
            elapsed = 0.0
            while elapsed < seconds:
                step = min(1.0, seconds - elapsed)
                await asyncio.sleep(step)
                elapsed += step
                progress = updater.new_agent_message([Part(text=f"worked {elapsed:g}s of {seconds:g}s")])
                await updater.update_status(TaskState.TASK_STATE_WORKING, progress)
            await updater.add_artifact([Part(text=f"slept {seconds:g}s")], name="sleep")
            await updater.complete()
            return
        await updater.add_artifact([Part(text=f"Echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
