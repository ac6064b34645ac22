"""The peer of ``compare.py``: the reference A2A server from ``a2a-sdk`` 1.x, in memory.

Its Starlette routes (agent card, JSON-RPC at ``POST /``, REST), ``DefaultRequestHandler`` and
``InMemoryTaskStore``, with :class:`EchoExecutor`, which emits what our demo agent emits for
anything but its keywords: WORKING, an ``echo`` artifact ``Echo: <text>``, COMPLETED (the task is
created SUBMITTED first, as our API does before the worker starts). ``tick N SECONDS`` emits N
artifact chunks stamped with their emit time, like ``bench._stream_agents.TickExecutor``.

Imported only by the peer's server process (``bench/_serve.py peer``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState
from starlette.applications import Starlette

__all__ = ["EchoExecutor", "create_reference_app"]


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        text = context.get_user_input().strip()
        if context.current_task is None:  # a new task: SUBMITTED, with the user's message
            history = [context.message] if context.message else []
            await event_queue.enqueue_event(
                new_task(updater.task_id, updater.context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        await updater.start_work()
        words = text.split()
        if len(words) == 3 and words[0] == "tick":
            for i in range(int(words[1])):
                await asyncio.sleep(float(words[2]))
                await updater.add_artifact(
                    [Part(text=f"tick {i}")], artifact_id="ticks", append=i > 0, metadata={"emittedAt": time.time()}
                )
        else:
            await updater.add_artifact([Part(text=f"Echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def create_reference_app(base_url: str, *, push: bool = False) -> Starlette:
    """The app; ``push``: it says it sends push notifications and does (the SDK's in-memory config
    store and its sender, over httpx, every URL allowed: the tests' servers are on 127.0.0.1)."""
    card = AgentCard(
        name="reference echo agent",
        description="a2a-sdk reference server with an echo executor",
        version="0.1.0",
        supported_interfaces=[
            AgentInterface(url=base_url + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echoes the text", tags=["echo"])],
    )
    pushes: dict[str, Any] = {}
    if push:
        configs = InMemoryPushNotificationConfigStore()
        pushes = {"push_config_store": configs, "push_sender": BasePushNotificationSender(httpx.AsyncClient(), configs)}
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card, **pushes
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/"),
        *create_rest_routes(handler),
    ]
    return Starlette(routes=routes)
