"""A worker process killed mid-run (SIGKILL after k events) loses nothing and strands nothing:
the sweeper (once the run's lease lapsed) or the redelivery fails the task with a clear message,
and its event log has no gap and no duplicate. The worker runs in a real subprocess against a
moto server (DynamoDB over HTTP)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from a2a_serverless.adapters.dynamodb.store import DynamoDBTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.sweeper import sweep
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import Part, TaskState
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import WorkItem
from a2a_serverless.transitions import INTERRUPTED_TEXT, LEASE_LOST_TEXT
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev._moto import moto_server
from a2a_serverless_dev.resources import create_resources
from testkit.calls import CTX, SCOPE, send_request

CHUNKS = 12

WORKER_SCRIPT = """
import sys
from a2a_serverless.adapters.dynamodb.store import DynamoDBTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.ports import WorkItem
from a2a_serverless.wiring import build_runtime

settings = Settings(store="memory", executor="test_worker_crash:ChunkingExecutor")
runtime = build_runtime(settings, store=DynamoDBTaskStore(sys.argv[1]), queue=object())
process_work_item(runtime, WorkItem.from_json(sys.argv[2]))
"""


class ChunkingExecutor(AgentExecutor):
    """Streams an artifact in chunks, slowly enough to be killed in the middle: after chunk
    ``STALL_AFTER`` it stops for a minute, so the run cannot end before the test kills it, however
    slowly the test notices the chunks (the kill comes once at most 9 chunks are stored)."""

    STALL_AFTER = 9

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for i in range(CHUNKS):
            await updater.add_artifact([Part(text=f"chunk {i}")], artifact_id="out", append=i > 0)
            await asyncio.sleep(0.05 if i < self.STALL_AFTER else 60)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class NoQueue:
    def enqueue(self, item: WorkItem) -> None:
        self.item = item


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    with pytest.MonkeyPatch.context() as mp, moto_server() as endpoint:
        for key, value in env.items():
            mp.setenv(key, value)
        mp.setenv("AWS_ENDPOINT_URL", endpoint)
        res = create_resources(boto3.client("dynamodb"), boto3.client("sqs"), prefix="crash")
        yield {"endpoint": endpoint, "table": res.tables["TasksTable"], "env": {**env, "AWS_ENDPOINT_URL": endpoint}}


@pytest.mark.parametrize("kill_after", [2, 5, 9], ids=lambda k: f"after-{k}-events")
@pytest.mark.parametrize("noticed_by", ["redelivery", "sweeper"])
def test_a_killed_worker_leaves_a_gap_free_log_and_a_failed_task(
    moto: dict[str, Any], kill_after: int, noticed_by: str
) -> None:
    # Given a submitted task whose work item a worker subprocess starts processing
    store = DynamoDBTaskStore(moto["table"])
    queue = NoQueue()
    settings = Settings(store="memory", executor=f"{__name__}:ChunkingExecutor")
    runtime = build_runtime(settings, store=store, queue=queue)
    task_id = submit_message(send_request("go", f"m-{noticed_by}-{kill_after}"), CTX, runtime).task.id
    # (the executor's module, and the testkit it imports)
    paths = os.pathsep.join(str(p) for p in (Path(__file__).parent, Path(__file__).parents[1]))
    env = {**os.environ, **moto["env"], "PYTHONPATH": paths}
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER_SCRIPT, moto["table"], queue.item.to_json()],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # When it is killed after k events of its run have been stored
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            record = store.get_task(SCOPE, task_id)
            assert record is not None
            if record.last_seq >= 1 + kill_after:
                break
            assert worker.poll() is None, worker.stderr.read().decode() if worker.stderr else ""
            time.sleep(0.01)
        os.kill(worker.pid, signal.SIGKILL)
    finally:
        worker.wait(timeout=10)
    killed_at = store.get_task(SCOPE, task_id)
    assert killed_at is not None
    assert killed_at.state is TaskState.TASK_STATE_WORKING
    assert killed_at.running_message_id == queue.item.message_id

    assert killed_at.lease_until > 0
    if noticed_by == "sweeper":
        # And the scheduled sweeper runs once the lease it stopped renewing has lapsed (within about
        # a minute on AWS; the sweeper is told the time here), long before SQS would redeliver
        assert sweep(runtime, now=killed_at.lease_until + 1) == 1
        expected = LEASE_LOST_TEXT
    else:
        # And SQS redelivers the item after the visibility timeout
        process_work_item(runtime, queue.item, receive_count=2)
        expected = INTERRUPTED_TEXT

    # Then the task failed with a clear message instead of staying WORKING
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    assert record.task.status.message.parts[0].text == expected
    assert (record.running_message_id, record.lease_until) == ("", 0)
    # And the log is gap-free, each chunk stored exactly once, the failure last
    events = store.read_events(SCOPE, task_id)
    assert [e.seq for e in events] == list(range(1, record.last_seq + 1))
    chunks = [e.event.artifact_update.artifact.parts[0].text for e in events if e.event.artifact_update]
    assert chunks == [f"chunk {i}" for i in range(len(chunks))]
    assert [[p.text for p in a.parts] for a in record.task.artifacts] == ([["".join(chunks)]] if chunks else [])
    assert events[-1].event.status_update is not None
    assert events[-1].event.status_update.status.state is TaskState.TASK_STATE_FAILED
