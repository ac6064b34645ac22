"""The a2a-sdk 1.x client against an A2A agent: the interop scenarios of ``driver_v03.py``, same names.

Imported by ``tests/e2e/test_interop_matrix.py`` (``await run(base_url, binding, webhook)``), or run
on its own with the project's interpreter::

    .venv/bin/python tests/e2e/interop/driver_v1.py --base-url http://127.0.0.1:PORT \\
        --binding JSONRPC|HTTP+JSON --webhook http://127.0.0.1:HOOKPORT/path

The card the agent serves lists 1.0 and 0.3 interfaces for each binding; ``ClientFactory`` picks
the 1.0 one, and the client sends ``A2A-Version: 1.0`` (the factory sets it on the httpx client).
Each scenario checks outcomes and the binding that carried it: every request is recorded, and a
scenario fails if one went elsewhere than ``POST /`` (JSON-RPC) or to ``/`` or ``/v1/...``
(HTTP+JSON: 1.0's paths have no ``/v1`` prefix), or lacked ``A2A-Version: 1.0``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf.json_format import MessageToDict

SCENARIO_SECONDS = 45.0
COMPLETED = TaskState.TASK_STATE_COMPLETED
CANCELED = TaskState.TASK_STATE_CANCELED
TERMINAL = {COMPLETED, CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED}
RUNNING = {TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING}
V1 = "1.0"


class CheckFailed(AssertionError):
    pass


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def user_message(text: str, **fields: Any) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)], **fields)


def artifact_texts(task: Task) -> list[str]:
    return [p.text for a in task.artifacts for p in a.parts if p.text]


def name(state: Any) -> str:
    return str(TaskState.Name(state))


def dump(message: Any) -> dict[str, Any]:
    return dict(MessageToDict(message))


class Driver:
    def __init__(self, base_url: str, binding: str, webhook: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.binding = binding
        self.webhook = webhook
        self.requests: list[dict[str, Any]] = []
        self.tasks: dict[str, Task] = {}
        self.scenarios: list[dict[str, Any]] = []
        self.http = httpx.AsyncClient(timeout=60.0, event_hooks={"request": [self._record]})
        self.card = AgentCard()
        self.transport = ""
        self.clients: list[Client] = []
        self.extra_config = ""

    # -- plumbing ---------------------------------------------------------------------------------

    async def _record(self, request: httpx.Request) -> None:
        entry: dict[str, Any] = {
            "method": request.method,
            "path": request.url.path,
            "a2a-version": request.headers.get("a2a-version"),
        }
        if request.method == "POST" and request.url.path == "/":
            try:
                entry["rpc"] = json.loads(request.content)["method"]
            except (ValueError, KeyError, TypeError, httpx.RequestNotRead):
                entry["rpc"] = None
        self.requests.append(entry)

    async def connect(self) -> None:
        self.card = await A2ACardResolver(self.http, self.base_url).get_agent_card()
        self.plain = self.client(streaming=False)
        self.streaming = self.client(streaming=True)
        self.transport = type(self.plain._transport).__name__  # type: ignore[attr-defined]

    def client(self, streaming: bool) -> Client:
        config = ClientConfig(supported_protocol_bindings=[self.binding], streaming=streaming, httpx_client=self.http)
        client = ClientFactory(config).create(self.card)
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        await self.http.aclose()

    def binding_violations(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        bad = [c for c in calls if c["a2a-version"] != V1]
        if self.binding == "JSONRPC":
            bad += [c for c in calls if (c["method"], c["path"]) != ("POST", "/")]
        else:
            bad += [c for c in calls if c["path"] == "/" or c["path"].startswith("/v1/")]
        return bad

    def _summary(self, calls: list[dict[str, Any]]) -> str:
        seen: list[str] = []
        for c in calls:
            if "rpc" in c:
                label = f"POST / {c['rpc']}"
            else:
                label = f"{c['method']} " + re.sub(r"/tasks/[^/:]+", "/tasks/{id}", c["path"])
                label = re.sub(r"/pushNotificationConfigs/[^/]+$", "/pushNotificationConfigs/{configId}", label)
            if label not in seen:
                seen.append(label)
        return ", ".join(seen)

    async def scenario(self, name: str, body: Callable[[], Awaitable[str]], needs: tuple[str, ...] = ()) -> None:
        missing = [n for n in needs if not any(s["name"] == n and s["ok"] for s in self.scenarios)]
        if missing:
            self.scenarios.append({"name": name, "ok": False, "via": "client", "detail": f"skipped: {missing} failed"})
            return
        start = len(self.requests)
        began = time.monotonic()
        try:
            detail = await asyncio.wait_for(body(), SCENARIO_SECONDS)
            calls = [c for c in self.requests[start:] if c["path"] != "/.well-known/agent-card.json"]
            bad = self.binding_violations(calls)
            expect(not bad, f"requests off the {self.binding} 1.0 binding: {bad}")
            ok = True
            detail = f"{detail} [{self._summary(calls)}]" if calls else detail
        except Exception as error:  # every failure is reported, the other scenarios still run
            ok = False
            detail = f"{type(error).__name__}: {error}"
            if not isinstance(error, CheckFailed):
                detail += " | " + "".join(traceback.format_exception(error)[-3:]).strip().replace("\n", " | ")
        self.scenarios.append(
            {"name": name, "ok": ok, "via": "client", "detail": detail, "seconds": round(time.monotonic() - began, 2)}
        )

    # -- helpers ----------------------------------------------------------------------------------

    async def send(self, request: SendMessageRequest) -> Task:
        events = [e async for e in self.plain.send_message(request)]
        expect(len(events) == 1 and events[0].HasField("task"), f"expected one Task, got {events}")
        return events[0].task

    async def get(self, task_id: str) -> Task:
        return await self.plain.get_task(GetTaskRequest(id=task_id))

    async def wait_for(self, task_id: str, states: set[Any], within: float = 25.0) -> Task:
        deadline = time.monotonic() + within
        while True:
            task = await self.get(task_id)
            if task.status.state in states:
                return task
            expect(time.monotonic() < deadline, f"task {task_id} still {name(task.status.state)} after {within}s")
            await asyncio.sleep(0.1)

    def hook(self, suffix: str) -> str:
        expect(self.webhook, "no --webhook given")
        return f"{self.webhook}/{suffix}"

    # -- scenarios --------------------------------------------------------------------------------

    async def push_inline(self) -> str:
        url = self.hook("inline")
        config = SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=url, token="tok-v1-inline")
        )
        task = await self.send(SendMessageRequest(message=user_message("hello push"), configuration=config))
        expect(task.status.state == COMPLETED, f"state {name(task.status.state)}")
        expect(artifact_texts(task) == ["Echo: hello push"], f"artifacts {artifact_texts(task)}")
        self.tasks["push_inline"] = task
        return f"task {task.id} completed; inline config -> {url}"

    async def card_discovery(self) -> str:
        interfaces = {(i.protocol_binding, i.protocol_version) for i in self.card.supported_interfaces}
        expect((self.binding, V1) in interfaces, f"supportedInterfaces {interfaces}")
        wanted = {"JSONRPC": "JsonRpcTransport", "HTTP+JSON": "RestTransport"}[self.binding]
        expect(self.transport == wanted, f"client picked {self.transport}, wanted {wanted}")
        expect(self.card.capabilities.streaming and self.card.capabilities.push_notifications, "capabilities")
        versions = sorted(v for b, v in interfaces if b == self.binding)
        url = self.plain._transport.url  # type: ignore[attr-defined]
        return f"{self.binding} interfaces {versions}; client picked the 1.0 {self.transport} at {url}"

    async def send_blocking(self) -> str:
        context_id = f"interop-v1-{uuid.uuid4()}"
        task = await self.send(SendMessageRequest(message=user_message("hello interop", context_id=context_id)))
        expect(task.status.state == COMPLETED, f"state {name(task.status.state)}")
        expect(task.context_id == context_id, f"contextId {task.context_id} != {context_id}")
        expect(artifact_texts(task) == ["Echo: hello interop"], f"artifacts {artifact_texts(task)}")
        self.tasks["send_blocking"] = task
        return f"task {task.id} {name(task.status.state)}, artifact 'Echo: hello interop'"

    async def send_non_blocking(self) -> str:
        config = SendMessageConfiguration(return_immediately=True)
        task = await self.send(SendMessageRequest(message=user_message("sleep 1"), configuration=config))
        expect(task.status.state in RUNNING, f"returnImmediately send returned {name(task.status.state)}")
        returned = name(task.status.state)
        done = await self.wait_for(task.id, TERMINAL)
        expect(done.status.state == COMPLETED, f"ended {name(done.status.state)}")
        expect(artifact_texts(done) == ["slept 1s"], f"artifacts {artifact_texts(done)}")
        return f"returned {returned}, then get saw COMPLETED with 'slept 1s'"

    async def get_task(self) -> str:
        sent = self.tasks["send_blocking"]
        got = await self.get(sent.id)
        expect(got.id == sent.id and got.context_id == sent.context_id, f"ids {got.id}/{got.context_id}")
        expect(got.status.state == COMPLETED, f"state {name(got.status.state)}")
        expect(artifact_texts(got) == artifact_texts(sent), f"artifacts {artifact_texts(got)}")
        users = [m for m in got.history if m.role == Role.ROLE_USER]
        expect(users and [p.text for p in users[0].parts] == ["hello interop"], f"history {got.history}")
        return f"task {got.id}: COMPLETED, same artifact, history starts with the user message"

    async def list_tasks(self) -> str:
        sent = self.tasks["send_blocking"]
        listed = await self.plain.list_tasks(ListTasksRequest(context_id=sent.context_id, include_artifacts=True))
        expect([t.id for t in listed.tasks] == [sent.id], f"listed {[t.id for t in listed.tasks]}")
        expect(artifact_texts(listed.tasks[0]) == ["Echo: hello interop"], "artifacts")
        return f"context {sent.context_id} lists exactly the sent task"

    async def stream(self) -> str:
        events: list[StreamResponse] = [
            e async for e in self.streaming.send_message(SendMessageRequest(message=user_message("hello stream")))
        ]
        kinds = [str(e.WhichOneof("payload")) for e in events]
        expect(kinds and kinds[0] == "task", f"events {kinds}")
        task_id = events[0].task.id
        for event in events[1:]:
            update = event.status_update if event.HasField("status_update") else event.artifact_update
            expect(update.task_id == task_id, f"update of another task: {event}")
        expect(events[-1].HasField("status_update"), f"last event {kinds[-1]}")
        expect(events[-1].status_update.status.state == COMPLETED, f"last {events[-1]}")
        echoed = [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts]
        expect(echoed == ["Echo: hello stream"], f"artifact updates {echoed}")
        got = await self.get(task_id)
        expect(got.status.state == COMPLETED, f"get after the stream: {name(got.status.state)}")
        self.tasks["stream"] = got
        return f"events {kinds}; final COMPLETED, artifact 'Echo: hello stream'"

    async def cancel(self) -> str:
        config = SendMessageConfiguration(return_immediately=True)
        task = await self.send(SendMessageRequest(message=user_message("sleep 20"), configuration=config))
        expect(task.status.state in RUNNING, f"returnImmediately send returned {name(task.status.state)}")
        canceled = await self.plain.cancel_task(CancelTaskRequest(id=task.id))
        expect(canceled.id == task.id, f"cancel answered for {canceled.id}")
        answered = name(canceled.status.state)
        if canceled.status.state != CANCELED:  # the worker may acknowledge asynchronously
            canceled = await self.wait_for(task.id, TERMINAL)
        expect(canceled.status.state == CANCELED, f"ended {name(canceled.status.state)}")
        try:
            again = await self.plain.cancel_task(CancelTaskRequest(id=task.id))
        except TaskNotCancelableError as error:
            refused = type(error).__name__
        else:
            raise CheckFailed(f"a second cancel of a canceled task succeeded: {name(again.status.state)}")
        final = await self.get(task.id)
        expect(final.status.state == CANCELED, f"get after cancel: {name(final.status.state)}")
        self.tasks["cancel"] = final
        return f"cancel answered {answered}, task CANCELED; second cancel refused ({refused})"

    async def resubscribe(self) -> str:
        config = SendMessageConfiguration(return_immediately=True)
        task = await self.send(SendMessageRequest(message=user_message("sleep 2"), configuration=config))
        expect(task.status.state in RUNNING, f"returnImmediately send returned {name(task.status.state)}")
        events = [e async for e in self.streaming.subscribe(SubscribeToTaskRequest(id=task.id))]
        kinds = [str(e.WhichOneof("payload")) for e in events]
        expect(events, "subscribe yielded nothing")
        expect(events[-1].HasField("status_update"), f"events {kinds}")
        expect(events[-1].status_update.status.state == COMPLETED, f"last {events[-1]}")
        slept = [p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts]
        snapshot = [t for e in events if e.HasField("task") for t in artifact_texts(e.task)]
        expect(slept + snapshot == ["slept 2s"], f"artifacts {slept} + {snapshot}")
        return f"SubscribeToTask: {len(events)} events {kinds}; stream ended at COMPLETED"

    async def push_set(self) -> str:
        task_id = self.tasks["send_blocking"].id
        url = self.hook("crud")
        named = await self.plain.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task_id, id="cfg-a", url=url, token="tok-a")
        )
        expect((named.task_id, named.id, named.url, named.token) == (task_id, "cfg-a", url, "tok-a"), f"{named}")
        unnamed = await self.plain.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task_id, url=url)
        )
        expect(unnamed.id and unnamed.id != "cfg-a", f"id-less config got id {unnamed.id!r}")
        self.extra_config = unnamed.id
        return f"config 'cfg-a' created as given; an id-less config got id {unnamed.id!r}"

    async def push_get(self) -> str:
        task_id = self.tasks["send_blocking"].id
        got = await self.plain.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="cfg-a")
        )
        expect((got.task_id, got.id, got.url, got.token) == (task_id, "cfg-a", self.hook("crud"), "tok-a"), f"{got}")
        other = await self.plain.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id=self.extra_config)
        )
        expect(other.id == self.extra_config, f"get of config {self.extra_config!r} answered {other}")
        return "both configs read back (url, token, id)"

    async def push_list(self) -> str:
        task_id = self.tasks["send_blocking"].id
        listed = await self.plain.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        ids = sorted(c.id for c in listed.configs)
        expect(ids == sorted(["cfg-a", self.extra_config]), f"listed {ids}")
        return "lists both configs"

    async def push_delete(self) -> str:
        task_id = self.tasks["send_blocking"].id
        await self.plain.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="cfg-a")
        )
        try:
            await self.plain.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task_id, id="cfg-a")
            )
        except TaskNotFoundError as error:
            gone = type(error).__name__
        else:
            raise CheckFailed("the deleted config can still be read")
        request = ListTaskPushNotificationConfigsRequest(task_id=task_id)
        left = [c.id for c in (await self.plain.list_task_push_notification_configs(request)).configs]
        expect(left == [self.extra_config], f"listed after delete: {left}")
        await self.plain.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=self.extra_config)
        )
        left = [c.id for c in (await self.plain.list_task_push_notification_configs(request)).configs]
        expect(left == [], f"listed after deleting both: {left}")
        return f"deleted; get of the deleted config refused ({gone}); list shrinks to []"

    async def run(self) -> dict[str, Any]:
        await self.scenario("push_inline", self.push_inline)
        await self.scenario("card", self.card_discovery)
        await self.scenario("send_blocking", self.send_blocking)
        await self.scenario("send_non_blocking", self.send_non_blocking)
        await self.scenario("get", self.get_task, needs=("send_blocking",))
        await self.scenario("list", self.list_tasks, needs=("send_blocking",))
        await self.scenario("stream", self.stream)
        await self.scenario("cancel", self.cancel)
        await self.scenario("resubscribe", self.resubscribe)
        await self.scenario("push_set", self.push_set, needs=("send_blocking",))
        await self.scenario("push_get", self.push_get, needs=("push_set",))
        await self.scenario("push_list", self.push_list, needs=("push_set",))
        await self.scenario("push_delete", self.push_delete, needs=("push_set",))
        return {
            "client": f"a2a-sdk {version('a2a-sdk')}",
            "binding": self.binding,
            "transport": self.transport,
            "scenarios": self.scenarios,
            "tasks": {key: dump(task) for key, task in self.tasks.items()},
            "requests": self.requests,
        }


async def run(base_url: str, binding: str, webhook: str | None) -> dict[str, Any]:
    """Every scenario with the 1.x client over ``binding``; the same document as driver_v03.py."""
    driver = Driver(base_url, binding, webhook)
    try:
        await driver.connect()
        return await driver.run()
    finally:
        await driver.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--binding", required=True, choices=["JSONRPC", "HTTP+JSON"])
    parser.add_argument("--webhook", help="base URL for push configs (scenario paths are appended)")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args.base_url, args.binding, args.webhook)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
