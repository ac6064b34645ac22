"""Large parts through the app, on both bindings (memory runtime, its work queue running the worker
on threads): what a client gets back for a 600 KB text and a 5 MB file an agent produced, inline or
as a URL, in a response, a stream and a page of ListTasks; the executor's view of a big user file;
a client's attempt to use the reserved ``a2a-blob:`` scheme; an object store outage on read."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import httpx
import pytest
import pytest_asyncio

from a2a_serverless.adapters.memory_blobs import MemoryBlobStore
from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import ANONYMOUS
from a2a_serverless.blobs import PartOffloader
from a2a_serverless.config import Settings
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import Part
from a2a_serverless.ports import BlobError, Scope, SendKey
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime

pytestmark = pytest.mark.asyncio

V1 = {"A2A-Version": "1.0"}
FILE = os.urandom(5 * 1024 * 1024)
TEXT = "".join(f"{i}: all work and no play makes a dull agent\n" for i in range(14_000))  # ~600 KB
URL_BASE = "https://objects.example/"


class SigningBlobs(MemoryBlobStore):
    """Memory objects with URLs (as S3 gives), and an outage switch."""

    down = False

    def url(self, key: str, *, filename: str, media_type: str, expires_seconds: int) -> str | None:
        return URL_BASE + key

    def get(self, key: str) -> bytes:
        if self.down:
            raise BlobError("S3 is down")
        return super().get(key)

    def fetch(self, url: str) -> bytes:
        assert url.startswith(URL_BASE)
        return self.get(url[len(URL_BASE) :])


class Producer(AgentExecutor):
    """Replies with a 600 KB text and a 5 MB file; "echo" sends the user's file back; notes what it saw."""

    seen: ClassVar[list[bytes]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        raw = [p.raw for p in context.message.parts if p.raw is not None]
        Producer.seen.extend(raw)
        if raw:
            await updater.add_artifact([Part(raw=raw[0], filename="echo.bin")], name="echo")
        else:
            await updater.add_artifact([Part(text=TEXT)], name="answer")
            await updater.add_artifact([Part(raw=FILE, filename="chart.png", media_type="image/png")], name="chart")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


PRODUCER = f"{Producer.__module__}:{Producer.__qualname__}"


@pytest.fixture
def blobs() -> SigningBlobs:
    return SigningBlobs()


@pytest_asyncio.fixture
async def client(blobs: SigningBlobs) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:
    settings = Settings(store="memory", executor=PRODUCER, poll_interval_seconds=0.01, stream_poll_seconds=0.01)
    offloader = PartOffloader(blobs, settings.blob_threshold_bytes)
    runtime = build_runtime(settings, store=MemoryTaskStore(offloader=offloader), offloader=offloader)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(runtime)), base_url="http://t") as http:
        yield http, runtime
    runtime.queue.shutdown()  # type: ignore[attr-defined]


def message(message_id: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": list(parts) or [{"text": "go"}]}


async def call(http: httpx.AsyncClient, binding: str, method: str, params: dict[str, Any]) -> Any:
    if binding == "jsonrpc":
        rpc = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await http.post("/", json=rpc, headers=V1)
        assert response.status_code == 200
        return response.json()
    routes = {
        "SendMessage": ("POST", "/message:send"),
        "GetTask": ("GET", f"/tasks/{params.get('id')}"),
        "ListTasks": ("GET", "/tasks"),
    }
    verb, path = routes[method]
    if verb == "GET":
        query = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items() if k != "id"}
        response = await http.get(path, params=query, headers=V1)
    else:
        response = await http.post(path, json=params, headers=V1)
    body = response.json()
    return {"result": body} if response.status_code == 200 else {"error": body["error"], "status": response.status_code}


