"""The local console (``/_console``): served only by the local stack, static files under a strict
Content-Security-Policy, and its dev API (a task's event log, push dead letters and their redrive,
the proxy to another agent)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import pytest_asyncio
from starlette.applications import Starlette
from starlette.routing import Route

from a2a_serverless.adapters.s3_blobs import PASSIVE_MEDIA_TYPES
from a2a_serverless.adapters.sqs import SqsDeliveryQueue
from a2a_serverless.config import Settings
from a2a_serverless.ports.store import Scope
from a2a_serverless.push.attempts import AttemptLog
from a2a_serverless.push.delivery import DeliveryItem, deliver
from a2a_serverless.push.sender import WebhookSender
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.console import CONSOLE_PATH, _proxy, console_routes, with_console
from testkit.aws import moto_clients
from testkit.sam_template import translate

if TYPE_CHECKING:
    from conftest import WebhookReceiver  # tests/conftest.py (the fixture's type)

CONSOLE = {"X-A2A-Console": "1"}
A2A = {"A2A-Version": "1.0"}


@pytest.fixture
def runtime() -> Runtime:
    return build_runtime(Settings(store="memory"))


def _client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


@pytest_asyncio.fixture
async def client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    try:
        async with _client(with_console(create_app(runtime), lambda: runtime)) as client:
            yield client
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


async def _send(client: httpx.AsyncClient, text: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}},
    }
    response = await client.post("/", json=body, headers=A2A)
    answer: dict[str, Any] = response.json()["result"]["task"]
    return answer


@pytest.mark.asyncio
async def test_the_deployed_app_has_no_console(runtime: Runtime) -> None:
    # Given the app the gateway function serves, built alone
    app = create_app(runtime)
    # Then none of its routes is under /_console, and asking for the console finds nothing
    paths = [route.path for route in app.routes if isinstance(route, Route)]
    assert not [p for p in paths if p.startswith(CONSOLE_PATH)]
    async with _client(app) as client:
        assert (await client.get(CONSOLE_PATH + "/")).status_code == 404
        assert (await client.get(CONSOLE_PATH + "/static/app.js")).status_code == 404


def _translated() -> dict[str, Any]:
    """template.yaml through CloudFormation's transforms, offline, with its defaults (as tests/template
    translates it)."""
    return translate({})


def test_the_template_routes_nothing_under_the_console(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the API Gateway paths of the translated template
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    translated = _translated()
    (api,) = [r for r in translated["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    patterns = [
        re.compile("^" + re.sub(r"\\\{[^}]+\\\+\\\}", ".+", re.sub(r"\\\{[^}+]+\\\}", "[^/]+", re.escape(p))) + "$")
        for p in api["Properties"]["Body"]["paths"]
    ]
    # Then no path of the console matches any of them
    app = Starlette(routes=console_routes(lambda: build_runtime(Settings(store="memory"))))
    console_paths = [
        route.path.replace("{task_id}", "t1").replace("{name}", "app.js")
        for route in app.routes
        if isinstance(route, Route)
    ]
    assert len(console_paths) >= 5
    for path in console_paths:
        assert path.startswith(CONSOLE_PATH)
        assert not [p.pattern for p in patterns if p.match(path)], path


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/_console/", id="page"),
        pytest.param("/_console/static/app.js", id="module"),
        pytest.param("/_console/static/console.css", id="stylesheet"),
        pytest.param("/_console/static/media-types.js", id="written-module"),
    ],
)
async def test_the_console_is_served_with_a_strict_content_security_policy(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.asyncio
async def test_the_page_has_no_inline_script_or_style_and_nothing_from_another_origin(
    client: httpx.AsyncClient,
) -> None:
    page = (await client.get("/_console/")).text
    assert "<style" not in page
    assert not re.search(r"<[^>]*\s(style|on[a-z]+)=", page), "an inline style or event handler"
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.DOTALL)
    assert scripts == [(' type="module" src="/_console/static/app.js"', "")]
    assert "http://" not in page
    assert "https://" not in page


@pytest.mark.asyncio
async def test_the_page_shows_as_themselves_the_media_types_stored_parts_are_served_as(
    client: httpx.AsyncClient,
) -> None:
    # The page's list (render.js) is the S3 adapter's allowlist, as a module the server writes
    module = await client.get("/_console/static/media-types.js")
    assert module.headers["content-type"] == "text/javascript; charset=utf-8"
    found = re.search(r"export const PASSIVE_MEDIA_TYPES = new Set\((\[.*\])\);", module.text)
    assert found is not None, module.text
    assert sorted(json.loads(found.group(1))) == sorted(PASSIVE_MEDIA_TYPES)


@pytest.mark.asyncio
async def test_only_the_console_s_own_files_are_served(client: httpx.AsyncClient) -> None:
    assert (await client.get("/_console/static/..%2f__init__.py")).status_code == 404
    assert (await client.get("/_console/static/_api.py")).status_code == 404
    assert (await client.get("/_console", follow_redirects=False)).headers["location"] == "/_console/"


@pytest.mark.asyncio
async def test_the_dev_api_gives_a_task_s_event_log_in_the_caller_s_scope(client: httpx.AsyncClient) -> None:
    # Given a task the demo agent completed
    task = await _send(client, "hello")
    # When the console reads its events
    answer = (await client.get(f"/_console/api/tasks/{task['id']}/events", headers=CONSOLE)).json()
    # Then it sees every event of the log, in order, with its kind and (where it has one) its time
    kinds = [(e["seq"], e["kind"]) for e in answer["events"]]
    assert kinds == [(1, "task"), (2, "statusUpdate"), (3, "artifactUpdate"), (4, "statusUpdate")]
    assert answer["events"][3]["event"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer["events"][0]["time"]
    assert answer["pushConfigs"] == []
    # And another tenant's scope sees nothing of it
    other = (await client.get(f"/_console/api/tasks/{task['id']}/events?tenant=other", headers=CONSOLE)).json()
    assert other["events"] == []


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        pytest.param({}, "no console header", id="no-header"),
        pytest.param({**CONSOLE, "Origin": "https://evil.example"}, "another origin", id="cross-origin"),
    ],
)
async def test_the_dev_api_refuses_what_is_not_its_own_page(
    client: httpx.AsyncClient, headers: dict[str, str], reason: str
) -> None:
    assert (await client.post("/_console/api/dead-letters:redrive", headers=headers)).status_code == 403, reason
    assert (
        await client.post("/_console/api/proxy", headers={**headers, "X-A2A-Target": "http://x/"})
    ).status_code == 403


@pytest.mark.asyncio
async def test_without_a_dead_letter_queue_the_console_says_so(client: httpx.AsyncClient) -> None:
    assert (await client.get("/_console/api/dead-letters", headers=CONSOLE)).json() == {
        "configured": False,
        "deadLetters": [],
    }
    assert (await client.post("/_console/api/dead-letters:redrive", headers=CONSOLE)).status_code == 404


@pytest.fixture
def queues() -> Iterator[tuple[Any, str, str]]:
    with moto_clients() as (_, sqs):
        fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        queue = sqs.create_queue(QueueName="push.fifo", Attributes=fifo)["QueueUrl"]
        dead = sqs.create_queue(QueueName="push-dlq.fifo", Attributes=fifo)["QueueUrl"]
        yield sqs, queue, dead


@pytest.mark.asyncio
async def test_dead_letters_are_listed_and_redriven(queues: tuple[Any, str, str]) -> None:
    # Given a stack whose push deliveries have a dead-letter queue holding one item
    sqs, queue, dead = queues
    settings = Settings(store="memory", push_queue_url=queue, push_dead_letter_queue_url=dead)
    runtime = build_runtime(settings)
    item = DeliveryItem("", "anonymous", "task-1", "cfg-1", up_to_seq=4, from_seq=2, last_error="http 500: boom")
    sqs.send_message(
        QueueUrl=dead, MessageBody=item.to_json(), MessageGroupId=item.group_id, MessageDeduplicationId="d1"
    )
    app = with_console(create_app(runtime), lambda: runtime, sqs=lambda: sqs)
    async with _client(app) as client:
        # When the console lists the dead letters (twice: a look leaves them where they are)
        await client.get("/_console/api/dead-letters", headers=CONSOLE)
        listed = (await client.get("/_console/api/dead-letters", headers=CONSOLE)).json()
        # Then it sees the item and why it failed, and knows it saw the whole queue
        assert (listed["configured"], listed["complete"]) == (True, True)
        (letter,) = listed["deadLetters"]
        assert letter | {"messageId": ""} == {
            "messageId": "",
            "taskId": "task-1",
            "configId": "cfg-1",
            "fromSeq": 2,
            "upToSeq": 4,
            "lastError": "http 500: boom",
            "redrive": "",
        }
        # And the redrive button moves it back onto the delivery queue, stamped with the redrive's id
        moved = (await client.post("/_console/api/dead-letters:redrive", headers=CONSOLE)).json()
        (row,) = moved["moved"]
        assert (row["taskId"], row["fromSeq"], row["upToSeq"], row["redrive"]) == ("task-1", 2, 4, moved["redriveId"])
        assert moved["reasons"] == {"http 500": 1}
        assert (await client.get("/_console/api/dead-letters", headers=CONSOLE)).json()["deadLetters"] == []
        # And while it waits on the delivery queue, its outcome is pending
        follow = {"redriveId": moved["redriveId"], "moved": moved["moved"]}
        answer = (await client.post("/_console/api/dead-letters:redrive-outcomes", headers=CONSOLE, json=follow)).json()
        assert [o["outcome"] for o in answer["outcomes"]] == ["pending"]
    runtime.queue.shutdown()  # type: ignore[attr-defined]
    (message,) = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert DeliveryItem.from_json(message["Body"]).task_id == "task-1"


@pytest.mark.asyncio
async def test_a_redrive_s_outcomes_are_told_once_the_deliveries_are_done(queues: tuple[Any, str, str]) -> None:
    # Given two dead letters of one task, redriven from the console
    sqs, queue, dead = queues
    runtime = build_runtime(Settings(store="memory", push_queue_url=queue, push_dead_letter_queue_url=dead))
    parking = SqsDeliveryQueue(queue, dead, client=sqs)
    for seq in (2, 3):
        parking.dead_letter(DeliveryItem("", "anonymous", "task-1", "cfg-1", seq, from_seq=seq, last_error="refused"))
    app = with_console(create_app(runtime), lambda: runtime, sqs=lambda: sqs)
    async with _client(app) as client:
        moved = (await client.post("/_console/api/dead-letters:redrive", headers=CONSOLE)).json()
        # When the delivery function takes them: event 2 is delivered, event 3 refused again
        for message in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]:
            item = DeliveryItem.from_json(message["Body"])
            if item.from_seq == 3:
                parking.dead_letter(replace(item, last_error="refused: HTTP 404"))
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
        follow = {"redriveId": moved["redriveId"], "moved": moved["moved"]}
        answer = (await client.post("/_console/api/dead-letters:redrive-outcomes", headers=CONSOLE, json=follow)).json()
        # Then the console tells which was delivered and which failed again, and why
        assert [(o["fromSeq"], o["outcome"]) for o in answer["outcomes"]] == [(2, "delivered"), (3, "failed again")]
        (back,) = answer["outcomes"][1]["returned"]
        assert back["lastError"] == "refused: HTTP 404"
        # And a body that is not a redrive's answer is refused
        bad = await client.post("/_console/api/dead-letters:redrive-outcomes", headers=CONSOLE, json={"moved": 1})
        assert bad.status_code == 400
    runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_dead_letters_need_the_a2a_credential_and_are_the_caller_s_own(queues: tuple[Any, str, str]) -> None:
    # Given an API-key stack, and dead letters of alice's and of bob's
    sqs, queue, dead = queues
    settings = Settings(
        store="memory",
        auth_mode="api-key",
        api_keys={"alice-key": "alice", "bob-key": "bob"},
        push_queue_url=queue,
        push_dead_letter_queue_url=dead,
    )
    runtime = build_runtime(settings)
    parking = SqsDeliveryQueue(queue, dead, client=sqs)
    for owner, seq in (("alice", 1), ("bob", 1), ("alice", 2)):
        parking.dead_letter(DeliveryItem("", owner, f"{owner}-task", "cfg-1", seq, from_seq=seq, last_error="x"))
    app = with_console(create_app(runtime), lambda: runtime, sqs=lambda: sqs)
    alice = {**CONSOLE, "Authorization": "Bearer alice-key"}
    async with _client(app) as client:
        # Without the key, or with a wrong one, nothing is listed, moved or told
        for headers in (CONSOLE, {**CONSOLE, "Authorization": "Bearer nope"}):
            assert (await client.get("/_console/api/dead-letters", headers=headers)).status_code == 401
            assert (await client.post("/_console/api/dead-letters:redrive", headers=headers)).status_code == 401
            outcomes = await client.post("/_console/api/dead-letters:redrive-outcomes", headers=headers, json={})
            assert outcomes.status_code == 401
        # Alice's listing shows hers only
        listed = (await client.get("/_console/api/dead-letters", headers=alice)).json()
        assert [d["taskId"] for d in listed["deadLetters"]] == ["alice-task", "alice-task"]
        # And her redrive moves hers only: bob's stays where it was
        moved = (await client.post("/_console/api/dead-letters:redrive", headers=alice)).json()
        assert [m["taskId"] for m in moved["moved"]] == ["alice-task", "alice-task"]
        bob = await client.get("/_console/api/dead-letters", headers={**CONSOLE, "Authorization": "Bearer bob-key"})
        assert [d["taskId"] for d in bob.json()["deadLetters"]] == ["bob-task"]
    runtime.queue.shutdown()  # type: ignore[attr-defined]
    queued = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert sorted(DeliveryItem.from_json(m["Body"]).owner for m in queued) == ["alice", "alice"]


@pytest.mark.asyncio
async def test_a_dead_letter_queue_that_does_not_answer_is_told_not_a_500(queues: tuple[Any, str, str]) -> None:
    # Given a stack whose dead-letter queue is gone (deleted, or moto not answering)
    sqs, queue, dead = queues
    sqs.delete_queue(QueueUrl=dead)
    runtime = build_runtime(Settings(store="memory", push_queue_url=queue, push_dead_letter_queue_url=dead))
    app = with_console(create_app(runtime), lambda: runtime, sqs=lambda: sqs)
    async with _client(app) as client:
        # When the console reads the dead letters, redrives them, or follows a redrive
        answers = [
            await client.get("/_console/api/dead-letters", headers=CONSOLE),
            await client.post("/_console/api/dead-letters:redrive", headers=CONSOLE),
            await client.post(
                "/_console/api/dead-letters:redrive-outcomes",
                headers=CONSOLE,
                json={"redriveId": "r1", "moved": [{"taskId": "t", "configId": "c", "upToSeq": 1}]},
            ),
        ]
    runtime.queue.shutdown()  # type: ignore[attr-defined]
    # Then each answer is a 502 with an error the page shows, naming what SQS said
    for answer in answers:
        assert answer.status_code == 502, answer.text
        assert "NonExistentQueue" in answer.json()["error"]


@pytest.mark.asyncio
async def test_a_redrive_s_outcomes_refuse_numbers_no_sequence_can_be(queues: tuple[Any, str, str]) -> None:
    sqs, queue, dead = queues
    runtime = build_runtime(Settings(store="memory", push_queue_url=queue, push_dead_letter_queue_url=dead))
    app = with_console(create_app(runtime), lambda: runtime, sqs=lambda: sqs)
    body = b'{"redriveId": "r1", "moved": [{"taskId": "t", "configId": "c", "upToSeq": 1e400}]}'
    async with _client(app) as client:
        answer = await client.post(
            "/_console/api/dead-letters:redrive-outcomes",
            headers={**CONSOLE, "Content-Type": "application/json"},
            content=body,
        )
    runtime.queue.shutdown()  # type: ignore[attr-defined]
    assert answer.status_code == 400, answer.text


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "target",
    [
        pytest.param("http://127.0.0.1:99999/", id="a-port-beyond-tcp"),
        pytest.param("http://127.0.0.1:0/", id="port-zero"),
        pytest.param(f"http://{'a' * 64}.example:4566/", id="a-name-no-dns-label-holds-on-moto-s-port"),
    ],
)
async def test_the_proxy_refuses_a_target_no_connection_can_reach(
    client: httpx.AsyncClient, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")  # the local stack's moto
    answer = await client.post("/_console/api/proxy", headers={**CONSOLE, "X-A2A-Target": target})
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"].startswith(("the proxy does not go to", "no A2A agent card found"))


async def _send_with_webhook(client: httpx.AsyncClient, text: str, url: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"taskPushNotificationConfig": {"url": url, "token": "sekrit-token"}},
        },
    }
    response = await client.post("/", json=body, headers=A2A)
    answer: dict[str, Any] = response.json()["result"]["task"]
    return answer


@pytest.mark.asyncio
async def test_a_task_s_delivery_attempts_and_dead_letters_are_listed(
    queues: tuple[Any, str, str],
    webhook_receiver: WebhookReceiver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the local stack's attempt log, a dead-letter queue, and two tasks each with a webhook
    sqs, queue, dead = queues
    log = tmp_path / "push-attempts.jsonl"
    settings = Settings(
        store="memory",
        push_queue_url=queue,
        push_dead_letter_queue_url=dead,
        push_attempt_log=str(log),
        allow_private_webhooks=True,
    )
    runtime = build_runtime(settings)
    app = with_console(create_app(runtime), lambda: runtime, sqs=lambda: sqs)
    dead_letters = SqsDeliveryQueue(queue, dead, client=sqs)
    sender = WebhookSender(timeout=2.0, allow_private=True)
    async with _client(app) as client:
        good = await _send_with_webhook(client, "hello", f"{webhook_receiver.url}/good?key=sekrit-query")
        failing = await _send_with_webhook(client, "hello", f"{webhook_receiver.url}/failing")

        def delivery(task: dict[str, Any], attempt: int) -> None:
            (config,), _ = runtime.store.list_push_configs(Scope("", "anonymous"), task["id"])
            result = deliver(
                DeliveryItem("", "anonymous", task["id"], config.id, up_to_seq=4),
                store=runtime.store,
                sender=sender,
                signer=None,
                attempt=attempt,
                max_attempts=3,
                timeout_seconds=2.0,
                attempt_log=AttemptLog(settings.push_attempt_log),  # as the delivery function passes it
            )
            for letter in result.dead_letters:
                dead_letters.dead_letter(letter)

        # When the first task's webhook takes every event, and the second's answers HTTP 500 three times
        delivery(good, 1)
        webhook_receiver.set_down(500)
        for attempt in (1, 2, 3):
            delivery(failing, attempt)

        # Then the console lists the first task's four deliveries, oldest first, no dead letter
        answer = (await client.get(f"/_console/api/tasks/{good['id']}/push-attempts", headers=CONSOLE)).json()
        assert answer["recorded"] is True
        assert [(a["seq"], a["attempt"], a["status"], a["outcome"]) for a in answer["attempts"]] == [
            (seq, 1, 204, "delivered") for seq in (1, 2, 3, 4)
        ]
        assert all(isinstance(a["latencyMs"], float) for a in answer["attempts"])
        assert answer["deadLetters"] == []
        # And the second task's retrying attempts, the last one dead-lettered, and its dead letter
        answer = (await client.get(f"/_console/api/tasks/{failing['id']}/push-attempts", headers=CONSOLE)).json()
        assert [(a["seq"], a["attempt"], a["status"], a["outcome"]) for a in answer["attempts"]] == [
            (1, 1, 500, "retrying"),
            (1, 2, 500, "retrying"),
            (1, 3, 500, "dead-lettered"),
        ]
        (letter,) = answer["deadLetters"]
        assert (letter["taskId"], letter["fromSeq"], letter["upToSeq"]) == (failing["id"], 1, 4)
        assert "HTTP 500" in letter["lastError"]
        # And another tenant sees none of it; no secret was recorded
        other = f"/_console/api/tasks/{failing['id']}/push-attempts?tenant=other"
        assert (await client.get(other, headers=CONSOLE)).json() | {"taskId": ""} == {
            "taskId": "",
            "recorded": True,
            "attempts": [],
            "omitted": 0,
            "deadLetters": [],
        }
        assert "sekrit" not in log.read_text()
    sender.close()
    runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_without_an_attempt_log_the_console_says_so(client: httpx.AsyncClient) -> None:
    task = await _send(client, "hello")
    answer = (await client.get(f"/_console/api/tasks/{task['id']}/push-attempts", headers=CONSOLE)).json()
    assert (answer["recorded"], answer["attempts"], answer["deadLetters"]) == (False, [], [])


@pytest.mark.asyncio
async def test_the_proxy_forwards_to_another_agent_and_streams_its_answer(runtime: Runtime) -> None:
    # Given another agent, reachable only through the proxy (served here by an in-process transport)
    other_runtime = build_runtime(Settings(store="memory"))
    transport = httpx.ASGITransport(app=create_app(other_runtime))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_proxy, "_upstream_transport", lambda: transport)
        async with _client(with_console(create_app(runtime), lambda: runtime)) as client:
            # When the console asks for its card and streams a message to it
            card = await client.get(
                "/_console/api/proxy",
                headers={**CONSOLE, "X-A2A-Target": "http://other.test/.well-known/agent-card.json"},
            )
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendStreamingMessage",
                "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}},
            }
            stream = await client.post(
                "/_console/api/proxy",
                json=body,
                headers={**CONSOLE, **A2A, "Accept": "text/event-stream", "X-A2A-Target": "http://other.test/"},
            )
    other_runtime.queue.shutdown()  # type: ignore[attr-defined]
    # Then it gets the other agent's answers, the stream as a stream
    assert card.status_code == 200
    assert card.json()["name"]
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert "Echo: hello" in stream.text
    assert "id: 4" in stream.text
    assert "default-src 'self'" in stream.headers["content-security-policy"]


@pytest.mark.asyncio
async def test_the_proxy_takes_only_http_urls(client: httpx.AsyncClient) -> None:
    for target in ("file:///etc/passwd", "javascript:alert(1)", "not a url"):
        assert (await client.get("/_console/api/proxy", headers={**CONSOLE, "X-A2A-Target": target})).status_code == 400
