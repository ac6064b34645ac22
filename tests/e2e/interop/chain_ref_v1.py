"""The a2a-sdk 1.x agent of the interop chains (``chain_common`` says what it does), and its client.

:func:`create_app` and :func:`route` make the SDK's own server (``DefaultRequestHandler``, ``InMemoryTaskStore``, its
Starlette routes for JSON-RPC at ``POST /`` and HTTP+JSON) with two cards: the one at
``/.well-known/agent-card.json`` prefers JSON-RPC, the one at ``/rest/.well-known/agent-card.json``
HTTP+JSON. :func:`sdk_stream` is the SDK's client streaming a message to another agent; our agent
(``chain_agent``) calls agents with it too when its orders say ``call``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from interop.chain_common import Recorder, answer_stream, ended, forwarded, order_of
from starlette.applications import Starlette

__all__ = ["NAME", "REST_CARD", "create_app", "final_words", "route", "sdk_stream"]

NAME = "a2a-sdk 1.x"
REST_CARD = "/rest/.well-known/agent-card.json"
"""The card that prefers HTTP+JSON; the one at the well-known path prefers JSON-RPC."""
BINDINGS = ["JSONRPC", "HTTP+JSON"]


async def sdk_stream(
    card_url: str, binding: str | None, text: str, recorder: Recorder | None = None
) -> AsyncIterator[StreamResponse]:
    """The events of ``text`` sent to the agent whose card is at ``card_url``, through the a2a-sdk
    1.x client on ``binding`` (None: the card's preference), streamed when the card says it streams
    (the SDK's compatibility transports when the card is an A2A 0.3 one)."""
    parts = urlsplit(card_url)
    hooks = {"request": [recorder.sent]} if recorder else {}
    async with httpx.AsyncClient(timeout=60.0, event_hooks=hooks) as http:
        base = f"{parts.scheme}://{parts.netloc}"
        card = await A2ACardResolver(http, base, parts.path).get_agent_card()
        bindings = [binding] if binding else BINDINGS
        config = ClientConfig(streaming=True, supported_protocol_bindings=bindings, httpx_client=http)
        client = ClientFactory(config).create(card)
        try:
            message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
            async for event in client.send_message(SendMessageRequest(message=message)):
                yield event
        finally:
            await client.close()


def final_words(event: StreamResponse, said: str) -> str:
    """What the remote said as it ended, from its last event (``said``: so far)."""
    status = None
    if event.HasField("task"):
        status = event.task.status
    elif event.HasField("status_update"):
        status = event.status_update.status
    if status is not None and status.HasField("message"):
        return "".join(p.text for p in status.message.parts)
    return said


class ChainExecutor(AgentExecutor):
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        if context.current_task is None:
            history = [context.message] if context.message else []
            await event_queue.enqueue_event(
                new_task(updater.task_id, updater.context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        await updater.start_work()
        text = context.get_user_input().strip()
        order = order_of(text)
        if order is None:
            async for chunk, append, last in answer_stream(NAME, text):
                await updater.add_artifact(
                    [Part(text=chunk)], artifact_id="answer", name="answer", append=append, last_chunk=last
                )
            said = ended(NAME, text)
        else:
            remote = ""
            async for event in sdk_stream(order.card_url, order.binding, order.text, self.recorder):
                if event.HasField("artifact_update"):
                    update = event.artifact_update
                    await updater.add_artifact(
                        list(update.artifact.parts),
                        artifact_id=update.artifact.artifact_id,
                        name=update.artifact.name,
                        append=update.append,
                        last_chunk=update.last_chunk,
                    )
                remote = final_words(event, remote)
            said = forwarded(NAME, remote)
        await updater.complete(updater.new_agent_message([Part(text=said)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def _card(base_url: str, bindings: list[str]) -> AgentCard:
    urls = {"JSONRPC": base_url + "/", "HTTP+JSON": base_url}
    return AgentCard(
        name="reference chain agent (a2a-sdk 1.x)",
        description="forwards orders along a chain of agents, or answers",
        version="0.1.0",
        supported_interfaces=[
            AgentInterface(url=urls[b], protocol_binding=b, protocol_version="1.0") for b in bindings
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="chain", name="chain", description="forwards or answers", tags=["chain"])],
    )


def create_app() -> Recorder:
    """The agent's app behind the recorder of its requests; it answers once :func:`route` gave it its URL."""
    return Recorder(Starlette())


def route(recorder: Recorder, base_url: str) -> None:
    """Serve the agent on ``recorder``'s app, whose URL is ``base_url`` (its cards name it)."""
    card = _card(base_url, BINDINGS)
    rest_card = _card(base_url, BINDINGS[::-1])
    handler = DefaultRequestHandler(
        agent_executor=ChainExecutor(recorder), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes: list[Any] = [
        *create_agent_card_routes(card),
        *create_agent_card_routes(rest_card, card_url=REST_CARD),
        *create_jsonrpc_routes(handler, "/"),
        *create_rest_routes(handler),
    ]
    app = recorder.app
    assert isinstance(app, Starlette)
    app.router.routes.extend(routes)
