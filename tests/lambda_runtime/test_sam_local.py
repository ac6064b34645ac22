"""The template under `sam local`, from `sam build`'s own output, in the Lambda Python 3.13 image:
``sam local start-api`` (SAM's API Gateway emulation and the Lambda authorizer in AuthMode Jwt) driven
by the real a2a-sdk client and raw httpx, and ``sam local invoke`` of the event-driven functions with
the events their event sources send, the functions reaching moto in a container (:mod:`sam_local`).

The event-driven functions get their events from the local stack's own emulation of the event source
mappings (its SQS and DynamoDB stream pollers and its schedule), with each invocation a ``sam local
invoke``: a task sent through start-api is run by the worker in a Lambda container and read back
through start-api. One module: its fixtures (one start-api, one moto) are shared by every test in it,
and pytest-xdist (``--dist loadfile``) keeps them on one worker.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from joserfc.jwk import ECKey
from sam_local import AUDIENCE, ISSUER, SamLocal, report, sam_local, wait_until

from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.delegation.hook import new_ref
from a2a_serverless.mutation import mutate
from a2a_serverless.ports import Scope
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.transitions import LEASE_LOST_TEXT, claim
from a2a_serverless_dev._functions import EventSources, poller_for, schedule_poller_for, stream_poller_for
from a2a_serverless_dev.resources import load_template
from testkit.sdk import send, user_message

pytestmark = pytest.mark.lambda_runtime

V1 = {"A2A-Version": "1.0"}
JSON = {"Content-Type": "application/json"}
HOOK = "https://example.com/hook"


@pytest.fixture(scope="module")
def sam(
    request: pytest.FixtureRequest,
    sam_build: Any,
    lambda_image: str,
    python313: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SamLocal]:
    parameters = {
        "Architecture": lambda_image.rpartition("-")[2],
        # No Lambda Web Adapter (an ARN sam local cannot fetch): the gateway answers buffered.
        "WebAdapterLayerVersion": "0",
        "AuthMode": "Jwt",
        "JwtIssuer": ISSUER,
        "JwtAudience": AUDIENCE,
        # No worker runs behind start-api: a blocking SendMessage answers after 1 s, not 25.
        "BlockingWaitSeconds": "1",
    }
    workdir = tmp_path_factory.mktemp("sam-local")
    with sam_local(sam_build.directory, lambda_image, python313, workdir, parameters) as local:
        try:
            yield local
        finally:
            report(request.config, local.timings.summary())


@pytest.fixture(scope="module")
def api(sam: SamLocal) -> Iterator[str]:
    with sam.start_api() as url:
        yield url


@pytest.fixture(scope="module")
def bearer(sam: SamLocal) -> dict[str, str]:
    return {"Authorization": f"Bearer {sam.issuer.token()}"}


@pytest.fixture(scope="module")
def http(api: str, bearer: dict[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api, headers=bearer, timeout=120) as client:
        yield client


def message(text: str, message_id: str = "", **fields: Any) -> dict[str, Any]:
    return {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def send_rest(http: httpx.Client, text: str, message_id: str = "") -> dict[str, Any]:
    """SendMessage over REST 1.0, answered without waiting for the run."""
    body = {"message": message(text, message_id), "configuration": {"returnImmediately": True}}
    response = http.post("/message:send", json=body, headers={**V1, **JSON})
    assert response.status_code == 200, response.text
    task: dict[str, Any] = response.json()["task"]
    return task


def get_task(http: httpx.Client, task_id: str) -> dict[str, Any]:
    response = http.get(f"/tasks/{task_id}", headers=V1)
    assert response.status_code == 200, response.text
    task: dict[str, Any] = response.json()
    return task


def texts(task: dict[str, Any]) -> list[str]:
    return [part["text"] for artifact in task.get("artifacts", []) for part in artifact["parts"] if "text" in part]


# -------------------------------------------------------------------------- start-api: the card


def test_the_card_is_public_and_names_the_api_and_its_issuer(api: str) -> None:
    # When anyone asks for the card, without a token
    response = httpx.get(f"{api}/.well-known/agent-card.json", timeout=120)

    # Then SAM's API answers with the card: its interfaces at the API's URL, the token issuer named
    assert response.status_code == 200, response.text
    card = response.json()
    urls = {(i["protocolBinding"], i["protocolVersion"]): i["url"] for i in card["supportedInterfaces"]}
    assert urls == {
        ("JSONRPC", "1.0"): f"{api}/",
        ("HTTP+JSON", "1.0"): api,
        ("JSONRPC", "0.3"): f"{api}/",
        ("HTTP+JSON", "0.3"): api,
    }
    assert ISSUER in json.dumps(card["securitySchemes"])


def test_the_delegation_push_receiver_is_public_and_answers_in_fixed_words(api: str) -> None:
    # When a push comes, without the API's token, to a reference of the right shape that stands for
    # no delegation (Queue mode: nothing ever waits)
    ref = new_ref()
    response = httpx.post(
        f"{api}/_a2a/delegations/{ref}",
        json={"task": {"id": "r1", "status": {"state": "TASK_STATE_COMPLETED"}}},
        headers={"X-A2A-Notification-Token": "whatever"},
        timeout=120,
    )

    # Then the gateway's receiver (no authorizer: the token is its credential) answers it
    assert (response.status_code, response.json()) == (404, {"status": "no such delegation"})


# ------------------------------------------------------------- sam local invoke: the worker
# First in the module: the work queue is empty, and each test runs the one work item it queued (the
# tests after these leave theirs queued: no worker runs behind start-api).


def assert_no_work_queued(sam: SamLocal) -> None:
    attributes = sam.aws("sqs").get_queue_attributes(
        QueueUrl=sam.resources.queue_urls["WorkQueue"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert attributes == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


def run_queued_work(sam: SamLocal, within: float = 180) -> None:
    """Deliver the queued work item to the worker as Lambda's SQS event source mapping does: the
    local stack's poller of the work queue (the template's event source), each invocation a
    ``sam local invoke WorkerFunction``; the item is deleted once the worker succeeded."""
    template = load_template(sam.build / "template.yaml")
    (source,) = EventSources.of(template, "WorkerFunction").sqs
    poller = poller_for(source, sam.resources, sam.moto_url, sam.handler("WorkerFunction"), "sam")()
    deadline = time.monotonic() + within
    while poller.poll_once() == 0:
        assert time.monotonic() < deadline, "no work item was queued"
    assert_no_work_queued(sam)


def test_a_task_sent_through_start_api_is_run_by_the_worker_under_sam_local_invoke(
    sam: SamLocal, http: httpx.Client
) -> None:
    # Given a message sent through start-api, its work queued
    assert_no_work_queued(sam)
    task = send_rest(http, "hello from a Lambda container")
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"

    # When its work item reaches the worker as an SQS event (sam local invoke WorkerFunction)
    run_queued_work(sam)

    # Then the task read back through start-api is COMPLETED with the demo agent's answer
    done = get_task(http, task["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert texts(done) == ["Echo: hello from a Lambda container"]


def test_a_streaming_route_answers_the_whole_stream_buffered(sam: SamLocal, http: httpx.Client) -> None:
    # Given a SendStreamingMessage in flight through start-api (no adapter: the gateway buffers)
    assert_no_work_queued(sam)
    answers: list[httpx.Response] = []
    body = {"message": message("stream me")}
    stream = threading.Thread(
        target=lambda: answers.append(http.post("/message:stream", json=body, headers={**V1, **JSON}, timeout=600))
    )
    stream.start()

    # When the worker runs its task (sam local invoke), which ends the stream
    run_queued_work(sam)
    stream.join(timeout=300)

    # Then the stream's answer is its whole body of server-sent events, up to the final status
    (response,) = answers
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert texts(get_task(http, events[0]["task"]["id"])) == ["Echo: stream me"]


# -------------------------------------------------------------------------- start-api: auth


DENIED = [
    pytest.param("no-token", "no Authorization header", id="no-token"),
    pytest.param("not-bearer", "not 'Bearer <token>'", id="not-bearer"),
    pytest.param("signed-by-another-key", "signature is invalid", id="signed-by-another-key"),
    pytest.param("another-audience", "another audience", id="another-audience"),
    pytest.param("expired", "has expired", id="expired"),
]


def denials(sam: SamLocal) -> list[str]:
    """The reasons the authorizer logged for the requests it denied, in order."""
    lines = [json.loads(line) for line in sam.log().splitlines() if line.startswith('{"level"')]
    return [str(line["reason"]) for line in lines if line.get("message") == "request denied"]


def authorization(sam: SamLocal, case: str) -> dict[str, str]:
    now = int(time.time())
    if case == "no-token":
        return {}
    if case == "not-bearer":
        return {"Authorization": "Basic YWxpY2U6c2VjcmV0"}
    if case == "signed-by-another-key":  # the issuer's key id, another key
        token = sam.issuer.token(key=ECKey.generate_key("P-256", parameters={"kid": sam.issuer.key.kid}))
    elif case == "another-audience":
        token = sam.issuer.token(aud="another-api")
    else:
        token = sam.issuer.token(iat=now - 7200, exp=now - 3600)
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(("case", "reason"), DENIED)
def test_a_request_without_a_valid_token_is_denied_and_reaches_no_function(
    sam: SamLocal, api: str, http: httpx.Client, case: str, reason: str
) -> None:
    # Given a request the authorizer must refuse
    headers = {**authorization(sam, case), **V1, **JSON}
    context_id = f"denied-{uuid.uuid4()}"
    denied_before = len(denials(sam))

    # When it sends a message, over each binding
    params = {"message": message("let me in", contextId=context_id)}
    rest = httpx.post(f"{api}/message:send", json=params, headers=headers, timeout=120)
    rpc = httpx.post(
        f"{api}/",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params},
        headers=headers,
        timeout=120,
    )

    # Then the authorizer denied both, for the reason the case is about, and SAM answered as its API
    # Gateway emulation does for a denial: it takes the authorizer's error (which API Gateway answers
    # with 401 Unauthorized) for a response without a policy, and answers 502
    wait_until(lambda: len(denials(sam)) >= denied_before + 2, "the authorizer's log of the denials", 30)
    assert [reason in logged for logged in denials(sam)[denied_before:]] == [True, True]
    for response in (rest, rpc):
        assert (response.status_code, response.json()) == (502, {"message": "Internal server error"})
    # and no function behind the routes ran: no task was made
    listed = http.get("/tasks", params={"contextId": context_id}, headers=V1)
    assert listed.status_code == 200, listed.text
    assert listed.json()["tasks"] == []


# ------------------------------------------------------------------ start-api: the sdk client


@dataclass
class Sdk:
    client: Client
    http: httpx.AsyncClient
    """The client's HTTP client (with the token), for what the SDK's transport lacks."""


@asynccontextmanager
async def sdk_client(api: str, bearer: dict[str, str], binding: str, version: str) -> AsyncIterator[Sdk]:
    """The a2a-sdk 1.x client on one binding of one protocol version (the card's other interfaces
    left out, so a 0.3 client is the SDK's v0.3 compatibility transport)."""
    headers = {**bearer, **(V1 if version == "1.0" else {})}
    async with httpx.AsyncClient(base_url=api, timeout=120, headers=headers) as http:
        card: AgentCard = await A2ACardResolver(http, api).get_agent_card()
        kept = [i for i in card.supported_interfaces if (i.protocol_binding, i.protocol_version) == (binding, version)]
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(kept)
        config = ClientConfig(supported_protocol_bindings=[binding], streaming=False, httpx_client=http)
        client = ClientFactory(config).create(card)
        try:
            yield Sdk(client, http)
        finally:
            await client.close()


# What the SDK's v0.3 REST transport lacks (list and delete of push configs) is sent raw, with the
# version header its v0.3 transports send (the SDK sets 1.0 on its HTTP client's own headers).
V03 = {"A2A-Version": "0.3"}


async def config_ids(sdk: Sdk, task_id: str, rest_03: bool) -> list[str]:
    """ListTaskPushNotificationConfigs."""
    if rest_03:
        listed = await sdk.http.get(f"/v1/tasks/{task_id}/pushNotificationConfigs", headers=V03)
        assert listed.status_code == 200, listed.text
        return [c["pushNotificationConfig"]["id"] for c in listed.json().get("configs", [])]
    configs = await sdk.client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task_id)
    )
    return [c.id for c in configs.configs]


