"""Test an agent in process: its app on the in-memory runtime, called over httpx (no server, no AWS,
no local stack), one conversation at a time.

    from a2a_serverless_dev.testing import agent_conversation

    def test_it_asks_then_writes() -> None:
        with agent_conversation("report_agent:ReportAgent") as conversation:
            task = conversation.send("serverless A2A")
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            task = conversation.send("long")  # the same task: it was waiting for this answer
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"

A conversation is one app on one runtime, so what a turn stored is there for the next (a runtime per
request would forget it). ``send`` is a blocking SendMessage over the HTTP+JSON binding: its answer
is the task once it is final or interrupted. Each message carries the conversation's ``contextId``
and, while the last task is still open (not final: INPUT_REQUIRED, say), its ``taskId``, as a chat
client's would; after a final state the next message starts a new task in the same context. The
calls run on an event loop the conversation owns, so a test needs no async plugin.
"""

from __future__ import annotations

import asyncio
import uuid
from os import PathLike
from types import TracebackType
from typing import Any

import httpx

from a2a_serverless.adapters.memory_queues import InlineWorkQueue
from a2a_serverless.config import Settings
from a2a_serverless.json_types import Json, JsonValue
from a2a_serverless.models import TaskState
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import CARD_PATH, create_app
from a2a_serverless.wiring import build_runtime

__all__ = ["AgentConversation", "agent_conversation"]

_HEADERS = {"A2A-Version": "1.0"}


def agent_conversation(
    executor: str | type[Any], *, card_file: str | PathLike[str] | None = None, **settings: Any
) -> AgentConversation:
    """A conversation with ``executor`` (an import path, ``package.module:Class``, or the class) on a
    fresh in-memory runtime; ``card_file`` is its card (``A2A_CARD_FILE``), ``settings`` any other
    :class:`~a2a_serverless.config.Settings` field. Close it (``with`` does) to stop its runs."""
    path = executor if isinstance(executor, str) else f"{executor.__module__}:{executor.__qualname__}"
    options: dict[str, Any] = {"poll_interval_seconds": 0.01, **settings, "store": "memory", "executor": path}
    if card_file is not None:
        options["card_file"] = str(card_file)
    return AgentConversation(build_runtime(Settings(**options)))


class AgentConversation:
    """One app on one runtime, and the conversation's ``context_id`` and open ``task_id``."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.context_id: str | None = None
        self.task_id: str | None = None
        """The last task while it is open (not final): the next message continues it."""
        self._loop = asyncio.Runner()
        transport = httpx.ASGITransport(app=create_app(runtime))
        self._http = httpx.AsyncClient(transport=transport, base_url="http://agent", headers=_HEADERS, timeout=60)

    def send(self, text: str, **message: JsonValue) -> Json:
        """Send ``text`` as the user's next message (``message``: more of its fields, e.g. ``metadata``
        or ``parts``, which replace the text) and return the task it answered with. Raises
        ``AssertionError``, with the answer, when the answer is an error or a message without a task."""
        fields: Json = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        fields.update({"contextId": self.context_id, "taskId": self.task_id})
        fields.update(message)
        response = self.post("/message:send", {"message": {k: v for k, v in fields.items() if v is not None}})
        answer = response.json()
        if response.status_code != 200 or not isinstance(answer.get("task"), dict):
            raise AssertionError(f"SendMessage answered {response.status_code}, not a task: {response.text}")
        task: Json = answer["task"]
        self.context_id = task["contextId"]
        self.task_id = None if TaskState(task["status"]["state"]).is_terminal else task["id"]
        return task

    def card(self) -> Json:
        """The agent card, as a client reads it."""
        response = self.get(CARD_PATH)
        response.raise_for_status()
        card: Json = response.json()
        return card

    def get(self, path: str) -> httpx.Response:
        return self._loop.run(self._http.get(path))

    def post(self, path: str, body: Json) -> httpx.Response:
        """``body`` to ``path`` as is: any request of the HTTP+JSON binding, or JSON-RPC at ``/``."""
        return self._loop.run(self._http.post(path, json=body))

    def close(self) -> None:
        """Close the client and the loop, and wait for the runtime's runs to end."""
        try:
            self._loop.run(self._http.aclose())
            self._loop.close()
        finally:
            if isinstance(self.runtime.queue, InlineWorkQueue):
                self.runtime.queue.shutdown()

    def __enter__(self) -> AgentConversation:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
