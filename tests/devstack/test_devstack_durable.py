"""The local stack in durable mode (``A2A_EXECUTION_MODE=durable``, ``dev --execution-mode durable``):
its settings, and the API's app with the durable worker on the local runner against the template's
table in moto (the whole stack in processes: tests/e2e/test_durable_e2e.py)."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from aws_durable_execution_sdk_python.execution import InvocationStatus

from a2a_serverless.config import Settings
from a2a_serverless_dev import cli, stack
from a2a_serverless_dev._environment import LocalEnvironment, apply_environment
from a2a_serverless_dev._template import FunctionEnvironment
from a2a_serverless_dev.durable import (
    STATUS_PATH,
    DurableLimits,
    LocalDurableWorker,
    durable_function_arn,
    durable_gateway_app,
    durable_limits,
)
from a2a_serverless_dev.resources import LocalResources

ARN = durable_function_arn("a2a-local", "us-east-1")
V1 = {"A2A-Version": "1.0"}
STEPS_DEMO = "a2a_serverless.execution.steps_demo:StepsDemoExecutor"


def _environment(execution_mode: str | None = None) -> LocalEnvironment:
    return LocalEnvironment(
        endpoint_url="http://127.0.0.1:5555",
        template_env=FunctionEnvironment(values={"A2A_TABLE_NAME": "t"}, resource_keys=frozenset({"A2A_TABLE_NAME"})),
        public_url="http://127.0.0.1:8000",
        execution_mode=execution_mode,
        durable_function=ARN,
    )


def test_queue_mode_sets_nothing_of_durable_mode() -> None:
    env: dict[str, str] = {}
    apply_environment(_environment(), env)
    assert "A2A_EXECUTION_MODE" not in env
    assert "A2A_DURABLE_FUNCTION" not in env


def test_durable_mode_from_the_shell_names_the_local_durable_worker() -> None:
    env = {"A2A_EXECUTION_MODE": "durable"}
    apply_environment(_environment(), env)
    assert (
        env["A2A_DURABLE_FUNCTION"]
        == ARN
        == ("arn:aws:lambda:us-east-1:123456789012:function:a2a-local-DurableWorkerFunction:live")
    )
    # so every function's runtime builds in durable mode
    assert Settings.from_env(env).execution_mode == "durable"


def test_the_flag_wins_over_the_shell_and_the_shells_function_wins() -> None:
    env = {"A2A_EXECUTION_MODE": "queue", "A2A_DURABLE_FUNCTION": "mine"}
    apply_environment(_environment("durable"), env)
    assert env["A2A_EXECUTION_MODE"] == "durable"
    assert env["A2A_DURABLE_FUNCTION"] == "mine"


def test_dev_takes_the_execution_mode_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(sys, "path", list(sys.path))  # main() adds the working directory
    monkeypatch.setattr(cli, "_check_executor", lambda *_: None)
    monkeypatch.setattr(cli, "_configure_logging", lambda *_: None)
    monkeypatch.setattr(stack, "run", lambda options, **_: seen.append(options) or 0)

    assert cli.main(["dev", "--execution-mode", "durable"]) == 0
    assert cli.main(["dev"]) == 0
    assert [o.execution_mode for o in seen] == ["durable", None]
    with pytest.raises(SystemExit):
        cli.main(["dev", "--execution-mode", "steps"])


def test_the_durable_workers_limits_come_from_the_template(template: dict[str, Any]) -> None:
    assert durable_limits(template) == DurableLimits(invocation_timeout=900, execution_timeout=2_592_000)
    assert durable_limits({"Resources": {}}) == DurableLimits()


@pytest.fixture
def durable_env(
    resources: LocalResources, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[httpx.AsyncClient, LocalDurableWorker]]:
    yield from _durable_env(resources, monkeypatch)


def _durable_env(
    resources: LocalResources, monkeypatch: pytest.MonkeyPatch, **environ: str
) -> Iterator[tuple[httpx.AsyncClient, LocalDurableWorker]]:
    """The API's app in durable mode over the stack's table in moto, with its durable worker;
    ``environ``: more of the stack's environment (``A2A_EXECUTOR``)."""
    for key, value in {
        "A2A_STORE": "dynamodb",
        "A2A_TABLE_NAME": resources.tables["TasksTable"],
        "A2A_EXECUTION_MODE": "durable",
        "A2A_DURABLE_FUNCTION": ARN,
        "A2A_AUTH_MODE": "none",
        **environ,
    }.items():
        monkeypatch.setenv(key, value)
    app, worker = durable_gateway_app(Settings.from_env(), limits=DurableLimits(60, 600))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://stack", headers=V1)
    try:
        yield client, worker
    finally:
        worker.close()


