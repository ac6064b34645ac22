"""Executors used by the large-parts benchmarks (importable as ``bench._large_agents``; issue 14).

* ``bigfile N SEED`` (``DemoWithFilesExecutor``; the ``artifact_<N>mb`` shapes of
  ``bench/aws_calls.py`` and ``bench/large_parts.py``): WORKING, then ONE artifact
  (``FILE_ARTIFACT_ID``) holding ONE ``raw`` part of N pseudo-random bytes (:func:`file_bytes`:
  incompressible, the same for the same N and SEED, so a client can check what it downloads), file
  name ``bench-<N>.bin``, media type ``application/octet-stream``, then COMPLETED. The store puts
  the part in S3 (it is over ``blob_threshold_bytes``); the executor itself only hands it to the
  event queue.

Anything else goes to ``DemoWithChunksExecutor`` (the demo agent plus ``chunks N INTERVAL``), so the
method samples and stream shapes of ``aws_calls.py`` run unchanged with this executor.
"""

from __future__ import annotations

import random
import re
import time
from typing import Any

from a2a_serverless.execution import EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part
from bench._stream_agents import DemoWithChunksExecutor

FILE_ARTIFACT_ID = "file"
MEDIA_TYPE = "application/octet-stream"
MAX_FILE_BYTES = 64 * 1024 * 1024
_BIGFILE = re.compile(r"^\s*bigfile\s+(\d+)\s+(\d+)\s*$")


def file_bytes(size: int, seed: int) -> bytes:
    """The bytes ``bigfile SIZE SEED`` returns: pseudo-random (incompressible), deterministic."""
    return random.Random(seed).randbytes(size)


def file_name(size: int) -> str:
    return f"bench-{size}.bin"


def file_request(size: int, seed: int) -> str:
    """The message text that asks for a file of ``size`` bytes."""
    return f"bigfile {size} {seed}"


def parse_file(text: str) -> tuple[int, int] | None:
    """``bigfile N SEED`` -> (N, SEED); anything else -> None."""
    match = _BIGFILE.match(text)
    if match is None:
        return None
    return min(int(match.group(1)), MAX_FILE_BYTES), int(match.group(2))


TIMES: dict[str, dict[str, float]] = {}
"""task id -> epoch seconds of the executor's steps for a ``bigfile`` task: ``started`` (execute
called), ``generated`` (the bytes made), ``artifact_returned`` (``add_artifact`` returned: the
event is with the event queue), ``completed_returned`` (``complete`` returned). Only seen by a
benchmark that runs the worker in its own process (the local stack does)."""


async def produce_file(updater: TaskUpdater, size: int, seed: int) -> None:
    times = TIMES.setdefault(updater.task_id, {})
    times["started"] = time.time()
    await updater.start_work()
    data = file_bytes(size, seed)
    times["generated"] = time.time()
    part = Part(raw=data, filename=file_name(size), media_type=MEDIA_TYPE)
    await updater.add_artifact([part], artifact_id=FILE_ARTIFACT_ID, name="file")
    times["artifact_returned"] = time.time()
    await updater.complete()
    times["completed_returned"] = time.time()


class DemoWithFilesExecutor(DemoWithChunksExecutor):
    """``bigfile N SEED`` (see the module docstring); anything else as ``DemoWithChunksExecutor``."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        request = parse_file(context.get_user_input())
        if request is None:
            await super().execute(context, event_queue)
            return
        await produce_file(TaskUpdater(event_queue, context.task_id, context.context_id), *request)


def executor_times(task_id: str) -> dict[str, Any]:
    """A copy of :data:`TIMES` for ``task_id`` (empty when the worker ran elsewhere)."""
    return dict(TIMES.get(task_id, {}))