async def delete_config(sdk: Sdk, task_id: str, config_id: str, rest_03: bool) -> None:
    """DeleteTaskPushNotificationConfig."""
    if rest_03:
        deleted = await sdk.http.delete(f"/v1/tasks/{task_id}/pushNotificationConfigs/{config_id}", headers=V03)
        assert deleted.status_code == 200, deleted.text
        return
    await sdk.client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
    )


@pytest.mark.parametrize(
    ("binding", "version"),
    [
        pytest.param("JSONRPC", "1.0", id="jsonrpc-1.0"),
        pytest.param("HTTP+JSON", "1.0", id="rest-1.0"),
        pytest.param("JSONRPC", "0.3", id="jsonrpc-0.3"),
        pytest.param("HTTP+JSON", "0.3", id="rest-0.3"),
    ],
)
def test_every_unary_method_with_the_sdk_client(api: str, bearer: dict[str, str], binding: str, version: str) -> None:
    text = f"hello over {binding} {version}"
    rest_03 = (binding, version) == ("HTTP+JSON", "0.3")

    async def scenario() -> None:
        async with sdk_client(api, bearer, binding, version) as sdk:
            client = sdk.client
            # SendMessage: the task is stored and its work queued (no worker runs behind start-api)
            task = await send(client, SendMessageRequest(message=user_message(text)))
            assert task.status.state == TaskState.TASK_STATE_SUBMITTED
            # GetTask
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert (got.id, got.history[0].parts[0].text) == (task.id, text)
            # ListTasks (1.0 only: v0.3 has none)
            if version == "1.0":
                listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
                assert [t.id for t in listed.tasks] == [task.id]
            # The push notification configs: create, get, list, delete
            created = await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url=HOOK, token="opaque")
            )
            got_config = await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
            )
            assert (got_config.url, got_config.token) == (HOOK, "opaque")
            assert await config_ids(sdk, task.id, rest_03) == [created.id]
            await delete_config(sdk, task.id, created.id, rest_03)
            assert await config_ids(sdk, task.id, rest_03) == []
            # CancelTask: its work never started, so it is canceled at once
            canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED

    asyncio.run(scenario())


