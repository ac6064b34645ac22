"""Interop matrix on the real local stack: the a2a-sdk 0.3.x and 1.x clients and the JavaScript
client ``@a2a-js/sdk`` (in its A2A 1.0 and 0.3 modes), over JSON-RPC and REST.

Each cell (client x binding) runs the same scenarios (``tests/e2e/interop``): send blocking and not,
get, list (1.0 only), stream, cancel, resubscribe/subscribe, push config set/get/list/delete, and a
send with an inline push config whose notifications arrive at a webhook receiver on 127.0.0.1. The
0.3 client is ``a2a-sdk==0.3.26`` in ``.venv-a2a03`` (``make a2a03``; ``make test`` makes it), run
as a subprocess (``interop/driver_v03.py``); the 1.x client is the one in ``.venv``, in-process
(``interop/driver_v1.py``); the JS client is ``@a2a-js/sdk`` 1.3.0, pinned by
``interop/js/package-lock.json`` and installed into ``interop/js/node_modules`` (``make a2a-js``;
``make test`` makes it), run with node as a subprocess (``interop/driver_js.mjs``), once with its
1.0 transports (``js-1.0``) and once with its v0.3 compatibility transports (``js-0.3``). Here, on
top of the drivers' own checks:

* push delivery: a 0.3 client's config receives bare 0.3 Tasks (``"kind": "task"``, kebab-case
  states; they validate as the 0.3 ``Task`` model of ``a2a.compat.v0_3.types``) with its
  ``X-A2A-Notification-Token``; a 1.x client's config receives v1 ``StreamResponse`` payloads;
* cross-version reads: tasks created by one client generation are read (and a multi-turn task
  continued) by the other, with the same ids, states and artifacts; the JS client's 0.3 mode reads
  and continues the 1.x client's tasks, and its 1.0 mode reads what its 0.3 mode created and finished.

The results of every cell are written as JSON (``$A2A_INTEROP_MATRIX_JSON``, else
``interop-matrix.json`` in pytest's base temp dir); ``interop/matrix_table.py`` renders the README's
table from it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from a2a.compat.v0_3 import types as v03
from a2a.types import Role, SendMessageRequest, StreamResponse, Task, TaskState
from e2e_stack import REPO, running_stack
from google.protobuf.json_format import ParseDict
from interop import driver_v1

if TYPE_CHECKING:
    from conftest import ReceivedRequest, WebhookReceiver  # tests/conftest.py

pytestmark = pytest.mark.e2e

DRIVER_V03 = Path(__file__).parent / "interop" / "driver_v03.py"
PYTHON_V03 = Path(os.environ.get("A2A03_PYTHON") or REPO / ".venv-a2a03" / "bin" / "python")
DRIVER_JS = Path(__file__).parent / "interop" / "driver_js.mjs"
NODE = os.environ.get("A2A_NODE") or shutil.which("node")
DRIVER_SECONDS = 240
# Loopback webhooks (the local stack allows private addresses), and a short retry budget.
SETTINGS = {
    "A2A_PUSH_MAX_ATTEMPTS": "3",
    "A2A_PUSH_BACKOFF_BASE_SECONDS": "1",
    "A2A_PUSH_BACKOFF_MAX_SECONDS": "1",
}
CLIENTS = [
    pytest.param("0.3", id="v03"),
    pytest.param("1.x", id="v1"),
    pytest.param("js-0.3", id="js-0.3"),
    pytest.param("js-1.0", id="js-1.0"),
]
# Each client's label in webhook paths, and which push shape its configs receive.
LABELS = {"0.3": "v03", "1.x": "v1", "js-0.3": "js03", "js-1.0": "js10"}
V03_CLIENTS = {"0.3", "js-0.3"}
BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]
V03_STATES = {s.value for s in v03.TaskState}
V1_STATES = set(TaskState.keys())


def v03_texts(parts: list[v03.Part] | None) -> list[str]:
    return [p.root.text for p in parts or [] if isinstance(p.root, v03.TextPart)]


@dataclass
class Cell:
    client: str
    binding: str
    sdk: str = ""
    transport: str = ""
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self, name: str, check: Callable[[], str], via: str = "test") -> None:
        """Run one of this file's checks as a scenario of the cell (a failure is recorded, not raised)."""
        try:
            self.scenarios[name] = {"ok": True, "via": via, "detail": check()}
        except AssertionError as error:
            self.scenarios[name] = {"ok": False, "via": via, "detail": f"{type(error).__name__}: {error}"}

    def failures(self) -> str:
        return "\n".join(f"  {n}: {s['detail']}" for n, s in self.scenarios.items() if s["ok"] is False)


