"""Commits of a run start at least ``commit_interval_seconds`` apart: chunks an agent streams
meanwhile share the next commit (one head write for many), the first commit takes what the agent
emits in its first few steps with its first event, and the event that ends the run is committed at
once, with everything still queued."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.run_log import FIRST_COMMIT_STEPS
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import Part, TaskState
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE, send_request
from testkit.queues import RecordingQueue

CHUNKS = 40


class CommitLog(MemoryTaskStore):
    """The memory store, keeping how many events each commit carried."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[int] = []
        self._commits_lock = threading.Lock()

    def commit(self, record: Any, events: Any, **kwargs: Any) -> Any:
        stored = super().commit(record, events, **kwargs)
        with self._commits_lock:
            self.commits.append(len(events))
        return stored


class StreamingExecutor(AgentExecutor):
    """WORKING, then CHUNKS chunks of one artifact, yielding to the loop between them, then COMPLETED."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for n in range(CHUNKS):
            await updater.add_artifact(
                [Part(text=f"{n} ")], artifact_id="answer", append=n > 0, last_chunk=n == CHUNKS - 1
            )
            await asyncio.sleep(0)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


EXECUTOR = f"{StreamingExecutor.__module__}:{StreamingExecutor.__qualname__}"


def _run(interval: float) -> tuple[CommitLog, str]:
    store, queue = CommitLog(), RecordingQueue()
    settings = Settings(store="memory", executor=EXECUTOR, commit_interval_seconds=interval)
    runtime = build_runtime(settings, store=store, queue=queue)
    task_id = submit_message(send_request("go"), CTX, runtime).task.id
    store.commits.clear()
    process_work_item(runtime, queue.items[-1])
    return store, task_id


def test_chunks_emitted_within_the_interval_share_one_commit_and_the_end_is_not_held() -> None:
    # Given an interval far longer than the agent takes to stream its whole answer
    store, task_id = _run(interval=5.0)

    # Then the first commit carried WORKING and what the executor emitted in its next few steps,
    # and the completion, made at once, carried every chunk still queued: two commits (besides the
    # claim, which carries none), not one per chunk, and none held for the interval
    first, rest = [n for n in store.commits if n]
    assert 1 < first <= 1 + FIRST_COMMIT_STEPS, store.commits
    assert first + rest == CHUNKS + 2
    # And nothing was lost or reordered: the artifact is every chunk, in order, and the task ended
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
    (artifact,) = record.task.artifacts
    assert "".join(p.text or "" for p in artifact.parts) == "".join(f"{n} " for n in range(CHUNKS))


@pytest.mark.parametrize("interval", [0.0, 0.05])
def test_every_interval_stores_the_same_answer(interval: float) -> None:
    store, task_id = _run(interval)
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
    (artifact,) = record.task.artifacts
    assert "".join(p.text or "" for p in artifact.parts) == "".join(f"{n} " for n in range(CHUNKS))
    logged = store.read_events(SCOPE, task_id, 0, 1000)
    assert [e.seq for e in logged] == list(range(logged[0].seq, logged[0].seq + len(logged)))


def test_the_interval_is_a_setting_with_bounds() -> None:
    assert Settings().commit_interval == 0.05
    assert Settings.from_env({"A2A_STORE": "memory", "A2A_COMMIT_INTERVAL_SECONDS": "0.2"}).commit_interval == 0.2
    assert Settings.from_env({"A2A_STORE": "memory", "A2A_COMMIT_INTERVAL_SECONDS": ""}).commit_interval == 0.0
    assert Settings(store="dynamodb", commit_interval_seconds=0).commit_interval == 0.0
    with pytest.raises(ConfigError, match="A2A_COMMIT_INTERVAL_SECONDS: must be at least 0"):
        Settings.from_env({"A2A_STORE": "memory", "A2A_COMMIT_INTERVAL_SECONDS": "-1"})


def test_the_memory_store_commits_without_waiting() -> None:
    """A commit in memory costs no write unit, so by default nothing waits for the next one: each
    chunk is its own commit (the memory runtime streams at the reference server's pace)."""
    settings = Settings(store="memory", executor=EXECUTOR)
    assert settings.commit_interval_seconds is None
    assert settings.commit_interval == 0.0


def test_a_status_and_the_answer_that_follows_it_are_one_commit() -> None:
    # Given the demo agent, which answers "hello" with WORKING, one artifact and COMPLETED, and a
    # commit interval (as on DynamoDB)
    store, queue = CommitLog(), RecordingQueue()
    settings = Settings(
        store="memory", executor="a2a_serverless.execution.demo:DemoAgentExecutor", commit_interval_seconds=0.05
    )
    runtime = build_runtime(settings, store=store, queue=queue)
    task_id = submit_message(send_request("hello"), CTX, runtime).task.id
    store.commits.clear()

    # When its run is processed
    process_work_item(runtime, queue.items[-1])

    # Then its three events were one commit (besides the claim, which carries none)
    assert [n for n in store.commits if n] == [3], store.commits
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
