"""The demo agent the product runs out of the box.

* anything: replies with an ``echo`` artifact and completes;
* ``ask me``: asks for your name (INPUT_REQUIRED); your next message on the task completes it;
* ``sleep N``: works for N seconds (at most 60), reporting progress each second; cancel it;
* ``fail``: raises, to show how an executor failure becomes a FAILED task with a safe message.
"""

from __future__ import annotations

import asyncio
import re

from ..models import Part, TaskState
from .api import AgentExecutor, EventQueue, RequestContext
from .updater import TaskUpdater

__all__ = ["DemoAgentExecutor"]

_SLEEP = re.compile(r"^\s*sleep\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


class DemoAgentExecutor(AgentExecutor):
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
        match = _SLEEP.match(text)
        if match:
            seconds = min(float(match.group(1)), 60.0)
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