# (method, path, body, headers, what the function answers: its HTTP status and the error's code)
EXTENDED_CARD = [
    pytest.param(
        "POST", "/", {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"}, V1, (200, -32004), id="jsonrpc-1.0"
    ),
    pytest.param("GET", "/extendedAgentCard", None, V1, (400, 400), id="rest-1.0"),
    pytest.param(
        "POST",
        "/",
        {"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"},
        {},
        (200, -32007),
        id="jsonrpc-0.3",
    ),
    pytest.param("GET", "/v1/card", None, {}, (404, -32007), id="rest-0.3"),
]


@pytest.mark.parametrize(("method", "path", "body", "version", "answer"), EXTENDED_CARD)
def test_get_extended_agent_card_reaches_its_function_on_every_binding(
    http: httpx.Client, method: str, path: str, body: Any, version: dict[str, str], answer: tuple[int, int]
) -> None:
    # When a caller with a valid token asks for the extended card, which this agent does not declare
    response = http.request(method, path, json=body, headers={**version, **(JSON if body else {})})

    # Then the function behind the route answers with its binding's error for that (v0.3 REST's
    # error is the body itself)
    assert response.status_code == answer[0], response.text
    error = response.json().get("error", response.json())
    assert (error["code"], "extended agent card" in error["message"]) == (answer[1], True)


def test_v03_method_names_without_a_version_header(http: httpx.Client) -> None:
    # When a v0.3 client sends a message and reads its task, over JSON-RPC then REST, with no A2A-Version
    v03_message = {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": "v0.3"}],
    }
    params = {"message": v03_message, "configuration": {"blocking": False}}
    sent = http.post("/", json={"jsonrpc": "2.0", "id": "1", "method": "message/send", "params": params}, headers=JSON)
    assert sent.status_code == 200, sent.text
    task = sent.json()["result"]
    got = http.post(
        "/", json={"jsonrpc": "2.0", "id": "2", "method": "tasks/get", "params": {"id": task["id"]}}, headers=JSON
    )
    rest = http.get(f"/v1/tasks/{task['id']}")

    # Then each answers in its v0.3 binding's shapes (JSON-RPC's kinds and states, REST's ProtoJSON)
    assert (task["kind"], task["status"]["state"]) == ("task", "submitted")
    assert (got.json()["result"]["id"], got.json()["result"]["status"]["state"]) == (task["id"], "submitted")
    assert rest.status_code == 200, rest.text
    assert (rest.json()["id"], rest.json()["status"]["state"]) == (task["id"], "TASK_STATE_SUBMITTED")


# ------------------------------------------------- sam local invoke: dispatcher and sweeper


def test_the_push_dispatcher_queues_a_delivery_for_a_new_config_from_the_table_stream(
    sam: SamLocal, http: httpx.Client
) -> None:
    # Given the table's stream read from its end, and a task sent through start-api
    template = load_template(sam.build / "template.yaml")
    (source,) = EventSources.of(template, "PushDispatcherFunction").streams
    from_now = dataclasses.replace(source, starting_position="LATEST")
    handler = sam.handler("PushDispatcherFunction")
    poller = stream_poller_for(from_now, sam.resources, sam.moto_url, handler, "sam")()
    assert poller.poll_once() == 0
    task = send_rest(http, "notify me")

    # When a webhook config is created for it, and the stream's new records reach the dispatcher
    # through the template's filter (sam local invoke PushDispatcherFunction)
    created = http.post(f"/tasks/{task['id']}/pushNotificationConfigs", json={"url": HOOK}, headers={**V1, **JSON})
    assert created.status_code == 200, created.text
    handled = poller.poll_once()

    # Then one delivery of the task's events so far is queued for the config, in the owner's scope
    assert handled >= 1
    received = sam.aws("sqs").receive_message(
        QueueUrl=sam.resources.queue_urls["PushDeliveryQueue"], MaxNumberOfMessages=10
    )
    items = [DeliveryItem.from_json(m["Body"]) for m in received.get("Messages", [])]
    assert [(i.task_id, i.config_id, i.owner, i.up_to_seq > 0) for i in items] == [
        (task["id"], created.json()["id"], sam.issuer.principal(), True)
    ]


def test_the_sweeper_fails_a_run_whose_worker_died(sam: SamLocal, http: httpx.Client) -> None:
    # Given a task whose run was claimed by a worker that died two minutes ago (its lease lapsed)
    message_id = str(uuid.uuid4())
    task = send_rest(http, "and then the worker died", message_id)
    store = DynamoDBTaskStore(sam.resources.tables["TasksTable"], sam.aws("dynamodb"))
    now = int(time.time())
    dead = partial(claim, message_id=message_id, receive_count=1, now=now - 120, lease_seconds=60, max_history=200)
    assert mutate(store, Scope("", sam.issuer.principal()), task["id"], dead).result.value == "claimed"

    # When the schedule invokes the sweeper (sam local invoke SweeperFunction)
    template = load_template(sam.build / "template.yaml")
    (source,) = EventSources.of(template, "SweeperFunction").schedules
    swept = schedule_poller_for(source, sam.handler("SweeperFunction"), "sam")().invoke_once()

    # Then it failed that task with the lost run's message, read back through start-api
    assert swept == {"swept": 1}
    failed = get_task(http, task["id"])
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert failed["status"]["message"]["parts"][0]["text"] == LEASE_LOST_TEXT


# ------------------------------------------------------------------ the durable worker
# Its executions under sam local invoke, on the durable execution emulator, are
# test_sam_local_invoke.py's. Here, in the Lambda image alone: the built durable worker starts, and
# its SDK takes only the invocations of a durable execution, refusing any other event clearly.


def test_the_durable_worker_starts_in_the_image_and_takes_only_durable_executions(start_function: Any) -> None:
    # Given the built durable worker in the image, as ExecutionMode Durable configures it
    function = start_function(
        "DurableWorkerFunction", {"A2A_STORE": "dynamodb", "A2A_TABLE_NAME": "t", "A2A_EXECUTION_MODE": "durable"}
    )

    # When it is invoked with an event that is not a durable execution's
    response = function.invoke({"Records": []})

    # Then its cold start succeeded, and the durable SDK refused the invocation
    assert response["errorType"] == "ExecutionError", function.logs()
    assert "start the durable execution" in response["errorMessage"]
