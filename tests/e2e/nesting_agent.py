"""An agent that calls an agent: ``nest N`` sends ``nest N-1`` to the stack it runs on (a blocking
SendMessage, as an a2a-sdk executor that delegates does) and answers ``N>`` and what came back;
``nest 0`` answers ``0``. A chain of N nested calls keeps N+1 runs of the worker busy at once."""

from __future__ import annotations

import os
import uuid

import httpx

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part


class NestingAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        depth = int(context.get_user_input().split()[1])
        answer = "0" if depth == 0 else f"{depth}>{await _call(f'nest {depth - 1}')}"
        await updater.add_artifact([Part(text=answer)], name="chain")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def _call(text: str) -> str:
    """What the stack's agent answers ``text`` with, or ``<STATE>`` when the blocking call came back
    before the task ended (the callee never got a worker)."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    async with httpx.AsyncClient(timeout=120) as http:
        response = await http.post(os.environ["A2A_PUBLIC_URL"] + "/", json=body, headers={"A2A-Version": "1.0"})
    task = response.json()["result"]["task"]
    if task["status"]["state"] != "TASK_STATE_COMPLETED":
        return f"<{task['status']['state']}>"
    return "".join(part["text"] for part in task["artifacts"][0]["parts"])
