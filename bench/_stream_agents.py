"""Executors used by the streaming benchmarks (importable as ``bench._stream_agents``).

* ``tick N SECONDS`` (``TickExecutor``; ``bench/streaming.py``): N artifact chunks, one every
  SECONDS (a sleep before each), each stamped with its emit time;
* ``chunks N INTERVAL`` (``TickExecutor`` and ``DemoWithChunksExecutor``; ``bench/stream_shapes.py``
  and the ``stream_*`` shapes of ``bench/aws_calls.py``): an LLM-style answer, N chunks of exactly
  ``CHUNK_BYTES`` bytes of text appended to ONE artifact (``ARTIFACT_ID``; the first chunk
  ``append=False``, the rest ``append=True``), INTERVAL seconds of sleep between chunks (0: as fast
  as the event queue takes them), then COMPLETED. The WORKING and COMPLETED status updates and
  every chunk carry ``metadata.emittedAt`` (epoch seconds, taken just before the event is handed to
  the event queue).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.demo import DemoAgentExecutor
from a2a_serverless.models import Part, TaskState

CHUNK_BYTES = 40
ARTIFACT_ID = "answer"
_CHUNKS = re.compile(r"^\s*chunks\s+(\d+)\s+(\d+(?:\.\d+)?)\s*$")


_VOCABULARY = (
    "the of and to in is that for it as with was on be by this are or from at an not which have but "
    "can all their more one its has been will would there about other so what when model agent task "
    "answer stream token request server client store event log write read cost each time first new "
    "data value state because through between while where into only also after most some than them"
)
_WORDS = _VOCABULARY.split()


def chunk_text(index: int) -> str:
    """Chunk ``index``'s text: exactly ``CHUNK_BYTES`` ASCII bytes, its index readable at the start,
    then words drawn (deterministically, seeded by the index) from a list of common English words:
    text about as compressible as a model's answer (zlib: about 3 to 1 over a whole answer), not a
    run of one letter that compresses a hundredfold and would flatter a store that compresses."""
    rng = random.Random(index)
    text = f"{index:06d} "
    while len(text) < CHUNK_BYTES:
        text += rng.choice(_WORDS) + " "
    return text[:CHUNK_BYTES]


def stored_chunks(texts: list[str]) -> tuple[int, bool]:
    """How many chunks an answer artifact's text parts hold, and whether they are chunks 0, 1, ...
    in order. The store joins appended text chunks into one part (A2A reads show text, not tokens),
    so the chunks are counted in the joined text: each is exactly ``CHUNK_BYTES`` bytes."""
    joined = "".join(texts)
    count = len(joined) // CHUNK_BYTES
    in_order = len(joined) == count * CHUNK_BYTES and joined == "".join(chunk_text(i) for i in range(count))
    return count, in_order


def parse_chunks(text: str) -> tuple[int, float] | None:
    """``chunks N INTERVAL`` -> (N, INTERVAL); anything else -> None."""
    match = _CHUNKS.match(text)
    return (int(match.group(1)), float(match.group(2))) if match else None


EMITS: dict[str, dict[str, list[Any]]] = {}
"""task id -> ``{"emitted": [...], "returned": [...], "kinds": [...]}``: when the executor handed
each event of its ``chunks`` run to the event queue, when that call returned (epoch seconds), and
what it was (``status`` or ``chunk``). Only seen by a benchmark that runs the worker in its own
process (the local stack does)."""


async def stream_chunks(updater: TaskUpdater, count: int, interval: float) -> None:
    times = EMITS.setdefault(updater.task_id, {"emitted": [], "returned": [], "kinds": []})

    async def emit(send: Callable[[dict[str, float]], Awaitable[None]], kind: str = "status") -> None:
        now = time.time()
        times["emitted"].append(now)
        times["kinds"].append(kind)
        await send({"emittedAt": now})
        times["returned"].append(time.time())

    await emit(lambda meta: updater.update_status(TaskState.TASK_STATE_WORKING, metadata=meta))
    for i in range(count):
        if i and interval > 0:
            await asyncio.sleep(interval)
        await emit(
            lambda meta, i=i: updater.add_artifact(
                [Part(text=chunk_text(i))], artifact_id=ARTIFACT_ID, append=i > 0, metadata=meta
            ),
            "chunk",
        )
    await emit(lambda meta: updater.update_status(TaskState.TASK_STATE_COMPLETED, metadata=meta))


class TickExecutor(AgentExecutor):
    """``tick N SECONDS``: N artifact chunks, one every SECONDS, each stamped with its emit time.
    ``chunks N INTERVAL``: see the module docstring. Anything else: asks for input (an idle task
    to subscribe to)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        text = context.get_user_input()
        chunks = parse_chunks(text)
        if chunks is not None:
            await stream_chunks(updater, *chunks)
            return
        words = text.split()
        if len(words) != 3 or words[0] != "tick":
            await updater.requires_input(updater.new_agent_message([Part(text="waiting")]))
            return
        _, count, interval = words
        await updater.start_work()
        for i in range(int(count)):
            await asyncio.sleep(float(interval))
            await updater.add_artifact(
                [Part(text=f"tick {i}")], artifact_id="ticks", append=i > 0, metadata={"emittedAt": time.time()}
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class DemoWithChunksExecutor(DemoAgentExecutor):
    """The product's demo agent (``hello``, ``sleep N``, ``ask me``, ``fail``: the same events),
    plus ``chunks N INTERVAL``: what ``bench/aws_calls.py`` runs when a ``stream_*`` shape is
    selected."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        chunks = parse_chunks(context.get_user_input())
        if chunks is None:
            await super().execute(context, event_queue)
            return
        await stream_chunks(TaskUpdater(event_queue, context.task_id, context.context_id), *chunks)
