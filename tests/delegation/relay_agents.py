"""The agents of the delegation tests, named by import path (``relay_agents:...``).

:class:`DelegatingAgent` reads its orders as JSON, ``{"to": card URL, "send": text, "binding":
"JSONRPC" | "HTTP+JSON", "limit": seconds, "cancel_timeout": seconds}``, delegates ``send`` to the
agent at ``to`` and reports the outcome (``Delegation.report``). ``send`` may itself be such orders, for the next hop.

:class:`ChoreAgent` is the remote: ``chunks N`` (a WORKING message, then N chunks of the artifact
``out``, then COMPLETED saying "done"), ``fail`` (raises with a secret text), ``reject``, ``reply``
(a message-only reply), ``ask`` (INPUT_REQUIRED), ``hang`` (works until canceled, or fails after a
minute)."""

from __future__ import annotations

import asyncio
import json

from a2a_serverless.delegation import RemoteAgent, delegate
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part, TaskState

SECRET = "db password is hunter2"


class DelegatingAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        orders = json.loads(context.get_user_input())
        async with RemoteAgent(orders["to"], binding=orders.get("binding")) as remote:
            result = await delegate(
                context,
                updater,
                remote,
                orders["send"],
                limit=orders.get("limit", 60.0),
                cancel_timeout=orders.get("cancel_timeout", 3.0),
            )
        await result.report(updater)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class ChoreAgent(AgentExecutor):
    card = {"name": "chore agent", "description": "Does chores.", "version": "1.0.0"}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        words = context.get_user_input().split()
        if words[0] == "fail":
            raise RuntimeError(SECRET)
        if words[0] == "reject":
            await updater.reject(updater.new_agent_message([Part(text="not my job")]))
            return
        if words[0] == "reply":  # a message-only reply: no task work
            await event_queue.enqueue_event(updater.new_agent_message([Part(text="hello back")]))
            return
        if words[0] == "ask":
            await updater.requires_input(updater.new_agent_message([Part(text="which one?")]))
            return
        await updater.update_status(TaskState.TASK_STATE_WORKING, updater.new_agent_message([Part(text="on it")]))
        if words[0] == "hang":
            await asyncio.sleep(60)  # until canceled; a test that fails to cancel it still ends
            raise RuntimeError("nobody canceled the hanging chore")
        count = int(words[1])
        for n in range(count):
            await updater.add_artifact(
                [Part(text=f"chunk {n};")], artifact_id="out", name="out", append=n > 0, last_chunk=n == count - 1
            )
        await updater.complete(updater.new_agent_message([Part(text="done")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class DurableDelegatingAgent(DelegatingAgent):
    """:class:`DelegatingAgent` for durable mode: it marks steps, so its delegation waits with no
    function running (``a2a_serverless.durable.delegation``)."""

    durable_steps = True
