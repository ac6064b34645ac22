"""The official a2a-sdk 1.x client, as the suites that drive a served agent with it use it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest, Task

__all__ = ["Session", "sdk_session", "send", "user_message"]


@dataclass
class Session:
    client: Client
    card: AgentCard
    requests: list[tuple[str, str]]
    """(method, path) of every HTTP request the client made: proves which binding was used."""


@asynccontextmanager
async def sdk_session(
    base_url: str, binding: str = "JSONRPC", *, streaming: bool = False, headers: dict[str, str] | None = None
) -> AsyncIterator[Session]:
    """A client of the agent at ``base_url`` on one binding, from the card it serves; ``headers`` go
    with every request (a caller's ``Authorization``)."""
    requests: list[tuple[str, str]] = []

    async def record(request: httpx.Request) -> None:
        requests.append((request.method, request.url.path))

    async with httpx.AsyncClient(timeout=60.0, headers=headers, event_hooks={"request": [record]}) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        config = ClientConfig(supported_protocol_bindings=[binding], streaming=streaming, httpx_client=http)
        client = ClientFactory(config).create(card)
        try:
            yield Session(client=client, card=card, requests=requests)
        finally:
            await client.close()


def user_message(text: str, **fields: Any) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)], **fields)


async def send(client: Client, request: SendMessageRequest) -> Task:
    """SendMessage, whose one answer must be the Task."""
    events = [event async for event in client.send_message(request)]
    assert len(events) == 1, events
    assert events[0].HasField("task"), events[0]
    return events[0].task
