"""The a2a-sdk 0.3 agent of the interop chains (``chain_common`` says what it does), as a server.

Run by ``tests/e2e/test_interop_chain.py`` with the interpreter of ``.venv-a2a03`` (``make a2a03``:
``a2a-sdk==0.3.26`` with Starlette and uvicorn) and ``PYTHONPATH=tests/e2e``::

    .venv-a2a03/bin/python tests/e2e/interop/chain_ref_v03.py

It serves the SDK's own server (``DefaultRequestHandler``, ``InMemoryTaskStore``; JSON-RPC at
``POST /`` by ``A2AStarletteApplication``, HTTP+JSON at ``/v1/...`` by ``RESTAdapter``'s routes) on
127.0.0.1, with two cards: the one at ``/.well-known/agent-card.json`` prefers JSON-RPC, the one at
``/rest/.well-known/agent-card.json`` HTTP+JSON. It forwards with the SDK's 0.3 client. Once
listening it prints ``ready http://127.0.0.1:PORT``; SIGINT or SIGTERM stops it.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import uuid
from typing import Any
from urllib.parse import urlsplit

import httpx
import uvicorn
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.apps.rest.rest_adapter import RESTAdapter
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TextPart,
)
from a2a.utils import new_task
from interop.chain_common import Order, Recorder, answer_stream, ended, forwarded, order_of
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

NAME = "a2a-sdk 0.3"
REST_CARD = "/rest/.well-known/agent-card.json"


def texts(parts: list[Part] | None) -> str:
    return "".join(p.root.text for p in parts or [] if isinstance(p.root, TextPart))


class ChainExecutor(AgentExecutor):
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task or new_task(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        text = context.get_user_input().strip()
        order = order_of(text)
        if order is None:
            async for chunk, append, last in answer_stream(NAME, text):
                await updater.add_artifact(
                    [Part(root=TextPart(text=chunk))],
                    artifact_id="answer",
                    name="answer",
                    append=append,
                    last_chunk=last,
                )
            said = ended(NAME, text)
        else:
            said = forwarded(NAME, await self.forward(order, updater))
        await updater.complete(updater.new_agent_message([Part(root=TextPart(text=said))]))

    async def forward(self, order: Order, updater: TaskUpdater) -> str:
        """Send the order on with the SDK's 0.3 client, relaying the remote's chunks; what it said last."""
        parts = urlsplit(order.card_url)
        async with httpx.AsyncClient(timeout=60.0, event_hooks={"request": [self.recorder.sent]}) as http:
            resolver = A2ACardResolver(http, f"{parts.scheme}://{parts.netloc}", parts.path)
            card = await resolver.get_agent_card()
            bindings = [order.binding] if order.binding else ["JSONRPC", "HTTP+JSON"]
            config = ClientConfig(streaming=True, supported_transports=bindings, httpx_client=http)  # type: ignore[arg-type]
            client = ClientFactory(config).create(card)
            message = Message(
                message_id=str(uuid.uuid4()), role=Role.user, parts=[Part(root=TextPart(text=order.text))]
            )
            said = ""
            async for event in client.send_message(message):
                if isinstance(event, Message):
                    return texts(event.parts)
                remote, update = event
                if isinstance(update, TaskArtifactUpdateEvent):
                    await updater.add_artifact(
                        update.artifact.parts,
                        artifact_id=update.artifact.artifact_id,
                        name=update.artifact.name,
                        append=update.append,
                        last_chunk=update.last_chunk,
                    )
                said = _said(remote, said)
            return said

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None
        assert context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def _said(task: Task, said: str) -> str:
    message = task.status.message
    return texts(message.parts) if message is not None else said


def _card(base_url: str, preferred: str) -> AgentCard:
    urls = {"JSONRPC": base_url + "/", "HTTP+JSON": base_url}
    return AgentCard(
        name="reference chain agent (a2a-sdk 0.3)",
        description="forwards orders along a chain of agents, or answers",
        version="0.1.0",
        protocol_version="0.3.0",
        url=urls[preferred],
        preferred_transport=preferred,
        additional_interfaces=[AgentInterface(url=url, transport=b) for b, url in urls.items()],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="chain", name="chain", description="forwards or answers", tags=["chain"])],
    )


def create_app(base_url: str) -> Recorder:
    card, rest_card = _card(base_url, "JSONRPC"), _card(base_url, "HTTP+JSON")
    app = Starlette()
    recorder = Recorder(app)  # type: ignore[arg-type]
    handler = DefaultRequestHandler(agent_executor=ChainExecutor(recorder), task_store=InMemoryTaskStore())
    adapter = RESTAdapter(card, handler)

    async def rest_card_route(_: Any) -> JSONResponse:
        return JSONResponse(rest_card.model_dump(mode="json", by_alias=True, exclude_none=True))

    routes: list[Any] = [
        *A2AStarletteApplication(card, handler).routes(rpc_url="/"),
        Route(REST_CARD, rest_card_route, methods=["GET"]),
        *(Route(path, call, methods=[method]) for (path, method), call in adapter.routes().items()),
    ]
    app.router.routes.extend(routes)
    return recorder


async def serve() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(create_app(base_url), log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not serving.done():  # noqa: ASYNC110 (uvicorn tells only by this flag)
        await asyncio.sleep(0.05)
    if server.started:
        print(f"ready {base_url}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(serve())
    sys.exit(0)
