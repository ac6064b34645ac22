"""Executors used by the streaming benchmark (importable as ``bench._stream_agents``)."""

from __future__ import annotations

import asyncio
import time

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part


class TickExecutor(AgentExecutor):
    """``tick N SECONDS``: N artifact chunks, one every SECONDS, each stamped with its emit time.
    Anything else: asks for input (an idle task to subscribe to)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        words = context.get_user_input().split()
        if len(words) != 3 or words[0] != "tick":
            await updater.requires_input(updater.new_agent_message([Part(text="waiting")]))
            return
        _, count, interval = words
        await updater.start_work()
        for i in range(int(count)):
            await asyncio.sleep(float(interval))
            await updater.add_artifact(
                [Part(text=f"tick {i}")], artifact_id="ticks", append=i > 0, metadata={"emittedAt": time.time()}
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
