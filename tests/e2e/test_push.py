"""Push notifications end to end on the real local stack, delivered to a real receiver on 127.0.0.1.

The path under test is the deployed one: the task's events land in the table (moto server), the
table's stream feeds the dispatcher (the local stream event source), the dispatcher fills the FIFO
delivery queue, and the delivery function POSTs, retries with backoff, and dead-letters. Configs
are registered with the official a2a-sdk client. This stack gives up after 3 attempts with short
backoff, so the dead-letter path runs in seconds.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import socket
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from e2e_stack import StackProcess, running_stack
from httpx_sse import aconnect_sse

from a2a_serverless.push.redrive import deliveries_pending, read_dead_letters
from a2a_serverless.push.verify import JwksCache
from testkit.sdk import sdk_session, send, user_message
from testkit.waiting import wait_until

if TYPE_CHECKING:
    from conftest import ReceivedRequest, WebhookReceiver  # tests/conftest.py

pytestmark = pytest.mark.e2e

SETTINGS = {
    "A2A_PUSH_MAX_ATTEMPTS": "3",
    "A2A_PUSH_BACKOFF_BASE_SECONDS": "1",
    "A2A_PUSH_BACKOFF_MAX_SECONDS": "1",
    # A blocking answer waits for its push up to this (and A2A_BLOCKING_WAIT_SECONDS, 25): a hang
    # guard on a busy machine, where the default 5 s could run out before a stack's first delivery.
    "A2A_PUSH_WAIT_SECONDS": "25",
}
REDRIVE_HINT = re.compile(r"push-redrive --endpoint-url (\S+) --queue-url (\S+) --dead-letter-url (\S+)")
BINDINGS = [pytest.param("JSONRPC", id="jsonrpc"), pytest.param("HTTP+JSON", id="http-json")]


@pytest.fixture(scope="module")
def push_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, StackProcess]]:
    with running_stack(tmp_path_factory.mktemp("push-stack"), SETTINGS) as stack:
        yield stack


async def send_with_webhook(base_url: str, binding: str, text: str, hook: str, **configuration: Any) -> str:
    """SendMessage through the a2a-sdk client with an inline push config; returns the task id."""
    config = TaskPushNotificationConfig(url=hook, token="tok-e2e")
    request = SendMessageRequest(
        message=user_message(text),
        configuration=SendMessageConfiguration(task_push_notification_config=config, **configuration),
    )
    async with sdk_session(base_url, binding) as session:
        return str((await send(session.client, request)).id)


async def blocking_send(base_url: str, binding: str, hook: str, text: str) -> Task:
    """A blocking SendMessage through the a2a-sdk client with an inline push config; its answer."""
    config = TaskPushNotificationConfig(url=hook, token="tok-e2e")
    request = SendMessageRequest(
        message=user_message(text), configuration=SendMessageConfiguration(task_push_notification_config=config)
    )
    async with sdk_session(base_url, binding) as session:
        return await send(session.client, request)


def events_of(receiver: WebhookReceiver, path: str) -> list[ReceivedRequest]:
    return receiver.accepted(path)


def posts_to(receiver: WebhookReceiver, path: str) -> list[ReceivedRequest]:
    """Every POST ``path`` got, whatever the receiver answered."""
    return [r for r in receiver.requests if r.path == path]


async def a_dead_lettered_task(
    push_stack: tuple[str, StackProcess], receiver: WebhookReceiver, status: int, path: str
) -> tuple[str, int]:
    """A task whose every notification ``path`` refused with ``status`` until each was
    dead-lettered: its id, and what the dead-letter queue then holds."""
    base_url, stack = push_stack
    receiver.set_down(status)
    task_id = await send_with_webhook(base_url, "JSONRPC", f"refused with {status}", f"{receiver.url}{path}")
    return task_id, await _until_dead_lettered(base_url, stack, task_id)


def reached(requests: list[ReceivedRequest], path: str, state: str) -> bool:
    """``path`` accepted a status update to ``state``."""
    accepted = [r for r in requests if r.path == path and r.status < 300]
    return any(r.json().get("statusUpdate", {}).get("status", {}).get("state") == state for r in accepted)


def is_complete(requests: list[ReceivedRequest], path: str) -> bool:
    return reached(requests, path, "TASK_STATE_COMPLETED")


def assert_whole_log_in_order(received: list[ReceivedRequest], task_id: str) -> None:
    """Seq 1..n, each once, in order: the task snapshot first and COMPLETED last."""
    seqs = [int(r.headers["x-a2a-event-sequence"]) for r in received]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    assert [r.headers["x-a2a-event-id"] for r in received] == [f"{task_id}:{n}" for n in seqs]
    assert received[0].json()["task"]["id"] == task_id
    assert received[-1].json()["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    kinds = [next(iter(r.json())) for r in received]
    assert "artifactUpdate" in kinds


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_every_event_arrives_in_order_with_headers_and_a_verifiable_signature(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver, binding: str
) -> None:
    base_url, _ = push_stack
    hook = f"{webhook_receiver.url}/{binding}"

    # When a task is sent with an inline webhook config
    task_id = await send_with_webhook(base_url, binding, "hello push", hook)

    # Then the receiver gets the task's whole event log, in order, once each
    path = f"/{binding}"
    webhook_receiver.wait_for(lambda requests: is_complete(requests, path))
    received = events_of(webhook_receiver, path)
    assert_whole_log_in_order(received, task_id)
    echo = [r.json()["artifactUpdate"] for r in received if "artifactUpdate" in r.json()]
    assert echo[0]["artifact"]["parts"] == [{"text": "Echo: hello push"}]
    # with the spec's headers
    for request in received:
        assert request.headers["content-type"] == "application/a2a+json"
        assert request.headers["x-a2a-notification-token"] == "tok-e2e"
    # and a JWT that verifies against the agent's published JWKS, bound to each body
    with JwksCache(f"{base_url}/.well-known/jwks.json") as keys:
        for request in received:
            verified = keys.verify(request.headers, request.body, issuer=base_url, audience=hook)
            assert verified.task_id == task_id
            assert verified.event_id == request.headers["x-a2a-event-id"]


@pytest.mark.asyncio
@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_blocking_answer_finds_its_terminal_push_already_at_the_webhook(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver, binding: str
) -> None:
    base_url, _ = push_stack
    path = f"/blocking-{binding}"

    # When a blocking SendMessage carries an inline webhook config
    task = await blocking_send(base_url, binding, f"{webhook_receiver.url}{path}", "hello push")

    # Then, read the moment the answer is here, the receiver already holds the COMPLETED push
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert is_complete(webhook_receiver.requests, path)
    assert_whole_log_in_order(events_of(webhook_receiver, path), task.id)


@pytest.mark.asyncio
async def test_a_blocking_continuation_finds_its_push_at_a_webhook_created_on_the_task(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver
) -> None:
    base_url, _ = push_stack
    async with sdk_session(base_url, "HTTP+JSON") as session:
        # Given a task waiting for input, and a webhook config created on it
        asked = await send(session.client, SendMessageRequest(message=user_message("ask me")))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        await session.client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=asked.id, url=f"{webhook_receiver.url}/created", token="tok-e2e")
        )

        # When the answer is sent, blocking
        answered = await send(session.client, SendMessageRequest(message=user_message("Ann", task_id=asked.id)))

    # Then the COMPLETED push is at the webhook when the answer comes
    assert answered.status.state == TaskState.TASK_STATE_COMPLETED
    assert is_complete(webhook_receiver.requests, "/created")


@pytest.mark.asyncio
async def test_a_receiver_that_fails_its_first_attempts_still_gets_everything(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver
) -> None:
    base_url, _ = push_stack
    webhook_receiver.fail_next(2, status=503)

    task_id = await send_with_webhook(base_url, "HTTP+JSON", "flaky receiver", f"{webhook_receiver.url}/flaky")

    webhook_receiver.wait_for(lambda requests: is_complete(requests, "/flaky"), timeout=30)
    assert_whole_log_in_order(events_of(webhook_receiver, "/flaky"), task_id)
    statuses = [r.status for r in webhook_receiver.requests]
    assert statuses[:2] == [503, 503]
    # The retries were of the first event: nothing overtook it
    assert {r.headers["x-a2a-event-sequence"] for r in webhook_receiver.requests[:3]} == {"1"}


@pytest.mark.asyncio
async def test_a_receiver_down_past_the_budget_gets_everything_after_a_redrive(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver
) -> None:
    _, stack = push_stack
    # Given a task whose notifications were all refused until the attempts ran out
    task_id, dead = await a_dead_lettered_task(push_stack, webhook_receiver, 503, "/down")
    attempts = posts_to(webhook_receiver, "/down")
    assert attempts
    assert all(r.status == 503 for r in attempts)

    # When the receiver is back and the command the stack printed redrives the dead letters
    webhook_receiver.set_up()
    result = await asyncio.to_thread(run_printed_redrive, stack)
    assert result.returncode == 0, result.stderr
    assert f"moved {dead} dead-lettered deliveries" in result.stdout
    assert f"delivered {dead}, failed again 0" in result.stdout

    # Then every event of the task arrives (redriven ones after what was still queued: a redrive
    # cannot go back in time), each exactly once, with its stable event id
    webhook_receiver.wait_for(lambda requests: _has_whole_log(requests, "/down"), timeout=30)
    received = events_of(webhook_receiver, "/down")
    ids = [r.headers["x-a2a-event-id"] for r in received]
    assert len(ids) == len(set(ids)), ids
    assert sorted(int(i.rsplit(":", 1)[1]) for i in ids) == list(range(1, len(ids) + 1))
    assert {r.json().get("task", {}).get("id") for r in received} >= {task_id}
    assert _dead_letter_count(stack) == 0


@pytest.mark.asyncio
async def test_a_redrive_to_a_receiver_that_still_refuses_sends_each_dead_letter_once(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver
) -> None:
    _, stack = push_stack
    # Given a task whose every notification was refused (404: final, each event dead-lettered alone)
    task_id, _ = await a_dead_lettered_task(push_stack, webhook_receiver, 404, "/refused")
    refused = len(posts_to(webhook_receiver, "/refused"))
    assert refused >= 4  # the task, its updates, its artifact: one POST each

    # When the printed command redrives them while the receiver still refuses
    result = await asyncio.to_thread(run_printed_redrive, stack)

    # Then it ends, each dead letter was POSTed once more and came back once, and it says so
    assert result.returncode == 0, result.stderr
    assert len(posts_to(webhook_receiver, "/refused")) == 2 * refused
    mine = [line for line in result.stdout.splitlines() if f"task {task_id}" in line]
    assert len(mine) == refused, result.stdout
    assert all(line.split()[:2] == ["failed", "again"] and "refused: HTTP 404" in line for line in mine), mine
    assert _dead_letter_count(stack) >= refused


@pytest.mark.asyncio
async def test_deleting_a_config_stops_its_deliveries(
    push_stack: tuple[str, StackProcess], webhook_receiver: WebhookReceiver
) -> None:
    base_url, stack = push_stack
    hook = f"{webhook_receiver.url}/deleted"
    # Given a task waiting for input, whose webhook got everything up to that point
    task_id = await send_with_webhook(base_url, "HTTP+JSON", "ask me", hook, return_immediately=True)
    webhook_receiver.wait_for(lambda requests: reached(requests, "/deleted", "TASK_STATE_INPUT_REQUIRED"))

    async with sdk_session(base_url) as session:
        client = session.client
        # And a second webhook on the same task, which stays
        await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task_id, url=f"{webhook_receiver.url}/kept", token="tok-e2e")
        )
        # When the first one's config is deleted, and only then the task goes on to its end
        configs = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        (config,) = [c for c in configs.configs if c.url == hook]
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config.id)
        )
        before = posts_to(webhook_receiver, "/deleted")
        answered = await send(client, SendMessageRequest(message=user_message("Ann", task_id=task_id)))
        assert answered.status.state == TaskState.TASK_STATE_COMPLETED

    # Then the kept webhook gets the task's end, and once every delivery it caused is done, the
    # deleted one has got nothing since its deletion: none of the events logged after it
    webhook_receiver.wait_for(lambda requests: is_complete(requests, "/kept"))
    await _until_deliveries_done(stack)
    assert posts_to(webhook_receiver, "/deleted") == before


@pytest.mark.asyncio
async def test_a_blocking_answer_comes_back_when_its_webhook_is_dead(push_stack: tuple[str, StackProcess]) -> None:
    base_url, stack = push_stack
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/hook"

    # When a blocking SendMessage names a webhook that refuses every connection
    task = await asyncio.wait_for(blocking_send(base_url, "JSONRPC", dead, "hello dead hook"), timeout=120)

    # Then the answer comes back (the hang guard above is generous), with the task terminal
    assert task.status.state == TaskState.TASK_STATE_COMPLETED

    # (Its config deleted, its retries are dropped: no dead letter for the redrive tests to find.)
    async with sdk_session(base_url) as session:
        listed = await session.client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        for config in listed.configs:
            await session.client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=config.id)
            )
    await _until_deliveries_done(stack)


def _has_whole_log(requests: list[ReceivedRequest], path: str) -> bool:
    accepted = [r for r in requests if r.path == path and r.status < 300]
    seqs = {int(r.headers["x-a2a-event-sequence"]) for r in accepted}
    return is_complete(requests, path) and seqs == set(range(1, max(seqs) + 1))


def _printed_redrive(stack: StackProcess) -> str:
    """The redrive command line the stack printed."""
    for line in stack.stderr + stack.stdout:
        if REDRIVE_HINT.search(line):
            return line.split("redrive dead-lettered push deliveries with: ", 1)[1]
    raise AssertionError(f"the stack did not print the redrive command\n{stack.output()}")


def _redrive_urls(stack: StackProcess) -> tuple[str, str, str]:
    """The printed redrive command's endpoint, delivery queue and dead-letter queue."""
    match = REDRIVE_HINT.search(_printed_redrive(stack))
    assert match is not None
    return match.group(1), match.group(2), match.group(3)


