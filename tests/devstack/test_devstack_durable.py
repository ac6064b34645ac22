"""The local stack in durable mode (``A2A_EXECUTION_MODE=durable``, ``dev --execution-mode durable``):
its settings, and the API's app with the durable worker on the local runner against the template's
table in moto (the whole stack in processes: tests/e2e/test_durable_e2e.py)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from a2a_serverless.config import Settings
from a2a_serverless.devstack import cli, stack
from a2a_serverless.devstack._environment import LocalEnvironment, apply_environment
from a2a_serverless.devstack._template import FunctionEnvironment
from a2a_serverless.devstack.durable import (
    STATUS_PATH,
    DurableLimits,
    LocalDurableWorker,
    durable_function_arn,
    durable_gateway_app,
    durable_limits,
)
from a2a_serverless.devstack.resources import LocalResources

ARN = durable_function_arn("a2a-local", "us-east-1")
V1 = {"A2A-Version": "1.0"}


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
    for key, value in {
        "A2A_STORE": "dynamodb",
        "A2A_TABLE_NAME": resources.tables["TasksTable"],
        "A2A_EXECUTION_MODE": "durable",
        "A2A_DURABLE_FUNCTION": ARN,
        "A2A_AUTH_MODE": "none",
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