@pytest.fixture(scope="module")
def interop_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_stack(tmp_path_factory.mktemp("interop-stack"), SETTINGS) as (base_url, _):
        yield base_url


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], Cell]]:
    cells: dict[tuple[str, str], Cell] = {}
    yield cells
    out = Path(os.environ.get("A2A_INTEROP_MATRIX_JSON") or tmp_path_factory.getbasetemp() / "interop-matrix.json")
    document = {
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "cells": [
            {"client": c.client, "binding": c.binding, "sdk": c.sdk, "transport": c.transport, "scenarios": c.scenarios}
            for c in cells.values()
        ],
    }
    out.write_text(json.dumps(document, indent=1) + "\n")
    print(f"\ninterop matrix: {out}")


def cell_of(matrix: dict[tuple[str, str], Cell], client: str, binding: str) -> Cell:
    return matrix.setdefault((client, binding), Cell(client, binding))


def run_v03(base_url: str, binding: str, *args: str) -> dict[str, Any]:
    """The 0.3 driver in its own interpreter; its JSON document."""
    if not PYTHON_V03.exists():
        pytest.fail(f"{PYTHON_V03} is missing: `make a2a03` creates it (`make test` does too), or set A2A03_PYTHON")
    command = [str(PYTHON_V03), str(DRIVER_V03), "--base-url", base_url, "--binding", binding, *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=DRIVER_SECONDS, check=False)
    try:
        document: dict[str, Any] = json.loads(result.stdout)
    except ValueError:
        pytest.fail(f"driver_v03 exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    if "fatal" in document:  # the driver could not even start (no card it can read, ...)
        document["fatal"] += f"\nstderr:\n{result.stderr}" if result.stderr else ""
    else:
        assert result.returncode == 0, result.stderr
    return document


def run_js(base_url: str, binding: str, protocol: str, *args: str) -> dict[str, Any]:
    """The JS driver under node; its JSON document."""
    if NODE is None:
        pytest.fail("node is not on PATH: the JS cells need node >= 20 and `make a2a-js` (or set A2A_NODE)")
    command = [NODE, str(DRIVER_JS), "--base-url", base_url, "--binding", binding, "--protocol", protocol, *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=DRIVER_SECONDS, check=False)
    try:
        document: dict[str, Any] = json.loads(result.stdout)
    except ValueError:
        pytest.fail(f"driver_js exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    if "fatal" in document:  # not installed (`make a2a-js`), no card it can read, ...
        document["fatal"] += f"\nstderr:\n{result.stderr}" if result.stderr else ""
    else:
        assert result.returncode == 0, result.stderr
    return document


# -- push delivery ---------------------------------------------------------------------------------


def check_v03_push(receiver: WebhookReceiver, path: str, task_id: str) -> Callable[[], str]:
    def completed(requests: list[ReceivedRequest]) -> bool:
        return any(
            r.path == path and r.status < 300 and r.json().get("status", {}).get("state") == "completed"
            for r in requests
        )

    def check() -> str:
        receiver.wait_for(completed, timeout=30)
        received = receiver.accepted(path)
        for request in received:
            body = request.json()
            assert request.headers.get("x-a2a-notification-token") == "tok-v03-inline", request.headers
            assert body.get("kind") == "task", f"not a bare 0.3 Task: {body}"
            assert "TASK_STATE_" not in request.body.decode(), f"a v1 state in a 0.3 notification: {body}"
            task = v03.Task.model_validate(body)
            assert task.id == task_id, task.id
            assert task.status.state.value in V03_STATES
        last = v03.Task.model_validate(received[-1].json())
        assert last.status.state == v03.TaskState.completed, last.status
        echoed = [t for a in last.artifacts or [] for t in v03_texts(a.parts)]
        assert echoed == ["Echo: hello push"], echoed
        states = [r.json()["status"]["state"] for r in received]
        kinds = {r.headers.get("content-type", "") for r in received}
        return f"{len(received)} bare 0.3 Tasks {states}, X-A2A-Notification-Token, content-type {sorted(kinds)}"

    return check


def check_v1_push(receiver: WebhookReceiver, path: str, task_id: str) -> Callable[[], str]:
    def completed(requests: list[ReceivedRequest]) -> bool:
        return any(
            r.path == path
            and r.status < 300
            and r.json().get("statusUpdate", {}).get("status", {}).get("state") == "TASK_STATE_COMPLETED"
            for r in requests
        )

    def check() -> str:
        receiver.wait_for(completed, timeout=30)
        received = receiver.accepted(path)
        events = []
        for request in received:
            assert request.headers.get("x-a2a-notification-token") == "tok-v1-inline", request.headers
            assert "kind" not in request.json(), f"a 0.3 payload in a v1 notification: {request.json()}"
            events.append(ParseDict(request.json(), StreamResponse()))
        kinds = [str(e.WhichOneof("payload")) for e in events]
        assert kinds[0] == "task", kinds
        assert events[0].task.id == task_id, events[0]
        assert kinds[-1] == "status_update", kinds
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        echoed = [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts]
        assert echoed == ["Echo: hello push"], echoed
        return f"{len(events)} v1 StreamResponses {kinds}, X-A2A-Notification-Token"

    return check


# -- the matrix ------------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("client", CLIENTS)
async def test_interop_cell(
    interop_stack: str,
    matrix: dict[tuple[str, str], Cell],
    webhook_receiver: WebhookReceiver,
    client: str,
    binding: str,
) -> None:
    cell = cell_of(matrix, client, binding)
    label = f"{LABELS[client]}-{binding.lower().replace('+', '-')}"
    hook = f"{webhook_receiver.url}/{label}"

    # Every scenario through the client's SDK
    if client == "0.3":
        document = await asyncio.to_thread(run_v03, interop_stack, binding, "--webhook", hook)
    elif client.startswith("js-"):
        protocol = client.removeprefix("js-")
        document = await asyncio.to_thread(run_js, interop_stack, binding, protocol, "--webhook", hook)
    else:
        document = await driver_v1.run(interop_stack, binding, hook)
    if "fatal" in document:
        cell.sdk = "@a2a-js/sdk" if client.startswith("js-") else f"a2a-sdk {client}"
        cell.scenarios["card"] = {"ok": False, "via": "client", "detail": f"fatal: {document['fatal']}"}
        pytest.fail(f"{client} client over {binding}: {document['fatal']}")
    cell.sdk, cell.transport = document["client"], document["transport"]
    for scenario in document["scenarios"]:
        cell.scenarios[scenario["name"]] = {k: scenario[k] for k in ("ok", "via", "detail")}

    # and the inline push config's notifications, in the shape of the client's version
    inline = document["tasks"].get("push_inline")
    if inline is None:
        cell.scenarios["push_delivery"] = {"ok": False, "via": "test", "detail": "no task: push_inline failed"}
    else:
        check = check_v03_push if client in V03_CLIENTS else check_v1_push
        cell.record("push_delivery", check(webhook_receiver, f"/{label}/inline", inline["id"]))

    assert not cell.failures(), f"{client} client over {binding}:\n{cell.failures()}"
    expected_na = {"list"} if client in V03_CLIENTS else set()
    assert {n for n, s in cell.scenarios.items() if s["ok"] is None} == expected_na


async def tasks_to_share(v1: driver_v1.Driver) -> tuple[Any, Any]:
    """Two tasks of the 1.x client for another generation to read: one completed, one waiting for input."""
    done = await v1.send(SendMessageRequest(message=driver_v1.user_message("cross from 1.x")))
    asked = await v1.send(SendMessageRequest(message=driver_v1.user_message("ask me")))
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, asked
    return done, asked


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_tasks_are_shared_across_client_versions(
    interop_stack: str, matrix: dict[tuple[str, str], Cell], binding: str
) -> None:
    v1_cell, v03_cell = cell_of(matrix, "1.x", binding), cell_of(matrix, "0.3", binding)
    v1 = driver_v1.Driver(interop_stack, binding, None)
    try:
        await v1.connect()
        # Given tasks created by the 1.x client: one completed, one waiting for input
        done, asked = await tasks_to_share(v1)

        # When the 0.3 client reads both, answers the question, and creates a task of its own
        document = await asyncio.to_thread(
            run_v03,
            interop_stack,
            binding,
            *("--read", done.id, "--read", asked.id, "--answer", f"{asked.id}=Ann", "--create", "cross from 0.3"),
        )
        if "fatal" in document:
            for cell in (v03_cell, v1_cell):
                cell.scenarios["cross_read"] = {"ok": False, "via": "test", "detail": f"fatal: {document['fatal']}"}
            pytest.fail(f"driver_v03: {document['fatal']}")

        # Then the 0.3 client saw the 1.x tasks as 0.3 Tasks with the same content
        def v03_reads() -> str:
            assert document["binding_violations"] == [], document["binding_violations"]
            read = {k: v03.Task.model_validate(v) for k, v in document["read"].items()}
            got = read[done.id]
            assert (got.id, got.context_id, got.status.state) == (done.id, done.context_id, v03.TaskState.completed)
            assert [t for a in got.artifacts or [] for t in v03_texts(a.parts)] == ["Echo: cross from 1.x"]
            waiting = read[asked.id]
            assert waiting.status.state == v03.TaskState.input_required, waiting.status
            assert waiting.status.message is not None
            assert v03_texts(waiting.status.message.parts) == ["What is your name?"]
            answered = v03.Task.model_validate(document["answered"][asked.id])
            assert (answered.id, answered.context_id) == (asked.id, asked.context_id)
            assert answered.status.state == v03.TaskState.completed, answered.status
            return "reads the 1.x client's tasks (completed, input-required) and completes the multi-turn one"

        v03_cell.record("cross_read", v03_reads)

        # and the 1.x client reads what the 0.3 client created and finished
        created = v03.Task.model_validate(document["created"])
        start = len(v1.requests)
        mine = await v1.get(created.id)
        finished = await v1.get(asked.id)

        def v1_reads() -> str:
            assert not v1.binding_violations(v1.requests[start:]), v1.requests[start:]
            assert (mine.id, mine.context_id) == (created.id, created.context_id)
            assert mine.status.state == TaskState.TASK_STATE_COMPLETED, mine.status
            assert driver_v1.artifact_texts(mine) == ["Echo: cross from 0.3"]
            assert finished.status.state == TaskState.TASK_STATE_COMPLETED, finished.status
            assert driver_v1.artifact_texts(finished) == ["Nice to meet you, Ann!"]
            users = [p.text for m in finished.history if m.role == Role.ROLE_USER for p in m.parts]
            assert users == ["ask me", "Ann"], users
            return "reads the 0.3 client's task, and the multi-turn task the 0.3 client completed"

        v1_cell.record("cross_read", v1_reads)
    finally:
        await v1.close()

    results = {"0.3 client": v03_cell.scenarios["cross_read"], "1.x client": v1_cell.scenarios["cross_read"]}
    assert all(r["ok"] for r in results.values()), results


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_js_client_shares_tasks_across_versions(
    interop_stack: str, matrix: dict[tuple[str, str], Cell], binding: str
) -> None:
    js03_cell, js10_cell = cell_of(matrix, "js-0.3", binding), cell_of(matrix, "js-1.0", binding)
    v1 = driver_v1.Driver(interop_stack, binding, None)
    try:
        await v1.connect()
        # Given tasks created by the a2a-sdk 1.x client: one completed, one waiting for input
        done, asked = await tasks_to_share(v1)
    finally:
        await v1.close()

    # When the JS client in 0.3 mode reads both, answers the question, and creates a task of its own
    args = ("--read", done.id, "--read", asked.id, "--answer", f"{asked.id}=Ann", "--create", "cross from js 0.3")
    js03 = await asyncio.to_thread(run_js, interop_stack, binding, "0.3", *args)
    if "fatal" in js03:
        for cell in (js03_cell, js10_cell):
            cell.scenarios["cross_read"] = {"ok": False, "via": "test", "detail": f"fatal: {js03['fatal']}"}
        pytest.fail(f"driver_js --protocol 0.3: {js03['fatal']}")

    # Then it saw the 1.x tasks with the same content, and completed the multi-turn one
    def js03_reads() -> str:
        assert js03["binding_violations"] == [], js03["binding_violations"]
        read = {k: ParseDict(v, Task()) for k, v in js03["read"].items()}
        got = read[done.id]
        assert (got.id, got.context_id, got.status.state) == (done.id, done.context_id, TaskState.TASK_STATE_COMPLETED)
        assert driver_v1.artifact_texts(got) == ["Echo: cross from 1.x"]
        waiting = read[asked.id]
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, waiting.status
        assert [p.text for p in waiting.status.message.parts] == ["What is your name?"], waiting.status
        answered = ParseDict(js03["answered"][asked.id], Task())
        assert (answered.id, answered.context_id) == (asked.id, asked.context_id)
        assert answered.status.state == TaskState.TASK_STATE_COMPLETED, answered.status
        return "reads the 1.x client's tasks (completed, input-required) and completes the multi-turn one"

    js03_cell.record("cross_read", js03_reads)

    # and the JS client in 1.0 mode reads what its 0.3 mode created and finished
    created = ParseDict(js03["created"], Task())
    js10 = await asyncio.to_thread(run_js, interop_stack, binding, "1.0", "--read", created.id, "--read", asked.id)

    def js10_reads() -> str:
        assert "fatal" not in js10, js10.get("fatal")
        assert js10["binding_violations"] == [], js10["binding_violations"]
        mine = ParseDict(js10["read"][created.id], Task())
        assert (mine.id, mine.context_id) == (created.id, created.context_id)
        assert mine.status.state == TaskState.TASK_STATE_COMPLETED, mine.status
        assert driver_v1.artifact_texts(mine) == ["Echo: cross from js 0.3"]
        finished = ParseDict(js10["read"][asked.id], Task())
        assert finished.status.state == TaskState.TASK_STATE_COMPLETED, finished.status
        assert driver_v1.artifact_texts(finished) == ["Nice to meet you, Ann!"]
        users = [p.text for m in finished.history if m.role == Role.ROLE_USER for p in m.parts]
        assert users == ["ask me", "Ann"], users
        return "reads the task its 0.3 mode created, and the 1.x client's multi-turn task its 0.3 mode completed"

    js10_cell.record("cross_read", js10_reads)

    results = {"js 0.3 mode": js03_cell.scenarios["cross_read"], "js 1.0 mode": js10_cell.scenarios["cross_read"]}
    assert all(r["ok"] for r in results.values()), results
