"""The agent the official TCK (a2aproject/a2a-tck, branch 1.0-dev) expects behind the server it
tests, for ``bench/tck.py`` (importable as ``bench._tck_agent:TckExecutor``).

The kit selects each behaviour in band, by the messageId's prefix, as its Gherkin scenarios
(``scenarios/core_operations.feature``, ``scenarios/streaming.feature``) describe it; this is our
executor written to those scenarios, on the kit's executor API (none of the TCK's code). A messageId
with no known prefix completes the task with a message, as the scenarios' default does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import Part

__all__ = ["TckExecutor"]

STREAMING_TIMEOUT_SECONDS = 2.0
"""The kit's streaming timeout: the resubscription scenario's task outlives two of them."""

Behaviour = Callable[[TaskUpdater, EventQueue], Awaitable[None]]


async def _complete_with_greeting(updater: TaskUpdater, _: EventQueue) -> None:
    await updater.complete(updater.new_agent_message([Part(text="Hello from TCK")]))


def _artifact_then_complete(part: Part, *, working: bool) -> Behaviour:
    async def behave(updater: TaskUpdater, _: EventQueue) -> None:
        if working:
            await updater.start_work()
        await updater.add_artifact([part])
        await updater.complete()

    return behave


async def _message_only(updater: TaskUpdater, queue: EventQueue) -> None:
    await queue.enqueue_event(updater.new_agent_message([Part(text="Direct message response")]))


async def _input_required(updater: TaskUpdater, _: EventQueue) -> None:
    await updater.requires_input()


async def _reject(updater: TaskUpdater, _: EventQueue) -> None:
    raise RuntimeError("rejected")  # the scenario's "reject with error": the task fails


async def _complete(updater: TaskUpdater, _: EventQueue) -> None:
    await updater.complete()


async def _chunked(updater: TaskUpdater, _: EventQueue) -> None:
    await updater.start_work()
    await updater.add_artifact([Part(text="chunk-1 ")], artifact_id="chunked")  # the first chunk makes it
    await updater.add_artifact([Part(text="chunk-2")], artifact_id="chunked", append=True, last_chunk=True)
    await updater.complete()


async def _long_running(updater: TaskUpdater, _: EventQueue) -> None:
    await updater.start_work()
    await asyncio.sleep(2 * STREAMING_TIMEOUT_SECONDS)
    await updater.complete()


_FILE = Part(raw=b"tck", media_type="text/plain", filename="output.txt")
_FILE_URL = Part(url="https://example.com/output.txt", media_type="text/plain", filename="output.txt")

# Longest prefixes first: "tck-artifact-file-url" before "tck-artifact-file".
BEHAVIOURS: tuple[tuple[str, Behaviour], ...] = (
    ("tck-complete-task", _complete_with_greeting),
    ("tck-artifact-text", _artifact_then_complete(Part(text="Generated text content"), working=False)),
    ("tck-artifact-file-url", _artifact_then_complete(_FILE_URL, working=False)),
    ("tck-artifact-file", _artifact_then_complete(_FILE, working=False)),
    ("tck-artifact-data", _artifact_then_complete(Part(data={"key": "value", "count": 42}), working=False)),
    ("tck-message-response", _message_only),
    ("tck-input-required", _input_required),
    ("tck-reject-task", _reject),
    ("tck-stream-001", _artifact_then_complete(Part(text="Stream hello from TCK"), working=True)),
    ("tck-stream-002", _complete),
    ("tck-stream-003", _artifact_then_complete(Part(text="Stream task lifecycle"), working=True)),
    ("tck-stream-ordering-001", _artifact_then_complete(Part(text="Ordered output"), working=True)),
    ("tck-stream-artifact-text", _artifact_then_complete(Part(text="Streamed text content"), working=True)),
    ("tck-stream-artifact-file", _artifact_then_complete(_FILE, working=True)),
    ("tck-stream-artifact-chunked", _chunked),
    ("test-resubscribe-message-id", _long_running),
)


class TckExecutor(AgentExecutor):
    card = {
        "name": "a2a-serverless TCK agent",
        "description": "Behaves as the A2A TCK's scenarios select by messageId prefix.",
        "version": "1.0.0",
        "skills": [{"id": "tck", "name": "TCK", "description": "TCK conformance scenarios.", "tags": ["tck"]}],
    }

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        message_id = context.message.message_id if context.message is not None else ""
        for prefix, behave in BEHAVIOURS:
            if message_id.startswith(prefix):
                await behave(updater, event_queue)
                return
        await updater.complete(updater.new_agent_message([Part(text=f"Unhandled messageId prefix: {message_id}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
