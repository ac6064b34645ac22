"""The local stack honours each function's ``Timeout`` from the template as Lambda would: a run
that reaches it is stopped and its task fails saying so, instead of being cut off unnoticed (or,
as before, being redelivered after a local 30 s visibility timeout while it still ran)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from a2a_serverless.transitions import OUT_OF_TIME_TEXT

from .test_devstack_stack import READY, Lines

STACK = Path(__file__).with_name("short_timeout_stack.py")
V1 = {"A2A-Version": "1.0"}


def _send(base: str, text: str, message_id: str) -> str:
    body = {
        "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": {"returnImmediately": True},
    }
    response = httpx.post(f"{base}/message:send", json=body, headers=V1, timeout=30)
    assert response.status_code == 200, response.text
    task_id: str = response.json()["task"]["id"]
    return task_id


def _settled(base: str, task_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task: dict[str, Any] = httpx.get(f"{base}/tasks/{task_id}", headers=V1, timeout=30).json()
        state = task["status"]["state"]
        if state in {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}:
            return task
        assert time.monotonic() < deadline, f"still {state}"
        time.sleep(0.2)


def test_a_run_past_the_workers_template_timeout_is_stopped_and_fails_saying_why() -> None:
    env = {**os.environ, "A2A_EXECUTOR": "a2a_serverless.execution.demo:DemoAgentExecutor"}
    process = subprocess.Popen(
        [sys.executable, str(STACK)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    try:
        out = Lines(process)
        base = out.wait_for(READY).removeprefix(READY).removesuffix("/.well-known/agent-card.json")

        # Given a worker with 4 s to run: a 1 s run completes, a 20 s one cannot
        quick = _send(base, "sleep 1", "m-quick")
        slow = _send(base, "sleep 20", "m-slow")

        # Then the quick one completed, and the slow one was stopped before the invocation's end and
        # failed with the reason, not left WORKING
        assert _settled(base, quick)["status"]["state"] == "TASK_STATE_COMPLETED"
        failed = _settled(base, slow)
        assert failed["status"]["state"] == "TASK_STATE_FAILED"
        assert failed["status"]["message"]["parts"][0]["text"] == OUT_OF_TIME_TEXT
        progress = [m["parts"][0]["text"] for m in failed.get("history", []) if m["role"] == "ROLE_AGENT"]
        assert progress, "the run worked for a while before it was stopped"
        assert all(not text.startswith("worked 20") for text in progress)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
