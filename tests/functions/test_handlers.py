"""The Lambda entry points in ``a2a_serverless.functions``, driven with recorded API Gateway and SQS events
against DynamoDB and SQS in moto (in-process), exactly as Lambda would invoke them."""

from __future__ import annotations

import base64
import copy
import importlib
import json
import sys
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from lambda_events import EVENTS, api_event, body, invoke

from a2a_serverless.card.signing import verify_card
from a2a_serverless.config import ConfigError
from a2a_serverless.methods import METHODS
from a2a_serverless.push import JWKS_PATH
from a2a_serverless.wiring import reset_runtime


@pytest.fixture
def aws(lambda_aws: Any) -> dict[str, Any]:
    lambda_aws.configure(A2A_AUTH_MODE="apigateway")
    return {"sqs": lambda_aws.sqs, "queue_url": lambda_aws.resources.queue_urls["WorkQueue"]}


def listed(task_id: str, principal: str = "user-alice") -> dict[str, Any]:
    """The task as the ListTasks function shows it to ``principal`` (with artifacts)."""
    response = invoke("list_tasks", api_event("GET", "/tasks", query={"includeArtifacts": "true"}, principal=principal))
    assert response["statusCode"] == 200, response
    (task,) = [t for t in body(response)["tasks"] if t["id"] == task_id]
    result: dict[str, Any] = task
    return result


def test_every_method_table_row_has_an_importable_entry_point() -> None:
    # Given the method table, when each row's function module is imported,
    # then it exposes a Lambda handler (rows served by the gateway run the whole app instead).
    for method in METHODS:
        if method.function == "gateway":
            continue
        module = importlib.import_module(f"a2a_serverless.functions.{method.function}")
        assert callable(module.handler), method.name


def test_send_then_worker_then_get_through_lambda_handlers(aws: dict[str, Any]) -> None:
    # Given the recorded SendMessage event (returnImmediately)
    event = json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text())
    # When the SendMessage function handles it
    sent = invoke("send_message", event)
    # Then the task is SUBMITTED and one work item sits on the FIFO queue
    assert sent["statusCode"] == 200, sent
    # (the recorded client accepts only application/json: it is answered in that type)
    assert sent["headers"]["content-type"] == "application/json"
    task = body(sent)["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    messages = aws["sqs"].receive_message(QueueUrl=aws["queue_url"], MaxNumberOfMessages=10, AttributeNames=["All"])[
        "Messages"
    ]
    assert len(messages) == 1
    assert messages[0]["Attributes"]["MessageGroupId"] == task["id"]

    # When the worker function receives that message as an SQS event (recorded shape)
    sqs_event = json.loads((EVENTS / "sqs_work_item.json").read_text())
    record = sqs_event["Records"][0]
    record["body"] = messages[0]["Body"]
    record["messageId"] = messages[0]["MessageId"]
    record["attributes"]["MessageGroupId"] = task["id"]
    result = invoke("worker", sqs_event)
    # Then no item failed, and ListTasks (its own function) shows the completed task with the echo
    assert result == {"batchItemFailures": []}
    done = listed(task["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"][0]["text"] == "Echo: hello from a fixture"

    # And another principal sees none of it
    other = invoke("list_tasks", api_event("GET", "/tasks", principal="user-bob"))
    assert other["statusCode"] == 200
    assert body(other)["tasks"] == []


def test_worker_fails_the_invocation_when_every_record_failed(aws: dict[str, Any]) -> None:
    # Given an SQS event whose only record is not a work item
    sqs_event = json.loads((EVENTS / "sqs_work_item.json").read_text())
    sqs_event["Records"][0]["body"] = "not json"
    # When the worker handles it, then the invocation fails, so SQS redelivers the batch and,
    # after maxReceiveCount, moves the poison message to the dead-letter queue
    with pytest.raises(BatchProcessingError):
        invoke("worker", sqs_event)


def test_worker_reports_only_the_failed_record_and_those_after_it(aws: dict[str, Any]) -> None:
    # Given a batch of a good (but unknown-task) record and a malformed one
    sqs_event = json.loads((EVENTS / "sqs_work_item.json").read_text())
    good = sqs_event["Records"][0]
    bad = copy.deepcopy(good)
    bad["messageId"] = "bad-1"
    bad["body"] = "not json"
    sqs_event["Records"] = [good, bad]
    # When the worker handles it, then only the malformed record is reported for redelivery
    result = invoke("worker", sqs_event)
    assert result == {"batchItemFailures": [{"itemIdentifier": "bad-1"}]}


@pytest.mark.parametrize(
    ("module", "method", "path", "status", "reason"),
    [
        pytest.param(
            "get_push_config",
            "GET",
            "/tasks/nope/pushNotificationConfigs/c1",
            404,
            "TASK_NOT_FOUND",
            id="push-config-of-unknown-task",
        ),
        pytest.param("list_tasks", "GET", "/tasks", 400, "INVALID_PARAMS", id="list-bad-page-size"),
        pytest.param(
            "delete_push_config",
            "DELETE",
            "/tasks/nope/pushNotificationConfigs/c1",
            404,
            "TASK_NOT_FOUND",
            id="delete-config-of-unknown-task",
        ),
        pytest.param(
            "get_extended_card", "GET", "/extendedAgentCard", 400, "UNSUPPORTED_OPERATION", id="no-extended-card"
        ),
    ],
)
def test_rest_functions_answer_errors_in_the_spec_shape(
    aws: dict[str, Any], module: str, method: str, path: str, status: int, reason: str
) -> None:
    query = {"pageSize": "0"} if module == "list_tasks" else None
    response = invoke(module, api_event(method, path, query=query))
    assert response["statusCode"] == status
    error = body(response)["error"]
    assert error["code"] == status
    assert error["details"][0]["reason"] == reason
    assert error["details"][0]["domain"] == "a2a-protocol.org"


def test_internal_failure_is_a_generic_error_with_the_request_id(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a table that does not exist (a misconfigured deployment)
    monkeypatch.setenv("A2A_TABLE_NAME", "no-such-table")
    reset_runtime()
    # When ListTasks runs
    response = invoke("list_tasks", api_event("GET", "/tasks"))
    # Then the caller sees a generic 500 naming the request id, and nothing of the exception
    assert response["statusCode"] == 500
    error = body(response)["error"]
    assert error["message"] == "Internal error"
    assert error["details"][0]["metadata"]["requestId"] == "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
    assert "ResourceNotFound" not in response["body"]
    assert "Traceback" not in response["body"]


def test_card_function_derives_interface_urls_with_the_stage(aws: dict[str, Any]) -> None:
    response = invoke("agent_card", api_event("GET", "/.well-known/agent-card.json"))
    assert response["statusCode"] == 200
    card = body(response)
    urls = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert urls == {
        "JSONRPC": "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1/",
        "HTTP+JSON": "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1",
    }


def test_a_signed_card_names_the_api_not_the_host_a_client_sent(aws: dict[str, Any], lambda_aws: Any) -> None:
    # Given the card function signing with a KMS key (CardSigning=true) and no PublicUrl
    key = boto3.client("kms").create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["Arn"]
    lambda_aws.configure(A2A_CARD_SIGNING_KEY=key)
    spoofed = {"Host": "evil.example", "X-Forwarded-Host": "evil.example", "A2A-Version": "1.0"}

    def get(path: str) -> dict[str, Any]:
        event = api_event("GET", path)
        event["headers"] = {**event["headers"], **spoofed}
        event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
        response = invoke("agent_card", event)
        assert response["statusCode"] == 200, response
        assert "evil.example" not in response["body"]
        result: dict[str, Any] = body(response)
        return result

    # When a request naming Host: evil.example reaches it through the API's stage
    card, jwks = get("/.well-known/agent-card.json"), get("/.well-known/jwks.json")

    # Then the card and its signature's JWKS URL are the stage's, as API Gateway's event says
    stage = "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1"
    assert {i["url"] for i in card["supportedInterfaces"]} == {stage, stage + "/"}
    (signature,) = card["signatures"]
    protected = signature["protected"]
    assert json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))["jku"] == stage + JWKS_PATH
    assert verify_card(card, jwks)