def result(answer: Any) -> dict[str, Any]:
    assert "result" in answer, answer
    value: dict[str, Any] = answer["result"]
    return value


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_response_carries_the_text_inline_and_the_file_as_a_url(
    client: tuple[httpx.AsyncClient, Runtime], blobs: SigningBlobs, binding: str
) -> None:
    http, _ = client
    sent = result(await call(http, binding, "SendMessage", {"message": message(f"m-{binding}")}))
    task_id = sent["task"]["id"]
    for task in (sent["task"], result(await call(http, binding, "GetTask", {"id": task_id}))):
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        answer, chart = (a["parts"][0] for a in task["artifacts"])
        assert answer == {"text": TEXT}
        # 5 MB is 6.7 MB of base64: over the 4 MiB a buffered response carries inline
        assert set(chart) == {"url", "filename", "mediaType"}
        assert (chart["filename"], chart["mediaType"]) == ("chart.png", "image/png")
        assert blobs.fetch(chart["url"]) == FILE


async def test_a_stream_carries_each_part_as_the_event_budget_allows(
    client: tuple[httpx.AsyncClient, Runtime], blobs: SigningBlobs
) -> None:
    http, _ = client
    events = []
    async with http.stream("POST", "/message:stream", json={"message": message("m-s")}, headers=V1) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
    parts = [e["artifactUpdate"]["artifact"]["parts"][0] for e in events if "artifactUpdate" in e]
    assert parts[0] == {"text": TEXT}  # 600 KB: within an event's 1 MiB
    assert blobs.fetch(parts[1]["url"]) == FILE


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_list_tasks_shares_one_budget_across_the_page(
    client: tuple[httpx.AsyncClient, Runtime], blobs: SigningBlobs, binding: str
) -> None:
    http, runtime = client
    small = os.urandom(400 * 1024)  # 533 KB of base64
    runtime.settings = dataclasses.replace(runtime.settings, inline_response_bytes=1_000_000)
    for i in range(2):
        part = {"raw": base64.b64encode(small).decode(), "filename": f"f{i}"}
        result(await call(http, binding, "SendMessage", {"message": message(f"m-{binding}-{i}", part)}))
    page = result(await call(http, binding, "ListTasks", {"includeArtifacts": True}))
    echoed = [t["artifacts"][0]["parts"][0] for t in page["tasks"]]
    assert sum("raw" in p for p in echoed) == 1  # the first fits the page's budget...
    assert sum("url" in p for p in echoed) == 1  # ...the second does not
    for p in echoed:
        assert (base64.b64decode(p["raw"]) if "raw" in p else blobs.fetch(p["url"])) == small
    assert Producer.seen[-2:] == [small, small]  # the executor got the user's file as sent


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_client_cannot_send_the_reserved_scheme(
    client: tuple[httpx.AsyncClient, Runtime], binding: str
) -> None:
    http, runtime = client
    part = {"url": "a2a-blob:raw:5:" + "0" * 64}
    answer = await call(http, binding, "SendMessage", {"message": message(f"m-ref-{binding}", part)})
    error = answer["error"]
    if binding == "jsonrpc":
        assert error["code"] == -32602
    else:
        assert answer["status"] == 400
    assert "a2a-blob" in json.dumps(error)
    assert runtime.store.find_key(Scope("", ANONYMOUS), SendKey.message(f"m-ref-{binding}")) is None


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_an_object_store_outage_on_read_is_a_clear_error(
    client: tuple[httpx.AsyncClient, Runtime], blobs: SigningBlobs, binding: str
) -> None:
    http, _ = client
    task_id = result(await call(http, binding, "SendMessage", {"message": message(f"m-out-{binding}")}))["task"]["id"]
    blobs.down = True
    answer = await call(http, binding, "GetTask", {"id": task_id})
    text = json.dumps(answer)
    assert "CONTENT_UNAVAILABLE" in text
    assert "Traceback" not in text
    assert "S3 is down" not in text
    if binding == "rest":
        assert answer["status"] == 503
    else:
        assert answer["error"]["code"] == -32603
    blobs.down = False
    assert result(await call(http, binding, "GetTask", {"id": task_id}))["artifacts"][0]["parts"][0] == {"text": TEXT}
