"""One executor serving several agents, each message routed by a key of its metadata: a stack
(or a benchmark) that runs several agents behind one ``A2A_EXECUTOR``."""

from __future__ import annotations

from collections.abc import Callable

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext

__all__ = ["MetadataRouter"]


class MetadataRouter(AgentExecutor):
    """Hands each message (its run, and its cancel) to ``agent(name)``, ``name`` being the value of
    the message's ``metadata[key]`` (``default`` when it has none)."""

    def __init__(self, key: str, agent: Callable[[str], AgentExecutor], default: str = "") -> None:
        self._key = key
        self._agent = agent
        self._default = default

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self._agent_of(context).execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self._agent_of(context).cancel(context, event_queue)

    def _agent_of(self, context: RequestContext) -> AgentExecutor:
        metadata = context.message.metadata if context.message is not None else None
        return self._agent(str((metadata or {}).get(self._key, self._default)))