async def _until(client: httpx.AsyncClient, task_id: str, state: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20  # a hang guard
    while True:
        task: dict[str, Any] = (await client.get(f"/tasks/{task_id}")).json()
        if task["status"]["state"] == state:
            return task
        assert time.monotonic() < deadline, task
        await asyncio.sleep(0.02)


def _send(text: str, task_id: str = "") -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": f"m-{text}-{time.monotonic_ns()}",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    return {"message": message, "configuration": {"returnImmediately": True}}


@pytest.mark.asyncio
async def test_the_apis_tasks_run_as_durable_executions_against_the_stacks_table(
    durable_env: tuple[httpx.AsyncClient, LocalDurableWorker], resources: LocalResources
) -> None:
    client, worker = durable_env
    # The durable worker's runtime: the same settings, the stack's table
    assert worker.runtime.settings.table_name == resources.tables["TasksTable"]

    asked = (await client.post("/message:send", json=_send("ask me"))).json()["task"]
    await _until(client, asked["id"], "TASK_STATE_INPUT_REQUIRED")
    assert worker.runs.execution_arn(asked["id"]) is not None
    deadline = time.monotonic() + 10  # a hang guard
    while True:
        status = (await client.get(STATUS_PATH)).json()
        if status["invocationsRunning"] == 0 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.02)
    assert status == {
        "executionMode": "durable",
        "function": "DurableWorkerFunction",
        "invocationsRunning": 0,
        "invocations": status["invocations"],
        "executions": 1,
    }
    assert status["invocations"] >= 1

    await client.post("/message:send", json=_send("Ann", asked["id"]))
    done = await _until(client, asked["id"], "TASK_STATE_COMPLETED")
    assert [p["text"] for a in done["artifacts"] for p in a["parts"]] == ["Nice to meet you, Ann!"]
    assert (await client.get(STATUS_PATH)).json()["executions"] == 1  # the same execution went on
    # Everything else is the gateway app's
    assert (await client.get("/.well-known/agent-card.json")).status_code == 200
    assert (await client.post(STATUS_PATH)).status_code != 200


@pytest.mark.asyncio
async def test_a_cancel_during_a_nap_ends_the_run_without_a_traceback(
    resources: LocalResources, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The steps demo's nap is a callback wait (no invocation runs); CancelTask fails the callback
    caplog.set_level(logging.INFO)
    for client, worker in _durable_env(resources, monkeypatch, A2A_EXECUTOR=STEPS_DEMO):
        task_id = (await client.post("/message:send", json=_send("plan 3 nap 3600"))).json()["task"]["id"]
        deadline = time.monotonic() + 20  # a hang guard
        while True:  # napping: the first step done, no invocation running
            task = (await client.get(f"/tasks/{task_id}")).json()
            if task.get("artifacts") and worker.running == 0:
                break
            assert time.monotonic() < deadline, task
            await asyncio.sleep(0.02)

        await client.post(f"/tasks/{task_id}:cancel")

        canceled = await _until(client, task_id, "TASK_STATE_CANCELED")
        arn = worker.runs.execution_arn(task_id)
        assert arn is not None
        result = await asyncio.to_thread(worker.runs.runner.wait_for_result, arn, timeout=20)
        assert result.status is InvocationStatus.SUCCEEDED
    # The run ended at the nap: the next step never started, and nothing was logged as a failure
    assert [p["text"] for a in canceled["artifacts"] for p in a["parts"]] == ["step 1 of 3 done\n"]
    assert [op.name for op in result.get_context("turn-1").child_operations] == ["claim", "step-1", "nap", "nap-hold"]
    lines = [r for r in caplog.records if r.name.startswith(("a2a_serverless", "aws_durable_execution_sdk_python"))]
    assert [r.getMessage() for r in lines if r.exc_info or r.levelno >= logging.WARNING] == []
