"""The local stack's log labels (``task=``, ``req=``) name the invocation that wrote each line.

The stack runs as many invocations of a function as its event source allows (the worker's
``MaximumConcurrency``: 20) as threads of one process. The worker's own entry point
(``a2a_serverless.functions.worker``) is polled off the template's queue by the stack's pollers, on
moto's server with the stack's fixes; an agent logs through the kit's logger from its event loop
and from a thread (``asyncio.to_thread``), naming in an extra key the task it works on; every line
it wrote, as the console shows it, must carry that task and the request id of the invocation that
ran it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part
from a2a_serverless.wiring import reset_runtime
from a2a_serverless_dev._environment import FAKE_CREDENTIALS, REGION
from a2a_serverless_dev._functions import EventSources, aws_client, import_handler, start_pollers
from a2a_serverless_dev._logs import format_line
from a2a_serverless_dev._moto import running_moto
from a2a_serverless_dev._template import sqs_event_sources
from a2a_serverless_dev.pollers import Handler
from a2a_serverless_dev.resources import create_resources

TASKS = 40
STEPS = 3
_agent_log = logging.getLogger("a2a_serverless.tests.log_labels")


class ChattyAgent(AgentExecutor):
    """Logs a few lines per task, on its event loop and off it, with pauses that let the other
    invocations' lines come in between."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        for step in range(STEPS):
            _agent_log.info("step %d", step, extra={"writer": context.task_id})
            await asyncio.sleep(0.02)
        await asyncio.to_thread(_agent_log.info, "off the loop", extra={"writer": context.task_id})
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.add_artifact([Part(text="done")], name="answer")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


@contextlib.contextmanager
def _functions_output() -> Iterator[io.StringIO]:
    """What the kit's loggers write, through the functions' own formatter (Powertools' JSON)."""
    from a2a_serverless.lambda_._observability import logger

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logger.registered_formatter)
    core = logging.getLogger("a2a_serverless")
    core.addHandler(handler)
    try:
        yield out
    finally:
        core.removeHandler(handler)


class Invocations:
    """The worker's handler as the template names it, noting which task each invocation (by its
    request id) was given, and how many ran at once."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.tasks: dict[str, str] = {}
        self.running = 0
        self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, event: Any, context: Any) -> Any:
        (record,) = event["Records"]
        with self.lock:
            self.tasks[context.aws_request_id] = json.loads(record["body"])["task_id"]
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            return self.handler(event, context)
        finally:
            with self.lock:
                self.running -= 1


def test_every_line_of_concurrent_invocations_names_its_own_task_and_request(
    monkeypatch: pytest.MonkeyPatch, template: dict[str, Any]
) -> None:
    with running_moto() as moto:
        for key, value in {**FAKE_CREDENTIALS, "AWS_DEFAULT_REGION": REGION, "AWS_ENDPOINT_URL": moto.endpoint}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("A2A_TRACING", raising=False)
        resources = create_resources(
            aws_client("dynamodb", moto.endpoint), aws_client("sqs", moto.endpoint), prefix="labels", template=template
        )
        for key, value in {
            "A2A_STORE": "dynamodb",
            "A2A_TABLE_NAME": resources.tables["TasksTable"],
            "A2A_QUEUE_URL": resources.queue_urls["WorkQueue"],
            "A2A_AUTH_MODE": "none",
            "A2A_EXECUTOR": f"{__name__}:ChattyAgent",
        }.items():
            monkeypatch.setenv(key, value)
        reset_runtime()
        try:
            _run(moto.drain, resources, moto.endpoint, template)
        finally:
            reset_runtime()


def _run(drain: Any, resources: Any, endpoint: str, template: dict[str, Any]) -> None:
    from a2a_serverless.transport.app import create_app

    # Given TASKS tasks queued through the API's app
    with TestClient(create_app(), headers={"A2A-Version": "1.0"}) as client:
        task_ids = []
        for n in range(TASKS):
            message = {"messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"text": f"task {n}"}]}
            sent = client.post("/message:send", json={"message": message, "configuration": {"returnImmediately": True}})
            assert sent.status_code == 200, sent.text
            task_ids.append(sent.json()["task"]["id"])

        # When the stack's pollers run the worker on them, as many at once as the template allows
        (source,) = [s for s in sqs_event_sources(template) if s.function_id == "WorkerFunction"]
        assert (source.max_concurrency or 0) > 1
        invocations = Invocations(import_handler(source.handler))
        with _functions_output() as out, contextlib.ExitStack() as stack:
            start_pollers(
                stack,
                EventSources([source], [], []),
                resources,
                endpoint,
                prefix="labels",
                workers=None,
                resolve=lambda path: invocations,
                on_stop=drain,
            )
            deadline = time.monotonic() + 120  # a hang guard
            while not all(_state(client, t) == "TASK_STATE_COMPLETED" for t in task_ids):
                assert time.monotonic() < deadline, [_state(client, t) for t in task_ids]
                time.sleep(0.2)

    # Then invocations overlapped, and each line the agent wrote carries its own task and request
    assert invocations.peak > 1
    written = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    agent_lines = [line for line in written if "writer" in line]
    assert len(agent_lines) >= TASKS * (STEPS + 1)
    assert {line["writer"] for line in agent_lines} == set(task_ids)
    for line in agent_lines:
        assert line["task_id"] == line["writer"], line
        assert invocations.tasks[line["function_request_id"]] == line["writer"], line
        shown = format_line("WorkerFunction", json.dumps(line), "console")
        assert shown is not None
        assert f"task={line['writer'][:8]} req={line['function_request_id'][:8]}" in shown
    # And every labelled line of the worker's (the kit's too) names a task its request was given
    for line in written:
        if line.get("function_request_id") and line.get("task_id"):
            assert invocations.tasks[line["function_request_id"]] == line["task_id"], line


def _state(client: TestClient, task_id: str) -> str:
    return str(client.get(f"/tasks/{task_id}").json()["status"]["state"])
