"""An example agent that marks durable steps (``docs/durable-tasks.md``), runnable in both modes.

Say ``plan N`` (1-20) and it works through N steps, each a checkpointed ``context.steps.run``
that takes a second and adds one line to the ``plan`` artifact; ``plan N nap S`` also sleeps S
seconds (at most a day) between the first step and the rest with ``context.steps.sleep``: in
durable mode no function runs during the nap, and CancelTask ends it. Anything else is echoed.

Deploy it with ``ExecutorPath=a2a_serverless.execution.steps_demo:StepsDemoExecutor`` (and
``ExecutionMode=Durable`` for the steps to outlive the function's timeout).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from functools import partial
from typing import ClassVar

from ..json_types import JsonValue
from ..models import Part
from .api import AgentExecutor, EventQueue, RequestContext
from .updater import TaskUpdater

__all__ = ["StepsDemoExecutor"]

_PLAN = re.compile(r"^\s*plan\s+(\d+)(?:\s+nap\s+(\d+))?\s*$", re.IGNORECASE)
MAX_STEPS = 20
MAX_NAP_SECONDS = 86400
STEP_SECONDS = 1.0


class StepsDemoExecutor(AgentExecutor):
    durable_steps = True
    card: ClassVar[Mapping[str, JsonValue] | None] = {
        "name": "Steps demo",
        "description": "Works through a plan step by step: 'plan 5', or 'plan 5 nap 3600' to rest between steps.",
        "version": "1.0.0",
        "skills": [
            {
                "id": "plan",
                "name": "Plan",
                "description": "Works through N checkpointed steps (durable mode: they outlive a function timeout).",
                "tags": ["demo", "durable"],
                "examples": ["plan 3", "plan 5 nap 60"],
            }
        ],
    }

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input().strip()
        asked = _PLAN.match(text)
        if asked is None:
            await updater.add_artifact([Part(text=f"Echo: {text}")], name="echo")
            await updater.complete()
            return
        steps = max(1, min(int(asked.group(1)), MAX_STEPS))
        nap = min(int(asked.group(2) or 0), MAX_NAP_SECONDS)
        done: list[str] = []
        for n in range(1, steps + 1):
            line = await context.steps.run(f"step-{n}", partial(_work, updater, n, steps))
            done.append(str(line))
            if n == 1 and nap:
                await context.steps.sleep(nap, "nap")
        summary = updater.new_agent_message([Part(text=f"Done: {len(done)} steps")])
        await updater.complete(message=summary)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def _work(updater: TaskUpdater, n: int, steps: int) -> str:
    await asyncio.sleep(STEP_SECONDS)
    line = f"step {n} of {steps} done\n"
    await updater.add_artifact([Part(text=line)], name="plan", artifact_id="plan", append=n > 1, last_chunk=n == steps)
    return line
