"""v0.3 clients on both bindings, in process against a memory runtime (A2A specification, section 3.6.2 Server
Responsibilities).

The oracles are independent of our converters: the reference SDK's v0.3 models
(``a2a.compat.v0_3.types``, the JSON-RPC shapes) and the v0.3 proto
(``a2a.compat.v0_3.a2a_v0_3_pb2``, parsed strictly as the v0.3 REST client does). Each test also
checks the version rules: which requests are 0.3, which are 1.0, and what a mismatch gets.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import types as t03
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.config import ConfigError, Settings
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

V1 = {"A2A-Version": "1.0"}
HOOK = "https://example.com/hook"


class Client:
    """A v0.3 caller: JSON-RPC with the v0.3 method names, REST under /v1, no A2A-Version."""

    def __init__(self, http: httpx.AsyncClient, runtime: Runtime) -> None:
        self.http = http
        self.runtime = runtime

    async def rpc(self, method: str, params: Any, *, headers: dict[str, str] | None = None) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
        response = await self.http.post("/", json=body, headers=headers or {})
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        assert answer["id"] == "r1"
        return answer

    async def result(self, method: str, params: Any) -> Any:
        answer = await self.rpc(method, params)
        assert "error" not in answer, answer
        return answer["result"]

    async def stream(self, method: str, params: Any) -> list[dict[str, Any]]:
        body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        async with self.http.stream("POST", "/", json=body) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            return [
                json.loads(line[5:]) for line in [x async for x in response.aiter_lines()] if line.startswith("data:")
            ]

    async def rest_stream(self, verb: str, path: str, body: Any = None) -> list[dict[str, Any]]:
        async with self.http.stream(verb, path, json=body) as response:
            assert response.status_code == 200, await response.aread()
            return [
                json.loads(line[5:]) for line in [x async for x in response.aiter_lines()] if line.startswith("data:")
            ]


@pytest_asyncio.fixture
async def client() -> AsyncIterator[Client]:
    settings = Settings(store="memory", poll_interval_seconds=0.005, push_notifications=True)
    runtime = build_runtime(settings, store=MemoryTaskStore())
    transport = httpx.ASGITransport(app=create_app(runtime))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield Client(http, runtime)
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


def message03(text: str, **fields: Any) -> dict[str, Any]:
    """A v0.3 JSON-RPC Message, built with the reference v0.3 model."""
    message = t03.Message(
        message_id=fields.pop("message_id", str(uuid.uuid4())),
        role=t03.Role.user,
        parts=[t03.Part(root=t03.TextPart(text=text))],
        **fields,
    )
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


def proto_json(message: ProtoMessage) -> dict[str, Any]:
    """What the a2a-sdk 0.3 REST client sends: ProtoJSON of the v0.3 proto."""
    data: dict[str, Any] = json_format.MessageToDict(message)
    return data


def strict(data: Any, message: ProtoMessage) -> ProtoMessage:
    """Parse a v0.3 REST response as the v0.3 client does: no unknown field allowed."""
    json_format.ParseDict(data, message)
    return message


def rest_message(text: str) -> pb03.Message:
    return pb03.Message(message_id=str(uuid.uuid4()), role=pb03.ROLE_USER, content=[pb03.Part(text=text)])


# --------------------------------------------------------------------------- JSON-RPC


@pytest.mark.asyncio
async def test_message_send_blocking_returns_a_v03_task(client: Client) -> None:
    result = await client.result("message/send", {"message": message03("hello")})
    task = t03.Task.model_validate(result)
    assert result["kind"] == "task"
    assert task.status.state == t03.TaskState.completed
    assert task.artifacts
    assert task.artifacts[0].parts[0].root.text == "Echo: hello"  # type: ignore[union-attr]
    assert [m.role for m in task.history or []][:1] == [t03.Role.user]


@pytest.mark.asyncio
async def test_message_send_not_blocking_then_get_and_history_length(client: Client) -> None:
    params = {"message": message03("sleep 0.3"), "configuration": {"blocking": False, "acceptedOutputModes": []}}
    first = t03.Task.model_validate(await client.result("message/send", params))
    assert first.status.state in {t03.TaskState.submitted, t03.TaskState.working}
    for _ in range(200):
        got = t03.Task.model_validate(await client.result("tasks/get", {"id": first.id, "historyLength": 1}))
        if got.status.state == t03.TaskState.completed:
            break
        await asyncio.sleep(0.05)
    assert got.status.state == t03.TaskState.completed
    assert len(got.history or []) <= 1


@pytest.mark.asyncio
async def test_cancel_and_not_cancelable(client: Client) -> None:
    params = {"message": message03("sleep 20"), "configuration": {"blocking": False}}
    task = await client.result("message/send", params)
    canceled = t03.Task.model_validate(await client.result("tasks/cancel", {"id": task["id"]}))
    assert canceled.status.state == t03.TaskState.canceled
    again = await client.rpc("tasks/cancel", {"id": task["id"]})
    error = t03.TaskNotCancelableError.model_validate(again["error"])
    assert error.code == -32002
    # v0.3 data is free-form: one object with the facts, not the v1.0 list of typed details
    assert again["error"]["data"]["reason"] == "TASK_NOT_CANCELABLE"


@pytest.mark.asyncio
async def test_unknown_task_is_v03_task_not_found(client: Client) -> None:
    answer = await client.rpc("tasks/get", {"id": "nope"})
    assert t03.TaskNotFoundError.model_validate(answer["error"]).code == -32001


@pytest.mark.asyncio
async def test_message_stream_events_carry_kind_and_final(client: Client) -> None:
    frames = await client.stream("message/stream", {"message": message03("hello")})
    events = [t03.SendStreamingMessageSuccessResponse.model_validate(f).result for f in frames]
    kinds = [e.kind for e in events]
    assert kinds[0] == "task"
    assert "artifact-update" in kinds
    last = events[-1]
    assert isinstance(last, t03.TaskStatusUpdateEvent)
    assert last.final is True
    assert last.status.state == t03.TaskState.completed
    assert all(not e.final for e in events[:-1] if isinstance(e, t03.TaskStatusUpdateEvent))


@pytest.mark.asyncio
async def test_resubscribe_streams_the_task_in_v03(client: Client) -> None:
    task = await client.result(
        "message/send", {"message": message03("sleep 0.3"), "configuration": {"blocking": False}}
    )
    frames = await client.stream("tasks/resubscribe", {"id": task["id"]})
    events = [t03.SendStreamingMessageSuccessResponse.model_validate(f).result for f in frames]
    assert events[0].kind == "task"
    assert isinstance(events[-1], t03.TaskStatusUpdateEvent)
    assert events[-1].final


@pytest.mark.asyncio
async def test_push_config_set_get_list_delete(client: Client) -> None:
    task = await client.result("message/send", {"message": message03("sleep 5"), "configuration": {"blocking": False}})
    base = "tasks/pushNotificationConfig"
    # Without an id, the config is the task's default one: its id is the task id (v0.3 semantics).
    default = await client.result(f"{base}/set", {"taskId": task["id"], "pushNotificationConfig": {"url": HOOK}})
    assert t03.TaskPushNotificationConfig.model_validate(default).push_notification_config.id == task["id"]
    named = {
        "taskId": task["id"],
        "pushNotificationConfig": {
            "id": "second",
            "url": HOOK + "/2",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    }
    stored = t03.TaskPushNotificationConfig.model_validate(await client.result(f"{base}/set", named))
    assert stored.push_notification_config.authentication is not None
    assert stored.push_notification_config.authentication.schemes == ["Bearer"]
    got = await client.result(f"{base}/get", {"id": task["id"], "pushNotificationConfigId": "second"})
    assert t03.TaskPushNotificationConfig.model_validate(got) == stored
    default_again = await client.result(f"{base}/get", {"id": task["id"]})
    assert default_again == default
    listed = await client.result(f"{base}/list", {"id": task["id"]})
    assert isinstance(listed, list)
    assert sorted(c["pushNotificationConfig"]["id"] for c in listed) == sorted([task["id"], "second"])
    assert await client.result(f"{base}/delete", {"id": task["id"], "pushNotificationConfigId": "second"}) is None
    assert [c["pushNotificationConfig"]["id"] for c in await client.result(f"{base}/list", {"id": task["id"]})] == [
        task["id"]
    ]
    # The config is also the v1.0 one: the same store, read with the v1.0 method.
    v1 = await client.http.post(
        "/",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "GetTaskPushNotificationConfig",
            "params": {"taskId": task["id"], "id": task["id"]},
        },
        headers=V1,
    )
    assert v1.json()["result"]["url"] == HOOK
    await client.result("tasks/cancel", {"id": task["id"]})


@pytest.mark.asyncio
async def test_extended_card_not_configured_is_v03_error(client: Client) -> None:
    answer = await client.rpc("agent/getAuthenticatedExtendedCard", {})
    assert answer["error"]["code"] == -32007


@pytest.mark.asyncio
async def test_tasks_are_shared_between_versions(client: Client) -> None:
    old = await client.result("message/send", {"message": message03("from 0.3")})
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": old["id"]}}
    seen_by_v1 = (await client.http.post("/", json=body, headers=V1)).json()["result"]
    assert seen_by_v1["status"]["state"] == "TASK_STATE_COMPLETED"
    assert seen_by_v1["artifacts"][0]["parts"][0]["text"] == "Echo: from 0.3"
    send = {"message": {"messageId": "m-v1", "role": "ROLE_USER", "parts": [{"text": "from 1.0"}]}}
    new = (await client.http.post("/message:send", json=send, headers=V1)).json()["task"]
    seen_by_v03 = t03.Task.model_validate(await client.result("tasks/get", {"id": new["id"]}))
    assert seen_by_v03.status.state == t03.TaskState.completed
    assert seen_by_v03.artifacts[0].parts[0].root.text == "Echo: from 1.0"  # type: ignore[index,union-attr]


# --------------------------------------------------------------------------- versions


@pytest.mark.asyncio
@pytest.mark.parametrize("header", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "0.3.0"}])
async def test_v03_names_are_served_without_a_version_or_with_0_3(client: Client, header: dict[str, str]) -> None:
    answer = await client.rpc("message/send", {"message": message03("hi")}, headers=header)
    assert answer["result"]["kind"] == "task"


@pytest.mark.asyncio
@pytest.mark.parametrize("version", ["2.0", "1.1", "0.2", "junk"])
async def test_v03_names_with_another_version_get_version_not_supported_in_v03_shape(
    client: Client, version: str
) -> None:
    answer = await client.rpc("message/send", {"message": message03("hi")}, headers={"A2A-Version": version})
    assert answer["error"]["code"] == -32009
    assert answer["error"]["data"]["reason"] == "VERSION_NOT_SUPPORTED"  # the v0.3 (object) shape


@pytest.mark.asyncio
async def test_v03_names_asked_for_with_1_0_do_not_exist(client: Client) -> None:
    answer = await client.rpc("message/send", {"message": message03("hi")}, headers=V1)
    assert answer["error"]["code"] == -32601
    assert answer["error"]["data"][0]["reason"] == "METHOD_NOT_FOUND"  # the v1.0 shape: typed details
    assert "SendMessage" in answer["error"]["message"]


@pytest.mark.asyncio
async def test_v1_names_without_a_version_are_refused_in_v1_shape(client: Client) -> None:
    answer = await client.rpc("GetTask", {"id": "x"})
    assert answer["error"]["code"] == -32009
    assert answer["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"


@pytest.mark.asyncio
async def test_unknown_method_without_version_is_v03_method_not_found(client: Client) -> None:
    answer = await client.rpc("tasks/list", {})
    assert answer["error"]["code"] == -32601
    assert isinstance(answer["error"]["data"], dict)


@pytest.mark.asyncio
async def test_v03_params_errors_name_the_v03_field(client: Client) -> None:
    bad = {"message": {**message03("x"), "role": "robot"}}
    answer = await client.rpc("message/send", bad)
    assert answer["error"]["code"] == -32602
    fields = [v["field"] for v in answer["error"]["data"].get("fieldViolations", [])]
    assert any("role" in f for f in fields), answer


@pytest.mark.asyncio
async def test_x_a2a_extensions_header_is_read(client: Client) -> None:
    from a2a_serverless.transport import _http

    captured: list[tuple[str, ...]] = []
    original = _http.call_context

    def spy(*args: Any, **kwargs: Any) -> Any:
        ctx = original(*args, **kwargs)
        captured.append(ctx.extensions)
        return ctx

    _http_call_context = "a2a_serverless.transport.rows.call_context"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_http_call_context, spy)
        await client.rpc(
            "tasks/get", {"id": "x"}, headers={"X-A2A-Extensions": "urn:a, urn:b", "A2A-Extensions": "urn:a"}
        )
    assert captured == [("urn:a", "urn:b")]


# --------------------------------------------------------------------------- REST under /v1


@pytest.mark.asyncio
async def test_rest_send_get_cancel(client: Client) -> None:
    request = pb03.SendMessageRequest(
        request=rest_message("hello"), configuration=pb03.SendMessageConfiguration(blocking=True)
    )
    response = await client.http.post("/v1/message:send", json=proto_json(request))
    assert response.status_code == 200, response.text
    sent = strict(response.json(), pb03.SendMessageResponse())
    assert isinstance(sent, pb03.SendMessageResponse)
    assert sent.task.status.state == pb03.TASK_STATE_COMPLETED
    assert sent.task.artifacts[0].parts[0].text == "Echo: hello"

    got = await client.http.get(f"/v1/tasks/{sent.task.id}", params={"historyLength": "1"})
    task = strict(got.json(), pb03.Task())
    assert isinstance(task, pb03.Task)
    assert task.id == sent.task.id
    assert len(task.history) <= 1

    slow = pb03.SendMessageRequest(request=rest_message("sleep 20"), configuration=pb03.SendMessageConfiguration())
    running = strict(
        (await client.http.post("/v1/message:send", json=proto_json(slow))).json(), pb03.SendMessageResponse()
    )
    assert isinstance(running, pb03.SendMessageResponse)
    cancel = pb03.CancelTaskRequest(name=f"tasks/{running.task.id}")
    canceled = await client.http.post(f"/v1/tasks/{running.task.id}:cancel", json=proto_json(cancel))
    assert strict(canceled.json(), pb03.Task()).status.state == pb03.TASK_STATE_CANCELLED  # type: ignore[attr-defined]
    missing = await client.http.get("/v1/tasks/nope")
    assert missing.status_code == 404


@pytest.mark.asyncio
async def test_rest_stream_and_subscribe(client: Client) -> None:
    request = pb03.SendMessageRequest(request=rest_message("hello"))
    events = [
        strict(e, pb03.StreamResponse())
        for e in await client.rest_stream("POST", "/v1/message:stream", proto_json(request))
    ]
    assert events[0].WhichOneof("payload") == "task"  # type: ignore[attr-defined]
    last = events[-1]
    assert last.WhichOneof("payload") == "status_update"  # type: ignore[attr-defined]
    assert last.status_update.final  # type: ignore[attr-defined]
    assert last.status_update.status.state == pb03.TASK_STATE_COMPLETED  # type: ignore[attr-defined]

    for verb in ("GET", "POST"):
        slow = pb03.SendMessageRequest(request=rest_message("sleep 0.3"), configuration=pb03.SendMessageConfiguration())
        started = (await client.http.post("/v1/message:send", json=proto_json(slow))).json()["task"]
        frames = await client.rest_stream(verb, f"/v1/tasks/{started['id']}:subscribe")
        parsed = [strict(f, pb03.StreamResponse()) for f in frames]
        assert parsed[-1].status_update.final  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_rest_push_configs(client: Client) -> None:
    slow = pb03.SendMessageRequest(request=rest_message("sleep 5"), configuration=pb03.SendMessageConfiguration())
    task_id = (await client.http.post("/v1/message:send", json=proto_json(slow))).json()["task"]["id"]
    create = pb03.CreateTaskPushNotificationConfigRequest(
        parent=f"tasks/{task_id}",
        config_id="c1",
        config=pb03.TaskPushNotificationConfig(
            name=f"tasks/{task_id}/pushNotificationConfigs/c1",
            push_notification_config=pb03.PushNotificationConfig(
                id="c1",
                url=HOOK,
                token="tok",
                authentication=pb03.AuthenticationInfo(schemes=["Bearer"], credentials="s"),
            ),
        ),
    )
    created = await client.http.post(f"/v1/tasks/{task_id}/pushNotificationConfigs", json=proto_json(create))
    assert created.status_code == 200, created.text
    config = strict(created.json(), pb03.TaskPushNotificationConfig())
    assert config.name == f"tasks/{task_id}/pushNotificationConfigs/c1"  # type: ignore[attr-defined]
    got = await client.http.get(f"/v1/tasks/{task_id}/pushNotificationConfigs/c1")
    assert strict(got.json(), pb03.TaskPushNotificationConfig()) == config
    listed = strict(
        (await client.http.get(f"/v1/tasks/{task_id}/pushNotificationConfigs")).json(),
        pb03.ListTaskPushNotificationConfigResponse(),
    )
    assert [c.push_notification_config.id for c in listed.configs] == ["c1"]  # type: ignore[attr-defined]
    deleted = await client.http.delete(f"/v1/tasks/{task_id}/pushNotificationConfigs/c1")
    assert deleted.status_code == 200
    assert deleted.json() == {}
    assert (await client.http.get(f"/v1/tasks/{task_id}/pushNotificationConfigs/c1")).status_code == 404
    await client.http.post(f"/v1/tasks/{task_id}:cancel", json={})


@pytest.mark.asyncio
async def test_rest_v1_paths_with_a2a_version_1_are_refused(client: Client) -> None:
    request = pb03.SendMessageRequest(request=rest_message("hello"))
    response = await client.http.post("/v1/message:send", json=proto_json(request), headers=V1)
    assert response.status_code == 400
    assert response.json()["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    # ... and "v1" is never a tenant: a 1.0 request on a tenant route called v1 finds nothing.
    listed = await client.http.get("/v1/tasks", headers=V1)
    assert listed.status_code in (400, 404), listed.text


@pytest.mark.asyncio
async def test_rest_extended_card_not_configured(client: Client) -> None:
    response = await client.http.get("/v1/card")
    # The reference 0.3 server's status and the v0.3 REST error body (tests/transport/test_v03_rest_errors.py).
    assert response.status_code == 404
    assert response.json()["code"] == -32007
    assert response.json()["data"]["reason"] == "EXTENDED_AGENT_CARD_NOT_CONFIGURED"


def test_v1_cannot_be_configured_as_a_tenant() -> None:
    with pytest.raises(ConfigError, match="v1"):
        Settings.from_env({"A2A_TENANTS": "acme,v1"})


# --------------------------------------------------------------------------- the card


@pytest.mark.asyncio
async def test_public_card_serves_both_generations(client: Client) -> None:
    response = await client.http.get("/.well-known/agent-card.json")
    data = response.json()
    interfaces = {(i["protocolBinding"], i["protocolVersion"]): i["url"] for i in data["supportedInterfaces"]}
    assert interfaces == {
        ("JSONRPC", "1.0"): "http://testserver/",
        ("HTTP+JSON", "1.0"): "http://testserver",
        ("JSONRPC", "0.3"): "http://testserver/",
        ("HTTP+JSON", "0.3"): "http://testserver",
    }
    assert data["supportedInterfaces"][0]["protocolVersion"] == "1.0"  # preferred
    old = t03.AgentCard.model_validate(data)
    assert (old.url, old.preferred_transport, old.protocol_version) == ("http://testserver/", "JSONRPC", "0.3.0")
    assert {(i.transport, i.url) for i in old.additional_interfaces or []} == {
        ("JSONRPC", "http://testserver/"),
        ("HTTP+JSON", "http://testserver"),
    }
    new = parse_agent_card(json.loads(response.text))
    assert [i.protocol_version for i in new.supported_interfaces][:2] == ["1.0", "1.0"]