def run_printed_redrive(stack: StackProcess) -> subprocess.CompletedProcess[str]:
    """The redrive command line the stack printed, run as printed from the environment that started
    the stack, without any AWS credentials, region or configuration."""
    command = shlex.split(_printed_redrive(stack))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull  # none of the user's AWS setup
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def _sqs(endpoint: str) -> Any:
    import boto3

    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _dead_letter_count(stack: StackProcess) -> int:
    """What the dead-letter queue holds (SQS's count)."""
    endpoint, _, dead_letter_url = _redrive_urls(stack)
    attributes = _sqs(endpoint).get_queue_attributes(
        QueueUrl=dead_letter_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


async def _until_deliveries_done(stack: StackProcess, within: float = 60.0) -> None:
    """Until nothing is left on the delivery queue: none pending, in flight or delayed."""
    endpoint, queue_url, _ = _redrive_urls(stack)
    sqs = _sqs(endpoint)
    await asyncio.to_thread(
        wait_until, lambda: deliveries_pending(sqs, queue_url) == 0, "the deliveries done", within=within, every=0.25
    )


async def _until_dead_lettered(base_url: str, stack: StackProcess, task_id: str, within: float = 60.0) -> int:
    """Until every event of the task (which must end) has been dead-lettered and nothing is left on
    the delivery queue; returns what the dead-letter queue then holds (SQS's count)."""
    endpoint, queue_url, dead_letter_url = _redrive_urls(stack)
    log = set(range(1, await asyncio.wait_for(_last_event_id(base_url, task_id), within) + 1))
    sqs = _sqs(endpoint)

    def all_dead_lettered() -> bool:
        letters = read_dead_letters(sqs, dead_letter_url, long_poll_seconds=0).letters
        covered = {
            seq
            for letter in letters
            if letter.item is not None and letter.item.task_id == task_id
            for seq in range(letter.item.from_seq, letter.item.up_to_seq + 1)
        }
        return covered >= log and deliveries_pending(sqs, queue_url) == 0

    await asyncio.to_thread(
        wait_until, all_dead_lettered, "the task's events all dead-lettered", within=within, every=0.25
    )
    return _dead_letter_count(stack)


async def _last_event_id(base_url: str, task_id: str) -> int:
    """The task's last event id (its sequence number): the last id of a stream of the whole log, a
    SubscribeToTask resumed from the start, which ends with the task."""
    headers = {"A2A-Version": "1.0", "Last-Event-ID": "0"}
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=60.0) as http,
        aconnect_sse(http, "GET", f"/tasks/{task_id}:subscribe", headers=headers) as source,
    ):
        ids = [int(sse.id) async for sse in source.aiter_sse()]
    assert ids, f"no events for task {task_id}"
    return ids[-1]