def test_a_poison_work_item_reaches_the_dead_letter_queue_and_its_task_fails(aws: dict[str, Any]) -> None:
    # Given a submitted task whose work item every worker attempt fails to process
    sent = invoke("send_message", json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text()))
    task = body(sent)["task"]
    sqs = aws["sqs"]
    for _ in range(3):  # maxReceiveCount in template.yaml
        got = sqs.receive_message(QueueUrl=aws["queue_url"], VisibilityTimeout=0, AttributeNames=["All"])
        assert len(got["Messages"]) == 1
    # When SQS moves it to the dead-letter queue (on the next receive) ...
    assert "Messages" not in sqs.receive_message(QueueUrl=aws["queue_url"], VisibilityTimeout=0)
    dlq_url = sqs.get_queue_url(QueueName="fn-test-WorkDeadLetterQueue.fifo")["QueueUrl"]
    dead = sqs.receive_message(QueueUrl=dlq_url, AttributeNames=["All"])["Messages"]
    assert len(dead) == 1
    # ... and the dead-letter function receives it
    sqs_event = json.loads((EVENTS / "sqs_work_item.json").read_text())
    sqs_event["Records"][0]["body"] = dead[0]["Body"]
    sqs_event["Records"][0]["messageId"] = dead[0]["MessageId"]
    assert invoke("dead_letter", sqs_event) == {"batchItemFailures": []}
    # Then the task is FAILED with a clear message, not left SUBMITTED forever
    failed = listed(task["id"])
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert "several attempts" in failed["status"]["message"]["parts"][0]["text"]
    # And a late duplicate of the same dead letter changes nothing
    assert invoke("dead_letter", sqs_event) == {"batchItemFailures": []}
    again = listed(task["id"])
    assert again["status"] == failed["status"]


def test_a_bad_executor_path_fails_the_workers_cold_start_on_lambda(
    monkeypatch: pytest.MonkeyPatch, lambda_aws: Any
) -> None:
    # Given the worker's environment on Lambda, with an executor path that does not import
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "a2a-WorkerFunction")
    lambda_aws.configure(A2A_EXECUTOR="no_such_pkg.agent:Agent")

    # When the runtime initialises the function (imports the handler module)
    sys.modules.pop("a2a_serverless.functions.worker", None)
    with pytest.raises(ConfigError, match=r"executor 'no_such_pkg.agent:Agent': cannot import module"):
        importlib.import_module("a2a_serverless.functions.worker")

    # Then with a good one it starts; and off Lambda nothing is loaded at import
    lambda_aws.configure(A2A_EXECUTOR="a2a_serverless.execution.demo:DemoAgentExecutor")
    sys.modules.pop("a2a_serverless.functions.worker", None)
    assert callable(importlib.import_module("a2a_serverless.functions.worker").handler)
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME")
    lambda_aws.configure(A2A_EXECUTOR="no_such_pkg.agent:Agent")
    sys.modules.pop("a2a_serverless.functions.worker", None)
    assert callable(importlib.import_module("a2a_serverless.functions.worker").handler)
    sys.modules.pop("a2a_serverless.functions.worker", None)
