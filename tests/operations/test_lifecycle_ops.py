"""Behaviour of every operation through the app, on both bindings, against a memory runtime.

The memory runtime's work queue runs the worker on threads, exactly as the SQS worker would run
it, so these tests cover the whole path: transport, operation, store, queue, worker, executor.
"""

from __future__ import annotations

import asyncio
import email.utils
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
import pytest
import pytest_asyncio

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import Part
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

V1 = {"A2A-Version": "1.0"}
HOOK = "https://example.com/hook"
BINDINGS = ["jsonrpc", "rest"]

TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}


class CountingExecutor(AgentExecutor):
    """Counts runs per messageId. "ask" asks for input; anything else completes with an artifact."""

    runs: ClassVar[Counter[str]] = Counter()
    lock: ClassVar[threading.Lock] = threading.Lock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        with self.lock:
            self.runs[context.message.message_id] += 1
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        await asyncio.sleep(0.05)  # widen the window for duplicate runs
        if context.get_user_input() == "ask":
            await updater.requires_input(updater.new_agent_message([Part(text="and?")]))
            return
        await updater.add_artifact([Part(text=f"ran {context.message.message_id}")], name="count")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


# The runtime imports the executor by path: name this module however pytest imported it.
COUNTING_EXECUTOR = f"{CountingExecutor.__module__}:{CountingExecutor.__qualname__}"


class ApiError(Exception):
    def __init__(self, reason: str, code: int, body: Any) -> None:
        super().__init__(f"{reason} ({code}): {body}")
        self.reason = reason
        self.code = code


def message(text: str, message_id: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def _query(params: dict[str, Any]) -> dict[str, str]:
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in params.items() if v is not None}


