"""End to end on the real local stack (moto DynamoDB + SQS, the worker pollers, uvicorn).

The official a2a-sdk 1.x client drives the agent over each binding it advertises; a raw httpx
client covers the multi-turn flow and cross-binding persistence.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
)

from testkit.sdk import Session, sdk_session, send, user_message

pytestmark = pytest.mark.e2e

BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]
V1 = {"A2A-Version": "1.0"}
HOOK = "https://example.com/hook"
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}


async def wait_for(client: Client, task_id: str, states: set[Any], within: float = 20.0) -> Task:
    deadline = time.monotonic() + within
    while True:
        task = await client.get_task(GetTaskRequest(id=task_id))
        if task.status.state in states:
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {TaskState.Name(task.status.state)}"
        await asyncio.sleep(0.1)


def assert_used(session: Session, binding: str) -> None:
    calls = [r for r in session.requests if r[1] != "/.well-known/agent-card.json"]
    assert calls
    if binding == "JSONRPC":
        assert all(r == ("POST", "/") for r in calls), calls
    else:
        assert all(r[1] != "/" for r in calls), calls


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_card_resolves(devstack: str, binding: str) -> None:
    async with sdk_session(devstack, binding) as session:
        card = session.card
        assert card.name
        # 1.0 first, then the same two bindings for v0.3 clients (the REST one under /v1).
        offered = [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces]
        assert offered == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]
        assert all(i.url.startswith(devstack) for i in card.supported_interfaces)
        assert card.capabilities.push_notifications


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_send_get_list(devstack: str, binding: str) -> None:
    context_id = f"e2e-{uuid.uuid4()}"
    async with sdk_session(devstack, binding) as session:
        client = session.client
        task = await send(client, SendMessageRequest(message=user_message("hello e2e", context_id=context_id)))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.context_id == context_id
        assert [p.text for p in task.artifacts[0].parts] == ["Echo: hello e2e"]

        got = await client.get_task(GetTaskRequest(id=task.id))
        assert got.id == task.id
        assert got.status.state == TaskState.TASK_STATE_COMPLETED
        assert [p.text for p in got.artifacts[0].parts] == ["Echo: hello e2e"]
        assert got.history[0].parts[0].text == "hello e2e"

        listed = await client.list_tasks(ListTasksRequest(context_id=context_id, include_artifacts=True))
        assert [t.id for t in listed.tasks] == [task.id]
        assert listed.total_size == 1
        assert listed.next_page_token == ""
        assert [p.text for p in listed.tasks[0].artifacts[0].parts] == ["Echo: hello e2e"]
        assert_used(session, binding)


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancel_running_task(devstack: str, binding: str) -> None:
    async with sdk_session(devstack, binding) as session:
        client = session.client
        request = SendMessageRequest(
            message=user_message("sleep 20"), configuration=SendMessageConfiguration(return_immediately=True)
        )
        task = await send(client, request)
        assert task.status.state in {TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING}

        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert canceled.id == task.id
        if canceled.status.state != TaskState.TASK_STATE_CANCELED:  # the worker acknowledges asynchronously
            canceled = await wait_for(client, task.id, TERMINAL)
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED

        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task.id))
        final = await client.get_task(GetTaskRequest(id=task.id))
        assert final.status.state == TaskState.TASK_STATE_CANCELED
        assert_used(session, binding)


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_push_config_crud(devstack: str, binding: str) -> None:
    async with sdk_session(devstack, binding) as session:
        client = session.client
        task = await send(client, SendMessageRequest(message=user_message("hello push")))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED

        created = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url=HOOK, token="opaque")
        )
        assert created.id
        assert created.task_id == task.id
        assert created.url == HOOK

        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
        assert got.url == HOOK
        assert got.token == "opaque"

        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert [c.id for c in listed.configs] == [created.id]

        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
        with pytest.raises(TaskNotFoundError):
            await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
            )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert list(listed.configs) == []
        assert_used(session, binding)


@pytest.mark.asyncio
async def test_multi_turn_over_raw_http(devstack: str) -> None:
    async with httpx.AsyncClient(base_url=devstack, headers=V1, timeout=60.0) as http:
        first = await http.post(
            "/message:send",
            json={"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "ask me"}]}},
        )
        assert first.status_code == 200, first.text
        assert first.headers["content-type"].startswith("application/a2a+json")
        asked = first.json()["task"]
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert asked["status"]["message"]["parts"] == [{"text": "What is your name?"}]

        # Continue over the other binding, with only the taskId.
        second = await http.post(
            "/",
            json={
                "jsonrpc": "2.0",
                "id": "turn-2",
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": str(uuid.uuid4()),
                        "role": "ROLE_USER",
                        "taskId": asked["id"],
                        "parts": [{"text": "Ann"}],
                    }
                },
            },
        )
        assert second.status_code == 200
        body = second.json()
        assert body["id"] == "turn-2"
        done = body["result"]["task"]
        assert done["id"] == asked["id"]
        assert done["contextId"] == asked["contextId"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert done["artifacts"][0]["parts"] == [{"text": "Nice to meet you, Ann!"}]

        third = await http.post(
            "/message:send",
            json={
                "message": {
                    "messageId": str(uuid.uuid4()),
                    "role": "ROLE_USER",
                    "taskId": asked["id"],
                    "parts": [{"text": "again"}],
                }
            },
        )
        assert third.status_code == 400
        assert third.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


@pytest.mark.asyncio
async def test_task_created_over_rest_is_visible_over_jsonrpc(devstack: str) -> None:
    context_id = f"persist-{uuid.uuid4()}"
    async with httpx.AsyncClient(base_url=devstack, headers=V1, timeout=60.0) as http:
        created = await http.post(
            "/message:send",
            json={
                "message": {
                    "messageId": str(uuid.uuid4()),
                    "role": "ROLE_USER",
                    "contextId": context_id,
                    "parts": [{"text": "remember me"}],
                }
            },
        )
        assert created.status_code == 200, created.text
        task = created.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"

        async def rpc(method: str, params: dict[str, Any]) -> Any:
            response = await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            assert response.status_code == 200
            assert "error" not in response.json(), response.text
            return response.json()["result"]

        fetched = await rpc("GetTask", {"id": task["id"]})
        assert fetched == task
        rest_fetched = (await http.get(f"/tasks/{task['id']}")).json()
        assert rest_fetched == fetched
        listed = await rpc("ListTasks", {"contextId": context_id, "includeArtifacts": True})
        assert listed == {"tasks": [task], "nextPageToken": "", "pageSize": 50, "totalSize": 1}

        missing = await http.post(
            "/", json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": str(uuid.uuid4())}}
        )
        assert missing.json()["error"]["code"] == -32001
