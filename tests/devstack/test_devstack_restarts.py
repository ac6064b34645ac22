"""A function process of the local stack that dies is started again, fresh, as Lambda starts a new
environment for the next invocation, and the stack keeps serving; the run it had in flight is
failed by the sweeper once its lease lapses, locally as on AWS (docs/local-stack.md). The lease is
made short (``A2A_RUN_LEASE_SECONDS=6``: it renews every 2 s); the sweeper keeps the template's
schedule (every minute), so the wait is bounded by a deadline, never measured."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from typing import Any

import boto3
import httpx
import pytest

from a2a_serverless.transitions import LEASE_LOST_TEXT
from a2a_serverless_dev._moto import running_moto
from a2a_serverless_dev._supervisor import restart_delay
from testkit.aws import fake_credentials
from testkit.devstack import DevStack

from .test_devstack_timeouts import _send, _settled

V1 = {"A2A-Version": "1.0"}
WORKER = '_processes function {"function_id":"WorkerFunction"'


def _worker_pids(stack: DevStack) -> list[int]:
    children = subprocess.run(
        ["pgrep", "-a", "-P", str(stack.process.pid)], capture_output=True, text=True, check=False
    ).stdout.splitlines()
    return [int(child.split()[0]) for child in children if WORKER in child]


def _task(stack: DevStack, task_id: str) -> dict[str, Any]:
    response = httpx.get(f"{stack.base}/tasks/{task_id}", headers=V1, timeout=30)
    assert response.status_code == 200, response.text
    task: dict[str, Any] = response.json()
    return task


def _until(what: str, check: Any, stack: DevStack, timeout: float) -> Any:
    """``check()`` once truthy; ``timeout`` is a hang guard, not an expectation."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what}:\n" + "\n".join(stack.lines[-40:])
        time.sleep(0.2)
    return found


def test_a_killed_worker_process_is_restarted_and_the_sweeper_fails_its_cut_off_run() -> None:
    stack = DevStack.start(env={**os.environ, "A2A_RUN_LEASE_SECONDS": "6"})
    try:
        # Given a run in flight on the worker process
        sleeper = _send(stack.base, "sleep 30", "m-sleep")
        _until("the run working", lambda: _task(stack, sleeper)["status"]["state"] == "TASK_STATE_WORKING", stack, 60)
        (killed,) = _worker_pids(stack)

        # When that process is killed (kill -9)
        os.kill(killed, signal.SIGKILL)

        # Then the stack says so in one line and starts a fresh worker process, which gets ready
        said = re.compile(r"WorkerFunction's process died \(killed by SIGKILL\): a fresh one starts now")
        _until("the restart said", lambda: [line for line in stack.lines if said.search(line)], stack, 30)
        (fresh,) = _until("a fresh worker process", lambda: [p for p in _worker_pids(stack) if p != killed], stack, 30)
        ready = "function WorkerFunction ready"
        _until("the fresh worker ready", lambda: sum(ready in line for line in stack.lines) == 2, stack, 60)
        assert stack.process.poll() is None

        # And the stack still serves: a new message is run, by the fresh worker, to completion
        done = _settled(stack.base, _send(stack.base, "hello", "m-hello"))
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
        assert done["artifacts"][0]["parts"] == [{"text": "Echo: hello"}]
        assert _worker_pids(stack) == [fresh]

        # And the cut-off run ends FAILED, by the sweeper, once its lease lapsed (the sweeper runs
        # every minute: the deadline bounds two of its ticks)
        ended = _settled(stack.base, sleeper, timeout=180)
        assert ended["status"]["state"] == "TASK_STATE_FAILED", ended
        assert ended["status"]["message"]["parts"] == [{"text": LEASE_LOST_TEXT}]
        # (the sweeper's process logs it after its write, so the line may reach the stack's output
        # a moment after the task reads FAILED)
        swept = "a run stopped renewing its lease; task failed"
        _until("the sweeper's line", lambda: any(swept in line for line in stack.lines), stack, 60)
    finally:
        code = stack.stop(timeout=40)
    assert code == 0, "\n".join(stack.lines[-40:])


def test_ended_waits_take_nothing_for_a_process_that_is_gone() -> None:
    # Given a long poll waiting on moto's server (a function process's, about to be gone)
    with fake_credentials(), running_moto() as moto:
        sqs = boto3.client("sqs", endpoint_url=moto.endpoint)
        url = sqs.create_queue(
            QueueName="work.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
        )["QueueUrl"]
        answered: list[list[Any]] = []
        waiting = threading.Thread(
            target=lambda: answered.append(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20).get("Messages", []))
        )
        waiting.start()

        # When the stack ends the waits in progress (the process died; again until this one has
        # started waiting: its 20 s are the bound), then a message is sent
        deadline = time.monotonic() + 10
        while waiting.is_alive():
            assert time.monotonic() < deadline, "the poll was not ended"
            moto.end_waits()
            waiting.join(0.2)
        sqs.send_message(QueueUrl=url, MessageBody="work", MessageGroupId="t1")

        # Then the ended poll answered empty, took nothing, and the next receive gets the message
        assert answered == [[]]
        (message,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5)["Messages"]
        assert message["Body"] == "work"


@pytest.mark.parametrize(
    ("crashes", "delay"),
    [
        pytest.param(0, 0.0, id="it-had-run-a-while"),
        pytest.param(1, 0.0, id="first-quick-death"),
        pytest.param(2, 1.0, id="second"),
        pytest.param(3, 2.0, id="third"),
        pytest.param(6, 16.0, id="sixth"),
        pytest.param(7, 30.0, id="capped"),
        pytest.param(50, 30.0, id="long-loop"),
    ],
)
def test_a_process_that_keeps_dying_waits_longer_each_time(crashes: int, delay: float) -> None:
    assert restart_delay(crashes) == delay