@dataclass
class Api:
    """The A2A operations over one binding; errors raise ``ApiError`` with the ErrorInfo reason."""

    http: httpx.AsyncClient
    binding: str
    runtime: Runtime

    async def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        response = await self.http.post(
            "/", json={"jsonrpc": "2.0", "id": method, "method": method, "params": params}, headers=V1
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["id"] == method
        if "error" in body:
            raise ApiError(body["error"]["data"][0]["reason"], body["error"]["code"], body)
        return body["result"]

    async def _rest(self, verb: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        if verb in ("GET", "DELETE"):
            response = await self.http.request(verb, path, params=_query(payload or {}), headers=V1)
        else:
            response = await self.http.request(verb, path, json=payload or {}, headers=V1)
        if response.status_code != 200:
            error = response.json()["error"]
            assert error["code"] == response.status_code
            raise ApiError(error["details"][0]["reason"], response.status_code, error)
        assert response.headers["content-type"].startswith("application/a2a+json")
        return response.json()

    async def send(self, msg: dict[str, Any], **configuration: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"message": msg}
        if configuration:
            params["configuration"] = configuration
        if self.binding == "jsonrpc":
            result = await self._rpc("SendMessage", params)
        else:
            result = await self._rest("POST", "/message:send", params)
        assert set(result) == {"task"}, result
        task: dict[str, Any] = result["task"]
        return task

    async def get(self, task_id: str, history_length: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {} if history_length is None else {"historyLength": history_length}
        if self.binding == "jsonrpc":
            result: dict[str, Any] = await self._rpc("GetTask", {"id": task_id, **params})
            return result
        return await self._rest("GET", f"/tasks/{task_id}", params)  # type: ignore[no-any-return]

    async def list(self, **query: Any) -> dict[str, Any]:
        if self.binding == "jsonrpc":
            result: dict[str, Any] = await self._rpc("ListTasks", query)
        else:
            result = await self._rest("GET", "/tasks", query)
        assert {"tasks", "nextPageToken", "pageSize", "totalSize"} <= set(result), result
        return result

    async def cancel(self, task_id: str) -> dict[str, Any]:
        if self.binding == "jsonrpc":
            result: dict[str, Any] = await self._rpc("CancelTask", {"id": task_id})
            return result
        return await self._rest("POST", f"/tasks/{task_id}:cancel")  # type: ignore[no-any-return]

    async def push_create(self, task_id: str, config: dict[str, Any]) -> dict[str, Any]:
        if self.binding == "jsonrpc":
            result: dict[str, Any] = await self._rpc("CreateTaskPushNotificationConfig", {"taskId": task_id, **config})
            return result
        return await self._rest("POST", f"/tasks/{task_id}/pushNotificationConfigs", config)  # type: ignore[no-any-return]

    async def push_get(self, task_id: str, config_id: str) -> dict[str, Any]:
        if self.binding == "jsonrpc":
            result: dict[str, Any] = await self._rpc(
                "GetTaskPushNotificationConfig", {"taskId": task_id, "id": config_id}
            )
            return result
        return await self._rest("GET", f"/tasks/{task_id}/pushNotificationConfigs/{config_id}")  # type: ignore[no-any-return]

    async def push_list(self, task_id: str) -> list[dict[str, Any]]:
        if self.binding == "jsonrpc":
            result = await self._rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
        else:
            result = await self._rest("GET", f"/tasks/{task_id}/pushNotificationConfigs")
        configs: list[dict[str, Any]] = result.get("configs", [])
        return configs

    async def push_delete(self, task_id: str, config_id: str) -> Any:
        if self.binding == "jsonrpc":
            return await self._rpc("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": config_id})
        return await self._rest("DELETE", f"/tasks/{task_id}/pushNotificationConfigs/{config_id}")

    async def wait_for(self, task_id: str, states: set[str], within: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + within
        while True:
            task = await self.get(task_id)
            if task["status"]["state"] in states:
                return task
            assert time.monotonic() < deadline, f"task {task_id} still {task['status']['state']}"
            await asyncio.sleep(0.02)


@asynccontextmanager
async def make_api(binding: str, **overrides: Any) -> AsyncIterator[Api]:
    settings = Settings(**{"store": "memory", "poll_interval_seconds": 0.005, **overrides})
    runtime = build_runtime(settings, store=MemoryTaskStore())
    transport = httpx.ASGITransport(app=create_app(runtime))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield Api(http=http, binding=binding, runtime=runtime)
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest_asyncio.fixture(params=BINDINGS)
async def api(request: pytest.FixtureRequest) -> AsyncIterator[Api]:
    async with make_api(request.param) as value:
        yield value


@pytest_asyncio.fixture(params=BINDINGS)
async def counting(request: pytest.FixtureRequest) -> AsyncIterator[Api]:
    with CountingExecutor.lock:
        CountingExecutor.runs.clear()
    async with make_api(request.param, executor=COUNTING_EXECUTOR) as value:
        yield value


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for p in parts]


# --------------------------------------------------------------------------- SendMessage / GetTask


@pytest.mark.asyncio
async def test_send_blocks_until_completed_with_artifact(api: Api) -> None:
    task = await api.send(message("hello there", "m-1"))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["id"]
    assert task["contextId"]
    assert task["status"]["timestamp"].endswith("Z")
    [artifact] = task["artifacts"]
    assert artifact["artifactId"]
    assert artifact["name"] == "echo"
    assert texts(artifact["parts"]) == ["Echo: hello there"]
    [sent] = task["history"]
    assert sent["messageId"] == "m-1"
    assert sent["role"] == "ROLE_USER"
    assert sent["taskId"] == task["id"]
    assert sent["contextId"] == task["contextId"]
    assert "kind" not in str(task)

    assert await api.get(task["id"]) == task


@pytest.mark.asyncio
async def test_send_keeps_client_context_id_and_makes_new_tasks(api: Api) -> None:
    first = await api.send(message("one", "m-1", contextId="my-context"))
    second = await api.send(message("two", "m-2", contextId="my-context"))
    assert first["contextId"] == second["contextId"] == "my-context"
    assert first["id"] != second["id"]


@pytest.mark.asyncio
async def test_return_immediately_then_completes(api: Api) -> None:
    task = await api.send(message("sleep 0.3", "m-1"), returnImmediately=True)
    assert task["status"]["state"] in {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}
    assert "artifacts" not in task
    done = await api.wait_for(task["id"], TERMINAL)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert texts(done["artifacts"][0]["parts"]) == ["slept 0.3s"]


@pytest.mark.asyncio
async def test_history_length(api: Api) -> None:
    asked = await api.send(message("ask me", "m-1"))
    task = await api.send(message("Ann", "m-2", taskId=asked["id"]))
    full = (await api.get(task["id"]))["history"]
    assert len(full) == 3

    assert "history" not in await api.get(task["id"], history_length=0)
    assert (await api.get(task["id"], history_length=1))["history"] == full[-1:]
    assert (await api.get(task["id"], history_length=2))["history"] == full[-2:]
    assert (await api.get(task["id"], history_length=3))["history"] == full
    assert (await api.get(task["id"], history_length=100))["history"] == full

    # historyLength also applies to the task SendMessage returns, and to each listed task.
    sent = await api.send(message("hello", "m-3"), historyLength=0)
    assert "history" not in sent
    assert sent["status"]["state"] == "TASK_STATE_COMPLETED"
    listed = await api.list(historyLength=0)
    assert listed["tasks"]
    assert all("history" not in t for t in listed["tasks"])
    listed = await api.list(historyLength=1)
    assert all(len(t["history"]) == 1 for t in listed["tasks"])


# --------------------------------------------------------------------------- ListTasks


async def _seed(api: Api) -> list[dict[str, Any]]:
    """Seven tasks, settled one after the other: ids in creation order."""
    tasks = [
        await api.send(message("a1", "s-1", contextId="ctx-a")),
        await api.send(message("a2", "s-2", contextId="ctx-a")),
        await api.send(message("b1", "s-3", contextId="ctx-b")),
        await api.send(message("b2", "s-4", contextId="ctx-b")),
        await api.send(message("c1", "s-5")),
        await api.send(message("fail", "s-6", contextId="ctx-b")),
        await api.send(message("ask me", "s-7", contextId="ctx-a")),
    ]
    assert [t["status"]["state"] for t in tasks[-2:]] == ["TASK_STATE_FAILED", "TASK_STATE_INPUT_REQUIRED"]
    return tasks


@pytest.mark.asyncio
async def test_list_newest_first_with_all_fields(api: Api) -> None:
    tasks = await _seed(api)
    result = await api.list()
    assert result["totalSize"] == 7
    assert result["pageSize"] == 50
    assert result["nextPageToken"] == ""
    listed = result["tasks"]
    stamps = [t["status"]["timestamp"] for t in listed]
    assert stamps == sorted(stamps, reverse=True)
    assert [t["id"] for t in listed] == [t["id"] for t in reversed(tasks)]


@pytest.mark.asyncio
async def test_list_pagination(api: Api) -> None:
    tasks = await _seed(api)
    expected = [t["id"] for t in reversed(tasks)]
    seen: list[str] = []
    token = ""
    pages = []
    while True:
        page = await api.list(pageSize=3, pageToken=token) if token else await api.list(pageSize=3)
        assert page["pageSize"] == 3
        assert page["totalSize"] == 7
        pages.append(len(page["tasks"]))
        seen.extend(t["id"] for t in page["tasks"])
        token = page["nextPageToken"]
        if not token:
            break
        assert len(pages) < 10
    assert pages == [3, 3, 1]
    assert seen == expected  # no duplicates, no gaps, same order as one big page

    # An exact fit: the last page is the one that says so.
    page = await api.list(pageSize=7)
    assert len(page["tasks"]) == 7
    if page["nextPageToken"]:
        rest = await api.list(pageSize=7, pageToken=page["nextPageToken"])
        assert rest["tasks"] == []
        assert rest["nextPageToken"] == ""


@pytest.mark.asyncio
async def test_list_page_token_is_bound_to_its_filters(api: Api) -> None:
    await _seed(api)
    page = await api.list(pageSize=1, contextId="ctx-a")
    assert page["nextPageToken"]
    with pytest.raises(ApiError) as info:
        await api.list(pageSize=1, contextId="ctx-b", pageToken=page["nextPageToken"])
    assert info.value.reason == "INVALID_PARAMS"


@pytest.mark.asyncio
async def test_list_filters(api: Api) -> None:
    tasks = await _seed(api)
    ids = [t["id"] for t in tasks]

    by_context = await api.list(contextId="ctx-a")
    assert [t["id"] for t in by_context["tasks"]] == [ids[6], ids[1], ids[0]]
    assert by_context["totalSize"] == 3

    failed = await api.list(status="TASK_STATE_FAILED")
    assert [t["id"] for t in failed["tasks"]] == [ids[5]]
    assert failed["totalSize"] == 1

    completed = await api.list(status="TASK_STATE_COMPLETED")
    assert [t["id"] for t in completed["tasks"]] == [ids[4], ids[3], ids[2], ids[1], ids[0]]
    assert completed["totalSize"] == 5

    both = await api.list(contextId="ctx-b", status="TASK_STATE_COMPLETED", pageSize=1)
    assert [t["id"] for t in both["tasks"]] == [ids[3]]
    assert both["totalSize"] == 2
    assert both["nextPageToken"]

    # statusTimestampAfter is inclusive (>=).
    floor = tasks[3]["status"]["timestamp"]
    after = await api.list(statusTimestampAfter=floor)
    assert [t["id"] for t in after["tasks"]] == [ids[6], ids[5], ids[4], ids[3]]
    assert after["totalSize"] == 4
    assert all(t["status"]["timestamp"] >= floor for t in after["tasks"])

    none = await api.list(contextId="no-such-context")
    assert none == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}


@pytest.mark.asyncio
async def test_list_include_artifacts(api: Api) -> None:
    await _seed(api)
    for query in ({}, {"includeArtifacts": False}):
        result = await api.list(**query)
        assert len(result["tasks"]) == 7
        assert all("artifacts" not in t for t in result["tasks"]), query
    result = await api.list(includeArtifacts=True)
    completed = [t for t in result["tasks"] if t["status"]["state"] == "TASK_STATE_COMPLETED"]
    assert len(completed) == 5
    for task in completed:
        [artifact] = task["artifacts"]
        assert texts(artifact["parts"])[0].startswith("Echo: ")


# --------------------------------------------------------------------------- CancelTask


@pytest.mark.asyncio
async def test_cancel_running_task(api: Api) -> None:
    # Given a task whose agent works for a minute, far beyond wait_for()'s bound
    task = await api.send(message("sleep 60", "m-1"), returnImmediately=True)
    await api.wait_for(task["id"], {"TASK_STATE_WORKING"})
    # When it is canceled
    canceled = await api.cancel(task["id"])
    if canceled["status"]["state"] != "TASK_STATE_CANCELED":  # the worker acknowledges asynchronously
        canceled = await api.wait_for(task["id"], TERMINAL)
    # Then it is CANCELED within that bound: the agent was stopped, not waited for
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert canceled["id"] == task["id"]
    assert "artifacts" not in await api.get(task["id"])  # it never got to "slept 60s"

    with pytest.raises(ApiError) as info:
        await api.cancel(task["id"])
    assert info.value.reason == "TASK_NOT_CANCELABLE"
    assert info.value.code == (-32002 if api.binding == "jsonrpc" else 400)

    await asyncio.sleep(0.3)
    final = await api.get(task["id"])
    assert final["status"]["state"] == "TASK_STATE_CANCELED"
    assert "artifacts" not in final


@pytest.mark.asyncio
async def test_cancel_waiting_task(api: Api) -> None:
    asked = await api.send(message("ask me", "m-1"))
    canceled = await api.cancel(asked["id"])
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    with pytest.raises(ApiError) as info:
        await api.send(message("Ann", "m-2", taskId=asked["id"]))
    assert info.value.reason == "UNSUPPORTED_OPERATION"


@pytest.mark.asyncio
@pytest.mark.parametrize("text", ["hello", "fail"])
async def test_cancel_terminal_task(api: Api, text: str) -> None:
    task = await api.send(message(text, "m-1"))
    assert task["status"]["state"] in TERMINAL
    with pytest.raises(ApiError) as info:
        await api.cancel(task["id"])
    assert info.value.reason == "TASK_NOT_CANCELABLE"
    assert await api.get(task["id"]) == task


# --------------------------------------------------------------------------- multi-turn


@pytest.mark.asyncio
async def test_multi_turn(api: Api) -> None:
    asked = await api.send(message("ask me", "m-1"))
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    question = asked["status"]["message"]
    assert question["role"] == "ROLE_AGENT"
    assert texts(question["parts"]) == ["What is your name?"]
    assert "artifacts" not in asked

    # Only the taskId: the contextId is inferred from the task.
    done = await api.send(message("Ann", "m-2", taskId=asked["id"]))
    assert done["id"] == asked["id"]
    assert done["contextId"] == asked["contextId"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    [artifact] = done["artifacts"]
    assert artifact["name"] == "greeting"
    assert texts(artifact["parts"]) == ["Nice to meet you, Ann!"]
    # Chronological: the agent's question comes before the answer to it.
    history = done["history"]
    assert [m["messageId"] for m in history] == ["m-1", question["messageId"], "m-2"]
    assert [m["role"] for m in history] == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"]
    assert all(m["contextId"] == asked["contextId"] for m in history)

    with pytest.raises(ApiError) as info:
        await api.send(message("again", "m-3", taskId=asked["id"], contextId=asked["contextId"]))
    assert info.value.reason == "UNSUPPORTED_OPERATION"


# --------------------------------------------------------------------------- idempotency


@pytest.mark.asyncio
async def test_same_message_id_twice_runs_once(counting: Api) -> None:
    first = await counting.send(message("go", "dup-1"))
    second = await counting.send(message("go", "dup-1"))
    assert first["id"] == second["id"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(second["artifacts"]) == 1
    assert CountingExecutor.runs["dup-1"] == 1
    listed = await counting.list()
    assert [t["id"] for t in listed["tasks"]] == [first["id"]]


@pytest.mark.asyncio
async def test_concurrent_duplicates_make_one_task(counting: Api) -> None:
    results = await asyncio.gather(*(counting.send(message("go", "dup-2")) for _ in range(8)))
    assert len({t["id"] for t in results}) == 1
    assert all(t["status"]["state"] == "TASK_STATE_COMPLETED" for t in results)
    assert all(len(t["artifacts"]) == 1 for t in results)
    assert CountingExecutor.runs["dup-2"] == 1

    quick = await asyncio.gather(*(counting.send(message("go", "dup-3"), returnImmediately=True) for _ in range(8)))
    assert len({t["id"] for t in quick}) == 1
    await counting.wait_for(quick[0]["id"], TERMINAL)
    await asyncio.sleep(0.2)
    assert CountingExecutor.runs["dup-3"] == 1
    listed = await counting.list()
    assert listed["totalSize"] == 2


@pytest.mark.asyncio
async def test_duplicate_continuation_runs_once(counting: Api) -> None:
    asked = await counting.send(message("ask", "turn-1"))
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    tasks = await asyncio.gather(*(counting.send(message("answer", "turn-2", taskId=asked["id"])) for _ in range(4)))
    assert all(t["id"] == asked["id"] for t in tasks)
    done = await counting.wait_for(asked["id"], TERMINAL)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert CountingExecutor.runs["turn-2"] == 1
    assert CountingExecutor.runs["turn-1"] == 1
    again = await counting.send(message("answer", "turn-2", taskId=asked["id"]))
    assert again["id"] == asked["id"]
    assert CountingExecutor.runs["turn-2"] == 1


# --------------------------------------------------------------------------- failure


@pytest.mark.asyncio
async def test_failing_agent_gives_failed_task_with_safe_message(api: Api) -> None:
    task = await api.send(message("fail", "m-1"))
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    status_message = task["status"]["message"]
    assert status_message["role"] == "ROLE_AGENT"
    [text] = texts(status_message["parts"])
    assert text
    fetched = await api.get(task["id"])
    for leaked in ("demo failure requested", "RuntimeError", "Traceback", 'File "'):
        assert leaked not in str(task)
        assert leaked not in str(fetched)


# --------------------------------------------------------------------------- push configs


@pytest.mark.asyncio
async def test_push_config_lifecycle(api: Api) -> None:
    task = await api.send(message("hello", "m-1"))
    created = await api.push_create(
        task["id"],
        {"url": HOOK, "token": "opaque-token", "authentication": {"scheme": "Bearer", "credentials": "s3cr3t"}},
    )
    assert created["id"]
    assert created["taskId"] == task["id"]
    assert created["url"] == HOOK
    assert created["token"] == "opaque-token"
    assert created["authentication"]["scheme"] == "Bearer"

    named = await api.push_create(task["id"], {"id": "cfg-2", "url": "https://example.org/other"})
    assert named["id"] == "cfg-2"
    replaced = await api.push_create(task["id"], {"id": "cfg-2", "url": "https://example.org/replaced"})
    assert replaced["url"] == "https://example.org/replaced"

    assert await api.push_get(task["id"], created["id"]) == created
    listed = await api.push_list(task["id"])
    assert {c["id"]: c["url"] for c in listed} == {created["id"]: HOOK, "cfg-2": "https://example.org/replaced"}

    deleted = await api.push_delete(task["id"], created["id"])
    assert deleted == (None if api.binding == "jsonrpc" else {})
    assert await api.push_delete(task["id"], created["id"]) == deleted  # idempotent
    assert await api.push_delete(task["id"], "never-existed") == deleted
    with pytest.raises(ApiError) as info:
        await api.push_get(task["id"], created["id"])
    assert info.value.reason == "TASK_NOT_FOUND"
    assert [c["id"] for c in await api.push_list(task["id"])] == ["cfg-2"]


@pytest.mark.asyncio
async def test_push_config_inline_on_send(api: Api) -> None:
    task = await api.send(message("hello", "m-1"), taskPushNotificationConfig={"url": HOOK, "token": "t"})
    [config] = await api.push_list(task["id"])
    assert config["url"] == HOOK
    assert config["taskId"] == task["id"]
    assert config["id"]


@pytest.mark.asyncio
async def test_push_config_inline_on_a_continuation_is_registered(api: Api) -> None:
    # Given a task waiting for input, with no webhook
    asked = await api.send(message("ask me", "m-1"))
    assert await api.push_list(asked["id"]) == []

    # When the answer carries a webhook config
    done = await api.send(message("Ann", "m-2", taskId=asked["id"]), taskPushNotificationConfig={"url": HOOK})

    # Then the config is registered on the task (the turn's events will be pushed to it)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    [config] = await api.push_list(asked["id"])
    assert (config["url"], config["taskId"]) == (HOOK, asked["id"])


@pytest.mark.asyncio
async def test_a_bad_inline_config_on_a_continuation_changes_nothing(api: Api) -> None:
    asked = await api.send(message("ask me", "m-1"))

    with pytest.raises(ApiError) as info:
        await api.send(
            message("Ann", "m-2", taskId=asked["id"]), taskPushNotificationConfig={"url": "http://10.0.0.1/"}
        )

    assert info.value.reason == "INVALID_PARAMS"
    task = await api.wait_for(asked["id"], {"TASK_STATE_INPUT_REQUIRED"})
    assert all(m["messageId"] != "m-2" for m in task.get("history", []))
    assert await api.push_list(asked["id"]) == []


# --------------------------------------------------------------------------- agent card


@pytest.mark.asyncio
async def test_agent_card(api: Api) -> None:
    response = await api.http.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    card = response.json()
    # Both bindings in both versions, 1.0 first (preferred); the v0.3 fields are in test_v03_bindings
    pairs = [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]]
    assert pairs == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]
    interfaces = {i["protocolBinding"]: i for i in card["supportedInterfaces"][:2]}
    assert interfaces["JSONRPC"]["url"].startswith("http://testserver")
    assert interfaces["HTTP+JSON"]["url"].startswith("http://testserver")
    assert card["capabilities"]["pushNotifications"] is True
    assert card["skills"]
    assert card["name"]
    assert card["version"]

    etag = response.headers["etag"]
    assert etag.startswith('"')
    assert etag.endswith('"')
    assert "max-age=" in response.headers["cache-control"]

    cached = await api.http.get("/.well-known/agent-card.json", headers={"If-None-Match": etag})
    assert cached.status_code == 304
    assert cached.content == b""
    assert cached.headers["etag"] == etag
    listed = await api.http.get("/.well-known/agent-card.json", headers={"If-None-Match": f'"other", {etag}'})
    assert listed.status_code == 304
    stale = await api.http.get("/.well-known/agent-card.json", headers={"If-None-Match": '"stale"'})
    assert stale.status_code == 200
    assert stale.json() == card

    # Last-Modified, and If-Modified-Since when no If-None-Match is sent (which wins when it is)
    modified = response.headers["last-modified"]
    assert email.utils.parsedate_to_datetime(modified).tzinfo is not None
    since = await api.http.get("/.well-known/agent-card.json", headers={"If-Modified-Since": modified})
    assert since.status_code == 304
    assert since.headers["last-modified"] == modified
    earlier = email.utils.formatdate(email.utils.parsedate_to_datetime(modified).timestamp() - 60, usegmt=True)
    older = await api.http.get("/.well-known/agent-card.json", headers={"If-Modified-Since": earlier})
    assert older.status_code == 200
    garbled = await api.http.get("/.well-known/agent-card.json", headers={"If-Modified-Since": "yesterday"})
    assert garbled.status_code == 200
    both = {"If-Modified-Since": modified, "If-None-Match": '"stale"'}
    assert (await api.http.get("/.well-known/agent-card.json", headers=both)).status_code == 200


@pytest.mark.asyncio
async def test_agent_card_parses_with_the_sdk(api: Api) -> None:
    from a2a.client.card_resolver import parse_agent_card

    card = parse_agent_card((await api.http.get("/.well-known/agent-card.json")).json())
    bindings = [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces]
    assert bindings == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]
