"""Our executor for ``compare.py`` (importable as ``bench._compare_agents``): the demo agent, whose
"hello" path is the echo the peer's ``EchoExecutor`` copies, plus ``tick N SECONDS`` from
``bench._stream_agents`` for the streaming figure."""

from __future__ import annotations

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.demo import DemoAgentExecutor
from bench._stream_agents import TickExecutor

__all__ = ["BenchExecutor"]


class BenchExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.demo = DemoAgentExecutor()
        self.tick = TickExecutor()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        target = self.tick if context.get_user_input().startswith("tick ") else self.demo
        await target.execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self.demo.cancel(context, event_queue)
