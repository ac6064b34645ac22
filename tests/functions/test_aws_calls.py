"""Every function's AWS calls, observed: each entry point is driven under moto through its main
paths while botocore reports every operation it makes, and what it made must be within the calls
declared for it in tests/conftest.py (``AWS_CALLS``), which the template's IAM policies are checked
against (tests/template/test_iam.py). A new call in the code without a permission fails here.

ExecutionMode Durable is driven too (SendMessage and the gateway start, resume and end tasks' durable
executions, and DurableWorkerFunction runs them), on the official local runner of durable executions
(aws-durable-execution-sdk-python-testing) in this process: it stands in for Lambda's
durable-execution service, so the ``lambda.*`` calls declared for these functions (``Invoke``,
``SendDurableExecutionCallbackSuccess`` / ``Failure``, and the SDK's ``CheckpointDurableExecution`` /
``GetDurableExecutionState``) are never made on the wire here and cannot be observed: only their
DynamoDB (and S3) calls are, and they must be declared like the rest."""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest
from lambda_events import EVENTS, api_event, body, invoke

from a2a_serverless import wiring as wiring_module
from a2a_serverless.auth import ANONYMOUS
from a2a_serverless.config import Settings
from a2a_serverless.ports import Scope, TaskHead
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime, get_runtime
from a2a_serverless_dev._lambda import sqs_event
from a2a_serverless_dev.local_durable import LocalDurableRuns

if TYPE_CHECKING:
    from conftest import WebhookReceiver

V1 = {"A2A-Version": "1.0"}
ALICE = Scope("", "user-alice")
NOBODY = Scope("", ANONYMOUS)
"""The gateway's caller here (no authorizer in front of it)."""
DURABLE_HANDLER_THREADS = "dex-handler"
"""The durable-execution SDK runs each invocation of a durable handler in threads of this name."""


class Recorder:
    def __init__(self) -> None:
        self.current = ""
        self.calls: defaultdict[str, set[str]] = defaultdict(set)

    def __call__(self, event_name: str, **_: Any) -> None:
        # An invocation of the durable worker runs in the SDK's threads, beside the caller's
        current = self.current
        if threading.current_thread().name.startswith(DURABLE_HANDLER_THREADS):
            current = "DurableWorkerFunction"
        if current:
            _, service, operation = event_name.split(".")
            self.calls[current].add(f"{service}.{operation}")

    @contextmanager
    def calls_of(self, function: str) -> Iterator[None]:
        self.current = function
        try:
            yield
        finally:
            self.current = ""


@pytest.fixture
def recorder(lambda_aws: Any, webhook_receiver: WebhookReceiver) -> Iterator[Recorder]:
    lambda_aws.configure_push(A2A_AUTH_MODE="apigateway", A2A_PUSH_BACKOFF_BASE_SECONDS="0")
    recorder = Recorder()
    boto3.setup_default_session()
    boto3.DEFAULT_SESSION.events.register("before-call.*.*", recorder)  # type: ignore[union-attr]
    yield recorder
    boto3.DEFAULT_SESSION = None


