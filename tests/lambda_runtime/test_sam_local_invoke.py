"""Every event-driven function, and an API function, under ``sam local invoke`` in the Lambda image,
each with the event ``a2a-serverless event`` writes (:mod:`a2a_serverless_dev.events`), each
test asserting what the function did to moto's table and queues (or to a webhook on the host):

* ``SendMessageFunction`` with API Gateway's proxy event: the task is stored, its work queued in the
  very body ``event worker`` writes;
* ``WorkerFunction`` with that work item's SQS event: the task is COMPLETED;
* ``PushDispatcherFunction`` with the stream record of a new push config: a delivery is queued;
* ``PushDeliveryFunction`` with that delivery's SQS event: the task's events are POSTed to a receiver
  on the host (the function's image allows private webhooks, which the template cannot declare);
* ``DeadLetterFunction`` with a dead-lettered work item: the task is FAILED;
  (this task and the sweeper's are sent through the kit's SendMessage operation in this process, on
  moto's table: a container each would add nothing the first send does not show)
* ``SweeperFunction`` with its schedule's event: a run whose lease lapsed is FAILED;
* ``AuthorizerFunction`` (AuthMode Jwt) with a REQUEST event: an Allow policy for a valid token, the
  error ``Unauthorized`` (API Gateway's 401) without one.

* ``DurableWorkerFunction`` (``ExecutionMode=Durable``) with the input SendMessage starts a task's
  durable execution with: the execution SUCCEEDS and the task is COMPLETED. SAM runs a durable
  function only with a durable execution emulator, which serves the checkpoint API the durable SDK
  calls; the image of it SAM would pull from the public ECR runs ``dex-local-runner start-server``,
  which .venv holds: it runs here, on the host, on 127.0.0.1 (the function's container reaches it
  through a forwarder on the host's address on Docker's default bridge), and SAM is told to use it
  (``DURABLE_EXECUTIONS_EXTERNAL_EMULATOR_PORT``); SAM runs through ``sam_loopback.py``, which
  publishes the function's port on 127.0.0.1 (SAM would on every interface).

One module, one moto and one network (:func:`sam_local.sam_local`); no start-api.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from forwarder import Forwarder
from sam_local import (
    AUDIENCE,
    ISSUER,
    SAM,
    FunctionError,
    SamLocal,
    free_port,
    gateway_address,
    image_with_env,
    report,
    sam_local,
    wait_until,
)

from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.models import SendMessageRequest, TaskPushNotificationConfig, TaskState
from a2a_serverless.mutation import mutate
from a2a_serverless.operations import CallContext
from a2a_serverless.operations.send_message import send_message as send_message_operation
from a2a_serverless.ports import Scope, WorkItem
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.transitions import LEASE_LOST_TEXT, claim
from a2a_serverless.wiring import build_runtime

pytestmark = pytest.mark.lambda_runtime

OWNER = "alice"
SAM_LOOPBACK = Path(__file__).with_name("sam_loopback.py")
SCOPE = Scope("", OWNER)
V1 = "A2A-Version:1.0"


@pytest.fixture(scope="module")
def sam(
    request: pytest.FixtureRequest,
    lambda_image: str,  # first: without Docker, nothing is built
    sam_build: Any,
    python313: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SamLocal]:
    parameters = {
        "Architecture": lambda_image.rpartition("-")[2],
        "WebAdapterLayerVersion": "0",
        "AuthMode": "Jwt",
        "JwtIssuer": ISSUER,
        "JwtAudience": AUDIENCE,
    }
    workdir = tmp_path_factory.mktemp("sam-local-invoke")
    private = image_with_env(lambda_image, {"A2A_ALLOW_PRIVATE_WEBHOOKS": "true"}, workdir, "private-webhooks")
    with sam_local(sam_build.directory, lambda_image, python313, workdir, parameters) as local:
        local.invoke_images.append(f"PushDeliveryFunction={private}")
        try:
            yield local
        finally:
            report(request.config, local.timings.summary().replace("sam local:", "sam local invoke:", 1))


def event(sam: SamLocal, *args: str) -> Any:
    """What ``a2a-serverless event ARGS`` writes."""
    out = sam.workdir / f"event-{uuid.uuid4().hex[:8]}.json"
    command = [sys.executable, "-m", "a2a_serverless_dev", "event", *args, "--out", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(out.read_text())


def store(sam: SamLocal) -> DynamoDBTaskStore:
    return DynamoDBTaskStore(sam.resources.tables["TasksTable"], sam.aws("dynamodb"))


def state(sam: SamLocal, task_id: str) -> TaskState:
    record = store(sam).get_task(SCOPE, task_id)
    assert record is not None
    return record.state


def receive(sam: SamLocal, queue_id: str) -> list[str]:
    """The bodies on a queue, taken off it (as its event source would)."""
    sqs, url = sam.aws("sqs"), sam.resources.queue_urls[queue_id]
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return [m["Body"] for m in messages]


@dataclasses.dataclass(frozen=True)
class Sent:
    """A task sent, and the work item its SendMessage queued."""

    task_id: str
    message_id: str
    queued: list[dict[str, Any]]
    """The work item(s) the send queued (decoded)."""

    def worker_args(self) -> list[str]:
        """``a2a-serverless event worker`` arguments for the queued item."""
        (item,) = self.queued
        args = ["--task-id", self.task_id, "--message-id", self.message_id, "--owner", OWNER]
        return [*args, "--turn", str(item.get("turn", 0)), "--configuration", item.get("configuration", "")]


def send_message(sam: SamLocal, text: str) -> Sent:
    """``sam local invoke SendMessageFunction`` with API Gateway's event of a REST SendMessage
    (answered at once) from ``alice``; what it stored and queued."""
    message_id = str(uuid.uuid4())
    body = {"message": message_body(message_id, text), "configuration": {"returnImmediately": True}}
    api = event(sam, "api", "--path", "/message:send", "--body", json.dumps(body), "--principal", OWNER, "--header", V1)
    response = sam.invoke("SendMessageFunction", api)
    assert isinstance(response, dict)
    assert response["statusCode"] == 200, response
    task = json.loads(response["body"])["task"]
    return Sent(task["id"], message_id, [json.loads(body) for body in receive(sam, "WorkQueue")])


def message_body(message_id: str, text: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


class KeptWork:
    """A work queue that keeps what SendMessage queues (no worker runs it)."""

    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def enqueue(self, item: WorkItem) -> None:
        self.items.append(item)


def send_from_the_host(sam: SamLocal, text: str) -> Sent:
    """A task sent through the kit's SendMessage operation in this process, on moto's table (a
    task to dead-letter or sweep: no container needed to make it)."""
    kept = KeptWork()
    settings = Settings.from_env({"A2A_STORE": "dynamodb", "A2A_TABLE_NAME": sam.resources.tables["TasksTable"]})
    runtime = build_runtime(settings, store=store(sam), queue=kept)
    message_id = str(uuid.uuid4())
    request = SendMessageRequest.model_validate(
        {"message": message_body(message_id, text), "configuration": {"returnImmediately": True}}
    )
    response = send_message_operation(request, CallContext(principal=Principal(OWNER, authenticated=True)), runtime)
    assert response.task is not None
    return Sent(response.task.id, message_id, [json.loads(item.to_json()) for item in kept.items])


@pytest.fixture(scope="module")
def sent(sam: SamLocal) -> Sent:
    return send_message(sam, "hello from sam local invoke")


# ----------------------------------------------------------------------------- the API and the worker


def test_an_api_function_stores_the_task_and_queues_the_work_item_the_command_writes(sam: SamLocal, sent: Sent) -> None:
    # Given a task sent with API Gateway's proxy event (`a2a-serverless event api`) to the function
    # When the command writes the worker's event for the item it queued
    worker = event(sam, "worker", *sent.worker_args())

    # Then the task is stored, submitted, in the caller's scope, and the one work item the function
    # queued is the very body of the command's event
    assert state(sam, sent.task_id) == TaskState.TASK_STATE_SUBMITTED
    assert sent.queued == [json.loads(record["body"]) for record in worker["Records"]]


def test_the_worker_runs_the_task_of_the_work_item_event(sam: SamLocal, sent: Sent) -> None:
    # Given the worker's SQS event for the queued task
    worker = event(sam, "worker", *sent.worker_args())

    # When the worker takes it (sam local invoke WorkerFunction)
    response = sam.invoke("WorkerFunction", worker)

    # Then no record failed, and the demo agent completed the task
    assert response == {"batchItemFailures": []}
    record = store(sam).get_task(SCOPE, sent.task_id)
    assert record is not None
    assert record.state == TaskState.TASK_STATE_COMPLETED
    assert "Echo: hello from sam local invoke" in record.task.model_dump_json()


# ------------------------------------------------------------------------------------------ push


class Receiver:
    """A webhook on the host, on the network's gateway address (the functions' containers reach it
    there); it records each POST and answers 200."""

    def __init__(self, host: str) -> None:
        self.posts: list[tuple[dict[str, str], Any]] = []
        posts = self.posts

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                posts.append((dict(self.headers.items()), json.loads(self.rfile.read(length))))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver(sam: SamLocal) -> Iterator[Receiver]:
    webhook = Receiver(gateway_address(sam.network))
    try:
        yield webhook
    finally:
        webhook.close()


@pytest.fixture(scope="module")
def hook(sam: SamLocal, sent: Sent, receiver: Receiver) -> str:
    """A push config of the sent task, to the receiver, written as CreateTaskPushNotificationConfig
    writes it (its delivery cursor at 0)."""
    config = TaskPushNotificationConfig(id="hook-1", task_id=sent.task_id, url=receiver.url, token="opaque")
    store(sam).put_push_config(SCOPE, config)
    return config.id


def test_the_dispatcher_queues_a_delivery_for_the_stream_record_of_a_new_config(
    sam: SamLocal, sent: Sent, hook: str
) -> None:
    # Given the table's stream record of the new push config (the store's own item as its image)
    stream = event(sam, "push-dispatcher", "--task-id", sent.task_id, "--config-id", hook, "--owner", OWNER)

    # When the dispatcher takes it (sam local invoke PushDispatcherFunction)
    response = sam.invoke("PushDispatcherFunction", stream)

    # Then one delivery of the task's events so far is queued for the config, in the owner's scope
    assert response == {"batchItemFailures": []}
    head = store(sam).get_head(SCOPE, sent.task_id)
    assert head is not None
    assert head.last_seq > 0
    items = [DeliveryItem.from_json(body) for body in receive(sam, "PushDeliveryQueue")]
    assert [(i.task_id, i.config_id, i.owner, i.up_to_seq) for i in items] == [
        (sent.task_id, hook, OWNER, head.last_seq)
    ]


def test_the_delivery_function_posts_the_tasks_events_to_the_webhook(
    sam: SamLocal, sent: Sent, hook: str, receiver: Receiver
) -> None:
    # Given the delivery queue's SQS event of the task's events so far, for the config
    head = store(sam).get_head(SCOPE, sent.task_id)
    assert head is not None
    up_to = str(head.last_seq)
    delivery = event(
        sam, "push-delivery", "--task-id", sent.task_id, "--config-id", hook, "--up-to-seq", up_to, "--owner", OWNER
    )

    # When the delivery function takes it (sam local invoke PushDeliveryFunction)
    response = sam.invoke("PushDeliveryFunction", delivery)

    # Then every event reached the webhook on the host, with the config's token, the last one the
    # completed task's; and the config's cursor moved to the last event
    assert response == {"batchItemFailures": []}
    assert len(receiver.posts) == head.last_seq, receiver.posts
    assert {headers.get("X-A2A-Notification-Token") for headers, _ in receiver.posts} == {"opaque"}
    assert "TASK_STATE_COMPLETED" in json.dumps(receiver.posts[-1][1])
    target = store(sam).get_push_target(SCOPE, sent.task_id, hook)
    assert target is not None
    assert target.delivered_seq == head.last_seq


# --------------------------------------------------------------------------- dead letters and sweeper


def test_the_dead_letter_function_fails_the_task_of_a_dead_work_item(sam: SamLocal) -> None:
    # Given a task whose work item SQS gave up on (sent, never run)
    dead = send_from_the_host(sam, "never run")
    dead_letter = event(sam, "dead-letter", *dead.worker_args(), "--receive-count", "3")

    # When the dead-letter function takes it (sam local invoke DeadLetterFunction)
    response = sam.invoke("DeadLetterFunction", dead_letter)

    # Then the task is FAILED
    assert response == {"batchItemFailures": []}
    assert state(sam, dead.task_id) == TaskState.TASK_STATE_FAILED


def test_the_sweeper_fails_a_run_whose_lease_lapsed(sam: SamLocal) -> None:
    # Given a task whose run was claimed by a worker that died two minutes ago (its lease lapsed)
    died = send_from_the_host(sam, "and then the worker died")
    now = int(time.time())
    dead = partial(claim, message_id=died.message_id, receive_count=1, now=now - 120, lease_seconds=60, max_history=200)
    assert mutate(store(sam), SCOPE, died.task_id, dead).result.value == "claimed"

    # When its schedule's event reaches the sweeper (sam local invoke SweeperFunction)
    response = sam.invoke("SweeperFunction", event(sam, "sweeper"))

    # Then it failed that task with the lost run's message
    assert response == {"swept": 1}
    record = store(sam).get_task(SCOPE, died.task_id)
    assert record is not None
    assert record.state == TaskState.TASK_STATE_FAILED
    assert LEASE_LOST_TEXT in record.task.model_dump_json()


# ------------------------------------------------------------------------------------ authorizer


def test_the_authorizer_allows_a_valid_token_with_a_policy_for_the_stage(sam: SamLocal) -> None:
    # Given a REQUEST event with a token of the issuer
    request = event(sam, "authorizer", "--path", "/message:send", "--token", sam.issuer.token())

    # When the authorizer takes it (sam local invoke AuthorizerFunction)
    response = sam.invoke("AuthorizerFunction", request)

    # Then it allows the caller, by its issuer and subject, on the whole stage
    assert isinstance(response, dict)
    assert response["principalId"] == sam.issuer.principal()
    (statement,) = response["policyDocument"]["Statement"]
    assert statement == {
        "Action": "execute-api:Invoke",
        "Effect": "Allow",
        "Resource": "arn:aws:execute-api:us-east-1:123456789012:abc123defg/v1/*/*",
    }


def test_the_authorizer_denies_a_request_without_a_token_as_unauthorized(sam: SamLocal) -> None:
    # Given a REQUEST event without an Authorization header
    request = event(sam, "authorizer", "--path", "/message:send")

    # When the authorizer takes it
    with pytest.raises(FunctionError) as denied:
        sam.invoke("AuthorizerFunction", request)

    # Then it fails with exactly the message API Gateway answers 401 for
    error = denied.value.response
    assert (error["errorType"], error["errorMessage"]) == ("Unauthorized", "Unauthorized")


# ------------------------------------------------------------------------------- durable worker


@pytest.fixture(scope="module")
def emulator(sam: SamLocal) -> Iterator[int]:
    """The durable execution emulator SAM's own image runs (``dex-local-runner start-server``), run
    from .venv on the host; its port. On 127.0.0.1, where SAM's client reaches it (``localhost``);
    the function's container reaches it at ``host.docker.internal`` (SAM maps it to ``host-gateway``,
    the host's address on Docker's default bridge), where a forwarder in this process listens."""
    port = free_port()
    command = [str(Path(sys.executable).with_name("dex-local-runner")), "start-server", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--store-type", "sqlite", "--store-path", str(sam.workdir / "executions.db")]
    # It invokes the function through a Lambda client: credentials for that client (SAM takes any).
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    log = (sam.workdir / "emulator.log").open("w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _listening(port), "the durable execution emulator", 30)
        with Forwarder((gateway_address("bridge"), port), ("127.0.0.1", port)):
            yield port
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_the_durable_worker_runs_a_tasks_execution_on_the_emulator(sam: SamLocal, emulator: int) -> None:
    # Given a task sent in durable mode, and the input SendMessage starts its execution with
    sent = send_from_the_host(sam, "hello, durably")
    durable_input = event(sam, "durable-worker", *sent.worker_args())
    event_file = sam.workdir / "durable-event.json"
    event_file.write_text(json.dumps(durable_input))

    # When sam local invokes the durable worker (ExecutionMode=Durable) with it, on the emulator
    # (SAM publishes a durable function's port on every interface: sam_loopback.py, on 127.0.0.1)
    durable = dataclasses.replace(sam, parameters=[*sam.parameters, "ExecutionMode=Durable"])
    env = {**sam.environment, "DURABLE_EXECUTIONS_EXTERNAL_EMULATOR_PORT": str(emulator)}
    _, *arguments = durable.sam("invoke", "DurableWorkerFunction", "--event", str(event_file))
    with sam.timings.step("invoke DurableWorkerFunction"):
        run = subprocess.run(
            [str(SAM.with_name("python")), str(SAM_LOOPBACK), *arguments],
            capture_output=True,
            text=True,
            env=env,
            cwd=sam.workdir,
            timeout=600,
        )

    # Then the execution succeeded, its one turn ran the task to its end, and the task is COMPLETED
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Status:   SUCCEEDED" in run.stdout, f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert f'"taskId": "{sent.task_id}", "turns": 1, "end": "terminal"' in run.stdout
    record = store(sam).get_task(SCOPE, sent.task_id)
    assert record is not None
    assert record.state == TaskState.TASK_STATE_COMPLETED
