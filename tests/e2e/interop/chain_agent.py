"""Our agent in the interop chains, on the local stack (``A2A_EXECUTOR=interop.chain_agent:ChainAgent``).

It does what ``chain_common`` says. ``delegate`` orders go through ``a2a_serverless.delegation``
(``delegate`` relays the remote's chunks into our task under mapped ids); ``call`` orders through
the a2a-sdk 1.x client (``chain_ref_v1.sdk_stream``), the way to reach an A2A 0.3 agent, since the
delegation client speaks A2A 1.0 only.
"""

from __future__ import annotations

from interop.chain_common import Order, answer_stream, ended, forwarded, order_of
from interop.chain_ref_v1 import final_words, sdk_stream

from a2a_serverless.delegation import RemoteAgent, delegate
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Message, Part

NAME = "serverless"


class ChainAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input().strip()
        order = order_of(text)
        if order is None:
            async for chunk, append, last in answer_stream(NAME, text):
                await updater.add_artifact(
                    [Part(text=chunk)], artifact_id="answer", name="answer", append=append, last_chunk=last
                )
            said = ended(NAME, text)
        elif order.verb == "delegate":
            async with RemoteAgent(order.card_url, binding=order.binding) as remote:  # type: ignore[arg-type]
                result = await delegate(context, updater, remote, order.text, limit=60.0)
            if not result.ok or result.task is None:
                await result.report(updater)  # FAILED, naming the remote
                return
            said = forwarded(NAME, _text(result.task.status.message))
        else:
            said = forwarded(NAME, await _call(order, updater))
        await updater.complete(updater.new_agent_message([Part(text=said)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def _call(order: Order, updater: TaskUpdater) -> str:
    """Send the order on with the a2a-sdk client, relaying the remote's chunks; what it said as it ended."""
    said = ""
    async for event in sdk_stream(order.card_url, order.binding, order.text):
        if event.HasField("artifact_update"):
            update = event.artifact_update
            await updater.add_artifact(
                [Part(text=p.text) for p in update.artifact.parts],
                artifact_id=f"call:{update.artifact.artifact_id}",
                name=update.artifact.name,
                append=update.append,
                last_chunk=update.last_chunk,
            )
        said = final_words(event, said)
    return said


def _text(message: Message | None) -> str:
    return "".join(p.text or "" for p in message.parts) if message else ""