def receive(aws: Any, queue: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = aws.sqs.receive_message(
        QueueUrl=aws.resources.queue_urls[queue], MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    ).get("Messages", [])
    return messages


def sqs_invoke(aws: Any, module: str, queue: str, messages: list[dict[str, Any]]) -> Any:
    event = sqs_event(messages, queue_arn=aws.resources.queue_arns[queue], region="us-east-1")
    return invoke(module, json.loads(json.dumps(event)))


def send(text: str, task_id: str = "", **configuration: Any) -> dict[str, Any]:
    message = {"messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id:
        message["taskId"] = task_id
    return api_event(
        "POST",
        "/message:send",
        body={"message": message, "configuration": {"returnImmediately": True, **configuration}},
    )


def test_each_function_calls_only_what_it_declares(
    lambda_aws: Any,
    recorder: Recorder,
    webhook_receiver: WebhookReceiver,
    aws_calls: dict[str, set[str]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    hook = {"taskPushNotificationConfig": {"url": f"{webhook_receiver.url}/hook"}}
    with recorder.calls_of("SendMessageFunction"):
        task = body(invoke("send_message", send("hello", **hook)))["task"]
    with recorder.calls_of("WorkerFunction"):
        assert sqs_invoke(lambda_aws, "worker", "WorkQueue", receive(lambda_aws, "WorkQueue")) == {
            "batchItemFailures": []
        }

    # Push: the dispatcher on a recorded stream record of the task's first event, then delivery
    stream = json.loads((EVENTS / "dynamodb_stream_event_insert.json").read_text())
    image = stream["Records"][0]["dynamodb"]["NewImage"]
    image["taskId"]["S"] = task["id"]
    image["owner"]["S"], image["tenant"]["S"] = "user-alice", ""
    with recorder.calls_of("PushDispatcherFunction"):
        assert invoke("push_dispatcher", stream) == {"batchItemFailures": []}
    webhook_receiver.fail_next(1, status=503)
    for _ in range(2):  # a retry (visibility extended), then the delivery
        with recorder.calls_of("PushDeliveryFunction"):
            sqs_invoke(lambda_aws, "push_delivery", "PushDeliveryQueue", receive(lambda_aws, "PushDeliveryQueue"))
    assert webhook_receiver.accepted()

    path = f"/tasks/{task['id']}/pushNotificationConfigs"
    with recorder.calls_of("ListTasksFunction"):
        assert invoke("list_tasks", api_event("GET", "/tasks"))["statusCode"] == 200
    with recorder.calls_of("CreatePushConfigFunction"):
        created = invoke("create_push_config", api_event("POST", path, body={"url": "https://hooks.example/a"}))
    config_id = body(created)["id"]
    with recorder.calls_of("GetPushConfigFunction"):
        assert invoke("get_push_config", api_event("GET", f"{path}/{config_id}"))["statusCode"] == 200
    with recorder.calls_of("ListPushConfigsFunction"):
        assert invoke("list_push_configs", api_event("GET", path))["statusCode"] == 200
    with recorder.calls_of("DeletePushConfigFunction"):
        assert invoke("delete_push_config", api_event("DELETE", f"{path}/{config_id}"))["statusCode"] == 200
    # The cards, signed with a KMS key (CardSigning=true), each function a fresh cold start: no keys cached
    card_key = boto3.client("kms").create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["Arn"]
    extended = tmp_path / "extended.json"
    extended.write_text(json.dumps({"description": "For callers with credentials."}))
    lambda_aws.configure(A2A_CARD_SIGNING_KEY=card_key, A2A_EXTENDED_CARD_FILE=str(extended))
    with recorder.calls_of("AgentCardFunction"):
        assert invoke("agent_card", api_event("GET", "/.well-known/jwks.json"))["statusCode"] == 200
        assert "signatures" in body(invoke("agent_card", api_event("GET", "/.well-known/agent-card.json")))
    lambda_aws.configure()
    with recorder.calls_of("GetExtendedCardFunction"):
        assert "signatures" in body(invoke("get_extended_card", api_event("GET", "/extendedAgentCard")))
    monkeypatch.delenv("A2A_CARD_SIGNING_KEY")
    monkeypatch.delenv("A2A_EXTENDED_CARD_FILE")
    lambda_aws.configure()

    # A work item that SQS gave up on
    body(invoke("send_message", send("doomed")))
    with recorder.calls_of("DeadLetterFunction"):
        dead = receive(lambda_aws, "WorkQueue")
        assert sqs_invoke(lambda_aws, "dead_letter", "WorkDeadLetterQueue", dead) == {"batchItemFailures": []}

    # A run whose worker died (its lease lapsed), settled by the scheduled sweeper
    stuck = body(invoke("send_message", send("stuck")))["task"]
    store = get_runtime().store
    record = store.get_task(Scope("", "user-alice"), stuck["id"])
    assert record is not None
    store.commit(replace(record, pending_message_id="", running_message_id="m-stuck", lease_until=1))
    with recorder.calls_of("SweeperFunction"):
        scheduled = json.loads((EVENTS / "eventbridge_scheduled_event.json").read_text())
        assert invoke("sweeper", scheduled) == {"swept": 1}

    # The gateway: the whole app, every unary method over JSON-RPC and the /tasks/{id} routes
    with recorder.calls_of("GatewayFunction"):
        asyncio.run(_drive_gateway())

    # ExecutionMode Durable: a multi-turn task through SendMessage, a cancel during the wait through
    # the gateway, each task a durable execution of the durable worker (see the module's docstring)
    _drive_durable_mode(lambda_aws, recorder, monkeypatch)

    # Then every function stayed within its declared calls (and each made some, where it declares any)
    for function, declared in aws_calls.items():
        observed = recorder.calls[function]
        assert observed <= declared, f"{function} called {sorted(observed - declared)}, not declared"
        assert bool(observed) == bool(declared), f"{function} was not exercised ({sorted(observed)})"


async def _drive_gateway() -> None:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway", headers=V1) as client:

        async def rpc(method: str, params: dict[str, Any]) -> Any:
            request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            return (await client.post("/", json=request)).json()

        message = {"messageId": "gw-1", "role": "ROLE_USER", "parts": [{"text": "sleep 5"}]}
        sent = await rpc("SendMessage", {"message": message, "configuration": {"returnImmediately": True}})
        task_id = sent["result"]["task"]["id"]
        assert (await client.get(f"/tasks/{task_id}")).status_code == 200
        await rpc("ListTasks", {})
        await rpc("CreateTaskPushNotificationConfig", {"taskId": task_id, "url": "https://hooks.example/g", "id": "g1"})
        await rpc("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "g1"})
        await rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
        await rpc("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "g1"})
        assert "result" in await rpc("CancelTask", {"id": task_id})


def _drive_durable_mode(lambda_aws: Any, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    lambda_aws.configure(
        A2A_EXECUTION_MODE="durable",
        A2A_DURABLE_FUNCTION="arn:aws:lambda:us-east-1:123456789012:function:fn-test-DurableWorkerFunction:live",
    )
    # The functions' runtime (one process here): its executions run on the local runner, which
    # invokes the durable worker's Lambda entry point
    worker = importlib.import_module("a2a_serverless.functions.durable_worker").handler
    runs = LocalDurableRuns(worker, execution_timeout=120)
    runtime = build_runtime(Settings.from_env(), durable=runs)
    monkeypatch.setattr(wiring_module, "_runtime", runtime)
    try:
        # A task that asks for input waits for it, then the answer resumes its execution
        with recorder.calls_of("SendMessageFunction"):
            asked = body(invoke("send_message", send("ask me")))["task"]
        _until(runtime, asked["id"], lambda head: bool(head.waiting_callback))
        with recorder.calls_of("SendMessageFunction"):
            assert body(invoke("send_message", send("Ann", task_id=asked["id"])))["task"]["id"] == asked["id"]
        _finished(runs, asked["id"])
        assert _until(runtime, asked["id"], lambda head: head.state.is_terminal).state.name == "TASK_STATE_COMPLETED"

        # A task canceled while it waits for input: its execution ends
        with recorder.calls_of("GatewayFunction"):
            waiting = asyncio.run(_gateway_rpc("SendMessage", {"message": _message("gw-ask", "ask me")}))
        task_id = waiting["result"]["task"]["id"]
        _until(runtime, task_id, lambda head: bool(head.waiting_callback), NOBODY)
        with recorder.calls_of("GatewayFunction"):
            canceled = asyncio.run(_gateway_rpc("CancelTask", {"id": task_id}))
        assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        _finished(runs, task_id)
    finally:
        runs.close()
    # What the local runner lets be seen of the durable worker: its table calls, no lambda.* ones
    assert recorder.calls["DurableWorkerFunction"]
    assert {call.split(".")[0] for call in recorder.calls["DurableWorkerFunction"]} <= {"dynamodb", "s3"}


def _until(runtime: Any, task_id: str, done: Any, scope: Scope = ALICE) -> TaskHead:
    deadline = time.monotonic() + 20  # a hang guard
    while True:
        head: TaskHead | None = runtime.store.get_head(scope, task_id)
        if head is not None and done(head):
            return head
        assert time.monotonic() < deadline, f"task {task_id} never got there: {head}"
        time.sleep(0.02)


def _finished(runs: LocalDurableRuns, task_id: str) -> None:
    arn = runs.execution_arn(task_id)
    assert arn is not None, "no durable execution was started for the task"
    assert runs.runner.wait_for_result(arn, timeout=20).status.name == "SUCCEEDED"


def _message(message_id: str, text: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


async def _gateway_rpc(method: str, params: dict[str, Any]) -> Any:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway", headers=V1) as client:
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return (await client.post("/", json=request)).json()
