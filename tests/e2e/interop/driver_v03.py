"""The a2a-sdk 0.3.x client against an A2A agent: every interop scenario, one JSON document out.

Run by ``tests/e2e/test_interop_matrix.py`` with the interpreter of ``.venv-a2a03`` (``make a2a03``),
which holds ``a2a-sdk==0.3.26`` apart from the 1.x SDK of ``.venv``::

    .venv-a2a03/bin/python tests/e2e/interop/driver_v03.py --base-url http://127.0.0.1:PORT \\
        --binding JSONRPC|HTTP+JSON --webhook http://127.0.0.1:HOOKPORT/path

The client is the SDK's own: the card from ``A2ACardResolver``, a ``Client`` from ``ClientFactory``
with ``ClientConfig(supported_transports=[binding])``. Each scenario checks outcomes (states,
artifact texts, ids, what a later read sees) and which binding carried it: an httpx event hook
records every request, and a scenario fails if any of its requests went elsewhere than ``POST /``
(JSON-RPC) or ``/v1/...`` (HTTP+JSON), or carried an ``A2A-Version`` header (a 0.3 client sends
none). The 0.3.26 client has no list or delete of push configs: those two are built from the
SDK's own request types (JSON-RPC) or protobuf messages (HTTP+JSON) and sent with the same httpx
client; their results say ``via: raw``.

Output (stdout): ``{"client", "binding", "transport", "scenarios": [{name, ok, via, detail}],
"tasks": {scenario: task as 0.3 JSON}, "requests": [...]}``; ``ok`` is null where the scenario
does not exist in 0.3 (ListTasks). With ``--read ID`` (repeatable), ``--answer ID=TEXT`` and
``--create TEXT`` it only reads, continues or creates those tasks (the cross-version checks) and
prints ``{"read": {id: task}, "answered": {id: task}, "created": task, "requests": [...]}``.
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
from a2a.client.errors import A2AClientError, A2AClientHTTPError, A2AClientJSONRPCError
from a2a.grpc import a2a_pb2
from a2a.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigResponse,
    DeleteTaskPushNotificationConfigSuccessResponse,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    ListTaskPushNotificationConfigSuccessResponse,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a.utils import proto_utils
from google.protobuf import empty_pb2, json_format

SCENARIO_SECONDS = 45.0
TERMINAL = {TaskState.completed, TaskState.canceled, TaskState.failed, TaskState.rejected}
RUNNING = {TaskState.submitted, TaskState.working}
JSON_RPC_TASK_NOT_CANCELABLE = -32002
JSON_RPC_TASK_NOT_FOUND = -32001
# What the 0.3.26 REST client types an error by: the status alone (A2AClientHTTPError.status_code),
# as the reference 0.3 server sets it (a2a.utils.error_handlers.A2AErrorToHttpStatus).
HTTP_TASK_NOT_CANCELABLE = 409
HTTP_TASK_NOT_FOUND = 404
RAW = "raw (no client method in 0.3.26)"


class CheckFailed(AssertionError):
    pass


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def user_message(text: str, **fields: Any) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.user, parts=[Part(root=TextPart(text=text))], **fields)


def texts(parts: list[Part] | None) -> list[str]:
    return [p.root.text for p in parts or [] if isinstance(p.root, TextPart)]


def artifact_texts(task: Task) -> list[str]:
    return [t for a in task.artifacts or [] for t in texts(a.parts)]


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def state(task: Task) -> str:
    return str(task.status.state.value)


class Driver:
    def __init__(self, base_url: str, binding: str, webhook: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.binding = binding
        self.webhook = webhook
        self.requests: list[dict[str, Any]] = []
        self.tasks: dict[str, Task] = {}
        self.scenarios: list[dict[str, Any]] = []
        self.http = httpx.AsyncClient(timeout=60.0, event_hooks={"request": [self._record]})
        self.card: AgentCard
        self.plain: Client
        self.streaming: Client
        self.transport = ""

    # -- plumbing ---------------------------------------------------------------------------------

    async def _record(self, request: httpx.Request) -> None:
        entry: dict[str, Any] = {"method": request.method, "path": request.url.path}
        if request.headers.get("a2a-version") is not None:
            entry["a2a-version"] = request.headers["a2a-version"]
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
        self.transport = type(self.plain._transport).__name__

    def client(self, streaming: bool, **config: Any) -> Client:
        return ClientFactory(
            ClientConfig(streaming=streaming, supported_transports=[self.binding], httpx_client=self.http, **config)
        ).create(self.card)

    async def close(self) -> None:
        # The SDK's clients would close the shared httpx client: close it once, here.
        await self.http.aclose()

    def _binding_violations(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        bad = [c for c in calls if "a2a-version" in c]
        if self.binding == "JSONRPC":
            bad += [c for c in calls if (c["method"], c["path"]) != ("POST", "/")]
        else:
            bad += [c for c in calls if not c["path"].startswith("/v1/")]
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

    async def scenario(
        self, name: str, body: Callable[[], Awaitable[str]], via: str = "client", needs: tuple[str, ...] = ()
    ) -> None:
        missing = [n for n in needs if not any(s["name"] == n and s["ok"] for s in self.scenarios)]
        if missing:
            self.scenarios.append({"name": name, "ok": False, "via": via, "detail": f"skipped: {missing} failed"})
            return
        start = len(self.requests)
        began = time.monotonic()
        try:
            detail = await asyncio.wait_for(body(), SCENARIO_SECONDS)
            calls = [c for c in self.requests[start:] if c["path"] != "/.well-known/agent-card.json"]
            bad = self._binding_violations(calls)
            expect(not bad, f"requests off the {self.binding} binding: {bad}")
            ok = True
            detail = f"{detail} [{self._summary(calls)}]" if calls else detail
        except Exception as error:  # every failure is reported, the other scenarios still run
            ok = False
            detail = f"{type(error).__name__}: {error}"
            if not isinstance(error, CheckFailed):
                detail += " | " + "".join(traceback.format_exception(error)[-3:]).strip().replace("\n", " | ")
        self.scenarios.append(
            {"name": name, "ok": ok, "via": via, "detail": detail, "seconds": round(time.monotonic() - began, 2)}
        )

    # -- helpers ----------------------------------------------------------------------------------

    async def send(self, text: str, configuration: MessageSendConfiguration | None = None, **fields: Any) -> Task:
        events = [e async for e in self.plain.send_message(user_message(text, **fields), configuration=configuration)]
        expect(len(events) == 1, f"a non-streaming send yields one event, got {events}")
        event = events[0]
        expect(isinstance(event, tuple) and isinstance(event[0], Task), f"expected a Task, got {event!r}")
        assert isinstance(event, tuple)
        return event[0]

    async def get(self, task_id: str) -> Task:
        return await self.plain.get_task(TaskQueryParams(id=task_id))

    async def wait_for(self, task_id: str, states: set[TaskState], within: float = 25.0) -> Task:
        deadline = time.monotonic() + within
        while True:
            task = await self.get(task_id)
            if task.status.state in states:
                return task
            expect(time.monotonic() < deadline, f"task {task_id} still {state(task)} after {within}s")
            await asyncio.sleep(0.1)

    def hook(self, suffix: str) -> str:
        expect(self.webhook, "no --webhook given")
        return f"{self.webhook}/{suffix}"

    # -- scenarios --------------------------------------------------------------------------------

    async def push_inline(self) -> str:
        """SendMessage with an inline push config: the test checks what the webhook received."""
        config = PushNotificationConfig(url=self.hook("inline"), token="tok-v03-inline")
        # The SDK's way to send one: ClientConfig.push_notification_configs (a per-call
        # configuration with a push config trips a pydantic serializer warning in 0.3.26).
        client = self.client(streaming=False, push_notification_configs=[config])
        events = [e async for e in client.send_message(user_message("hello push"))]
        expect(len(events) == 1 and isinstance(events[0], tuple), f"expected one Task, got {events}")
        task = events[0][0]  # type: ignore[index]
        expect(task.status.state == TaskState.completed, f"state {state(task)}")
        expect(artifact_texts(task) == ["Echo: hello push"], f"artifacts {artifact_texts(task)}")
        self.tasks["push_inline"] = task
        return f"task {task.id} completed; inline config -> {config.url}"

    async def card_discovery(self) -> str:
        card = self.card
        expect(card.protocol_version == "0.3.0", f"protocolVersion {card.protocol_version!r}")
        expect(card.url == self.base_url + "/", f"url {card.url!r}")
        expect(card.preferred_transport == "JSONRPC", f"preferredTransport {card.preferred_transport!r}")
        interfaces = {(i.transport, i.url) for i in card.additional_interfaces or []}
        expect(("JSONRPC", self.base_url + "/") in interfaces, f"additionalInterfaces {interfaces}")
        expect(("HTTP+JSON", self.base_url) in interfaces, f"additionalInterfaces {interfaces}")
        expect(card.capabilities.streaming and card.capabilities.push_notifications, f"{card.capabilities}")
        wanted = {"JSONRPC": "JsonRpcTransport", "HTTP+JSON": "RestTransport"}[self.binding]
        expect(self.transport == wanted, f"client picked {self.transport}, wanted {wanted}")
        url = self.plain._transport.url
        return f"protocolVersion 0.3.0; client picked {self.transport} at {url}"

    async def send_blocking(self) -> str:
        context_id = f"interop-v03-{uuid.uuid4()}"
        task = await self.send("hello interop", MessageSendConfiguration(blocking=True), context_id=context_id)
        expect(task.kind == "task", f"kind {task.kind}")
        expect(task.status.state == TaskState.completed, f"state {state(task)}")
        expect(task.context_id == context_id, f"contextId {task.context_id} != {context_id}")
        expect(artifact_texts(task) == ["Echo: hello interop"], f"artifacts {artifact_texts(task)}")
        self.tasks["send_blocking"] = task
        return f"task {task.id} {state(task)}, artifact 'Echo: hello interop'"

    async def send_non_blocking(self) -> str:
        task = await self.send("sleep 1", MessageSendConfiguration(blocking=False))
        expect(task.status.state in RUNNING, f"non-blocking send returned {state(task)}")
        returned = state(task)
        done = await self.wait_for(task.id, TERMINAL)
        expect(done.status.state == TaskState.completed, f"ended {state(done)}")
        expect(artifact_texts(done) == ["slept 1s"], f"artifacts {artifact_texts(done)}")
        return f"returned {returned}, then get saw completed with 'slept 1s'"

    async def get_task(self) -> str:
        sent = self.tasks["send_blocking"]
        got = await self.get(sent.id)
        expect(got.id == sent.id and got.context_id == sent.context_id, f"ids {got.id}/{got.context_id}")
        expect(got.status.state == TaskState.completed, f"state {state(got)}")
        expect(artifact_texts(got) == artifact_texts(sent), f"artifacts {artifact_texts(got)}")
        users = [m for m in got.history or [] if m.role == Role.user]
        expect(users and texts(users[0].parts) == ["hello interop"], f"history {got.history}")
        return f"task {got.id}: completed, same artifact, history starts with the user message"

    async def stream(self) -> str:
        events = [e async for e in self.streaming.send_message(user_message("hello stream"))]
        expect(events, "no events")
        kinds: list[str] = []
        for event in events:
            expect(isinstance(event, tuple), f"streamed a Message: {event!r}")
            assert isinstance(event, tuple)
            task, update = event
            kinds.append("task" if update is None else update.kind)
            expect(update is None or update.task_id == task.id, f"update of another task: {update}")
        pairs = [e for e in events if isinstance(e, tuple)]
        task, last = pairs[-1]
        expect(isinstance(last, TaskStatusUpdateEvent) and last.final, f"last event {last!r}")
        expect(task.status.state == TaskState.completed, f"state {state(task)}")
        echoed = [t for _, u in pairs if isinstance(u, TaskArtifactUpdateEvent) for t in texts(u.artifact.parts)]
        expect(echoed == ["Echo: hello stream"], f"artifact updates {echoed}")
        got = await self.get(task.id)
        expect(got.status.state == TaskState.completed, f"get after the stream: {state(got)}")
        self.tasks["stream"] = got
        return f"events {kinds}; final completed, artifact 'Echo: hello stream'"

    async def cancel(self) -> str:
        task = await self.send("sleep 20", MessageSendConfiguration(blocking=False))
        expect(task.status.state in RUNNING, f"non-blocking send returned {state(task)}")
        canceled = await self.plain.cancel_task(TaskIdParams(id=task.id))
        expect(canceled.id == task.id, f"cancel answered for {canceled.id}")
        answered = state(canceled)
        if canceled.status.state != TaskState.canceled:  # the worker may acknowledge asynchronously
            canceled = await self.wait_for(task.id, TERMINAL)
        expect(canceled.status.state == TaskState.canceled, f"ended {state(canceled)}")
        try:
            again = await self.plain.cancel_task(TaskIdParams(id=task.id))
        except A2AClientJSONRPCError as error:
            code = error.error.code
            expect(code == JSON_RPC_TASK_NOT_CANCELABLE, f"second cancel: JSON-RPC error {error.error}")
            refused = f"JSON-RPC error {code}"
        except A2AClientHTTPError as error:
            # The reference 0.3 server's status for TaskNotCancelable: all this client types.
            expect(error.status_code == HTTP_TASK_NOT_CANCELABLE, f"second cancel: HTTP {error.status_code}")
            refused = f"HTTP {error.status_code}"
        else:
            raise CheckFailed(f"a second cancel of a canceled task succeeded: {state(again)}")
        final = await self.get(task.id)
        expect(final.status.state == TaskState.canceled, f"get after cancel: {state(final)}")
        self.tasks["cancel"] = final
        return f"cancel answered {answered}, task canceled; second cancel refused ({refused})"

    async def refused(self, call: Callable[[], Awaitable[Any]], code: int, status: int, what: str) -> str:
        """``call`` fails with the client's typed error for ``code``: A2AClientJSONRPCError with
        that code (JSON-RPC), A2AClientHTTPError with the reference server's ``status`` (HTTP+JSON)."""
        try:
            result = await call()
        except A2AClientJSONRPCError as error:
            expect(self.binding == "JSONRPC", f"{what}: a JSON-RPC error over {self.binding}")
            expect(error.error.code == code, f"{what}: JSON-RPC error {error.error}")
            return f"{what}: JSON-RPC error {code}"
        except A2AClientHTTPError as error:
            expect(self.binding == "HTTP+JSON", f"{what}: an HTTP error over {self.binding}: {error}")
            expect(error.status_code == status, f"{what}: HTTP {error.status_code} {error.message}")
            return f"{what}: HTTP {status}"
        raise CheckFailed(f"{what} succeeded: {result!r}")

    async def errors(self) -> str:
        """The errors the client types: an unknown task (get, cancel, push config get, streamed
        send continuing it) and a cancel of a completed task."""
        missing = f"no-such-task-{uuid.uuid4()}"
        seen = [
            await self.refused(lambda: self.get(missing), JSON_RPC_TASK_NOT_FOUND, HTTP_TASK_NOT_FOUND, "get"),
            await self.refused(
                lambda: self.plain.cancel_task(TaskIdParams(id=missing)),
                JSON_RPC_TASK_NOT_FOUND,
                HTTP_TASK_NOT_FOUND,
                "cancel",
            ),
            await self.refused(
                lambda: self.plain.get_task_callback(
                    GetTaskPushNotificationConfigParams(id=missing, push_notification_config_id="c")
                ),
                JSON_RPC_TASK_NOT_FOUND,
                HTTP_TASK_NOT_FOUND,
                "push config get",
            ),
        ]

        async def stream_into_missing() -> list[Any]:
            message = user_message("hello", task_id=missing)
            return [e async for e in self.streaming.send_message(message)]

        # Over JSON-RPC the 0.3 client types a streaming error only inside an event stream: the
        # server sends it as the stream's one event, as the reference 0.3 server does.
        seen.append(await self.refused(stream_into_missing, JSON_RPC_TASK_NOT_FOUND, HTTP_TASK_NOT_FOUND, "stream"))

        async def resubscribe_missing() -> list[Any]:
            return [e async for e in self.streaming.resubscribe(TaskIdParams(id=missing))]

        # (Over REST this client's resubscribe reads no status: any error is "Invalid SSE response".)
        if self.binding == "JSONRPC":
            seen.append(
                await self.refused(resubscribe_missing, JSON_RPC_TASK_NOT_FOUND, HTTP_TASK_NOT_FOUND, "resubscribe")
            )
        done = await self.send("hello errors", MessageSendConfiguration(blocking=True))
        expect(done.status.state == TaskState.completed, f"state {state(done)}")
        seen.append(
            await self.refused(
                lambda: self.plain.cancel_task(TaskIdParams(id=done.id)),
                JSON_RPC_TASK_NOT_CANCELABLE,
                HTTP_TASK_NOT_CANCELABLE,
                "cancel of a completed task",
            )
        )
        return "; ".join(seen)

    async def resubscribe(self) -> str:
        task = await self.send("sleep 2", MessageSendConfiguration(blocking=False))
        expect(task.status.state in RUNNING, f"non-blocking send returned {state(task)}")
        events = [e async for e in self.streaming.resubscribe(TaskIdParams(id=task.id))]
        expect(events, "resubscribe yielded nothing")
        kinds = ["task" if u is None else u.kind for _, u in events]
        expect(all(t.id == task.id for t, _ in events), "events of another task")
        final, last = events[-1]
        expect(isinstance(last, TaskStatusUpdateEvent) and last.final, f"last event {last!r}")
        expect(final.status.state == TaskState.completed, f"ended {state(final)}")
        slept = [t for _, u in events if isinstance(u, TaskArtifactUpdateEvent) for t in texts(u.artifact.parts)]
        expect(slept == ["slept 2s"] or artifact_texts(final) == ["slept 2s"], f"artifacts {slept}")
        return f"{len(events)} events {kinds}; stream ended at completed"

    async def push_set(self) -> str:
        task_id = self.tasks["send_blocking"].id
        url = self.hook("crud")
        named = await self.plain.set_task_callback(
            TaskPushNotificationConfig(
                task_id=task_id, push_notification_config=PushNotificationConfig(id="cfg-a", url=url, token="tok-a")
            )
        )
        expect(named.task_id == task_id, f"taskId {named.task_id}")
        cfg = named.push_notification_config
        expect((cfg.id, cfg.url, cfg.token) == ("cfg-a", url, "tok-a"), f"config {cfg}")
        unnamed = await self.plain.set_task_callback(
            TaskPushNotificationConfig(task_id=task_id, push_notification_config=PushNotificationConfig(url=url))
        )
        expect(
            unnamed.push_notification_config.id == task_id,
            f"id-less config got id {unnamed.push_notification_config.id!r}",
        )
        return "config 'cfg-a' set as given; an id-less config got the task id (0.3 semantics)"

    async def push_get(self) -> str:
        task_id = self.tasks["send_blocking"].id
        got = await self.plain.get_task_callback(
            GetTaskPushNotificationConfigParams(id=task_id, push_notification_config_id="cfg-a")
        )
        cfg = got.push_notification_config
        expect(got.task_id == task_id, f"taskId {got.task_id}")
        expect((cfg.id, cfg.url, cfg.token) == ("cfg-a", self.hook("crud"), "tok-a"), f"config {cfg}")
        default = await self.plain.get_task_callback(
            GetTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=task_id)
        )
        expect(
            default.push_notification_config.id == task_id,
            f"get of config {task_id!r} answered {default.push_notification_config}",
        )
        return "both configs read back (url, token, id)"

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        if self.binding == "JSONRPC":
            request = ListTaskPushNotificationConfigRequest(
                id=str(uuid.uuid4()), params=ListTaskPushNotificationConfigParams(id=task_id)
            )
            response = await self.http.post(self.card.url, json=dump(request))
            expect(response.status_code == 200, f"HTTP {response.status_code}: {response.text}")
            parsed = ListTaskPushNotificationConfigResponse.model_validate(response.json()).root
            expect(isinstance(parsed, ListTaskPushNotificationConfigSuccessResponse), f"{response.text}")
            assert isinstance(parsed, ListTaskPushNotificationConfigSuccessResponse)
            expect(parsed.id == request.id, f"response id {parsed.id} != {request.id}")
            return parsed.result
        response = await self.http.get(f"{self.base_url}/v1/tasks/{task_id}/pushNotificationConfigs")
        expect(response.status_code == 200, f"HTTP {response.status_code}: {response.text}")
        message = json_format.ParseDict(response.json(), a2a_pb2.ListTaskPushNotificationConfigResponse())
        return [proto_utils.FromProto.task_push_notification_config(c) for c in message.configs]

    async def delete_config(self, task_id: str, config_id: str) -> None:
        if self.binding == "JSONRPC":
            request = DeleteTaskPushNotificationConfigRequest(
                id=str(uuid.uuid4()),
                params=DeleteTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=config_id),
            )
            response = await self.http.post(self.card.url, json=dump(request))
            expect(response.status_code == 200, f"HTTP {response.status_code}: {response.text}")
            parsed = DeleteTaskPushNotificationConfigResponse.model_validate(response.json()).root
            expect(isinstance(parsed, DeleteTaskPushNotificationConfigSuccessResponse), f"{response.text}")
            assert isinstance(parsed, DeleteTaskPushNotificationConfigSuccessResponse)
            expect(parsed.id == request.id and parsed.result is None, f"{response.text}")
            return
        response = await self.http.delete(f"{self.base_url}/v1/tasks/{task_id}/pushNotificationConfigs/{config_id}")
        expect(response.status_code in {200, 204}, f"HTTP {response.status_code}: {response.text}")
        if response.content:
            json_format.ParseDict(response.json(), empty_pb2.Empty())

    async def push_list(self) -> str:
        task_id = self.tasks["send_blocking"].id
        configs = await self.list_configs(task_id)
        ids = sorted(c.push_notification_config.id or "" for c in configs)
        expect(ids == sorted(["cfg-a", task_id]), f"listed {ids}")
        expect(all(c.task_id == task_id for c in configs), f"taskIds {[c.task_id for c in configs]}")
        by_id = {c.push_notification_config.id: c.push_notification_config for c in configs}
        expect(by_id["cfg-a"].url == self.hook("crud") and by_id["cfg-a"].token == "tok-a", f"{by_id['cfg-a']}")
        return "lists both configs"

    async def push_delete(self) -> str:
        task_id = self.tasks["send_blocking"].id
        await self.delete_config(task_id, "cfg-a")
        try:
            await self.plain.get_task_callback(
                GetTaskPushNotificationConfigParams(id=task_id, push_notification_config_id="cfg-a")
            )
        except A2AClientJSONRPCError as error:
            gone = f"JSON-RPC error {error.error.code}"
        except A2AClientHTTPError as error:
            expect(400 <= error.status_code < 500, f"get after delete: HTTP {error.status_code}")
            gone = f"HTTP {error.status_code}"
        else:
            raise CheckFailed("the deleted config can still be read")
        left = [c.push_notification_config.id for c in await self.list_configs(task_id)]
        expect(left == [task_id], f"listed after delete: {left}")
        await self.delete_config(task_id, task_id)
        left = [c.push_notification_config.id for c in await self.list_configs(task_id)]
        expect(left == [], f"listed after deleting both: {left}")
        return f"deleted; get of the deleted config refused ({gone}); list shrinks to []"

    async def run(self) -> dict[str, Any]:
        await self.scenario("push_inline", self.push_inline)
        await self.scenario("card", self.card_discovery)
        await self.scenario("send_blocking", self.send_blocking)
        await self.scenario("send_non_blocking", self.send_non_blocking)
        await self.scenario("get", self.get_task, needs=("send_blocking",))
        self.scenarios.append({"name": "list", "ok": None, "via": "n/a", "detail": "no ListTasks in A2A 0.3"})
        await self.scenario("stream", self.stream)
        await self.scenario("cancel", self.cancel)
        await self.scenario("errors", self.errors)
        await self.scenario("resubscribe", self.resubscribe)
        await self.scenario("push_set", self.push_set, needs=("send_blocking",))
        await self.scenario("push_get", self.push_get, needs=("push_set",))
        await self.scenario("push_list", self.push_list, via=RAW, needs=("push_set",))
        await self.scenario("push_delete", self.push_delete, via=RAW, needs=("push_set",))
        return {
            "client": f"a2a-sdk {version('a2a-sdk')}",
            "binding": self.binding,
            "transport": self.transport,
            "scenarios": self.scenarios,
            "tasks": {name: dump(task) for name, task in self.tasks.items()},
            "requests": self.requests,
        }

    async def cross(self, read: list[str], answer: list[str], create: str | None) -> dict[str, Any]:
        """Read tasks another client created, continue them, create one for the other to read."""
        out: dict[str, Any] = {"client": f"a2a-sdk {version('a2a-sdk')}", "binding": self.binding, "read": {}}
        for task_id in read:
            out["read"][task_id] = dump(await self.get(task_id))
        out["answered"] = {}
        for item in answer:
            task_id, _, text = item.partition("=")
            task = await self.get(task_id)
            out["answered"][task_id] = dump(
                await self.send(
                    text, MessageSendConfiguration(blocking=True), task_id=task_id, context_id=task.context_id
                )
            )
        if create is not None:
            out["created"] = dump(await self.send(create, MessageSendConfiguration(blocking=True)))
        calls = [c for c in self.requests if c["path"] != "/.well-known/agent-card.json"]
        out["binding_violations"] = self._binding_violations(calls)
        out["requests"] = self.requests
        return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    driver = Driver(args.base_url, args.binding, args.webhook)
    try:
        await driver.connect()
        if args.read or args.answer or args.create is not None:
            return await driver.cross(args.read, args.answer, args.create)
        return await driver.run()
    finally:
        await driver.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--binding", required=True, choices=["JSONRPC", "HTTP+JSON"])
    parser.add_argument("--webhook", help="base URL for push configs (scenario paths are appended)")
    parser.add_argument("--read", action="append", default=[], metavar="TASK_ID")
    parser.add_argument("--answer", action="append", default=[], metavar="TASK_ID=TEXT")
    parser.add_argument("--create", metavar="TEXT")
    args = parser.parse_args(argv)
    try:
        result = asyncio.run(main_async(args))
    except (A2AClientError, httpx.HTTPError, OSError, ValueError) as error:
        print(json.dumps({"fatal": f"{type(error).__name__}: {error}"}))
        return 2
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
