"""Size and shape limits, on both bindings (JSON-RPC and REST, 1.0 and 0.3) and through a Lambda
entry point (an API Gateway REST proxy event into ``functions.send_message.handler``, with DynamoDB
and SQS in moto, in process).

Every input here is either refused cleanly (the spec's error shape, a 4xx over REST, nothing
written) or accepted and stored exactly as sent (then it is read back). Never a 5xx. The limits
(README, "Limits and bad input"):

* request body: ``max_body_bytes`` (5 MiB by default), with or without Content-Length; parts of
  32 KiB and more are stored as objects (memory here, S3 through the Lambda entry point);
* JSON nesting: 100 levels;
* ids (task, context, message, push config, tenant): 256 bytes of UTF-8, because they go into
  DynamoDB keys (partition key at most 2048 bytes, sort key 1024), percent-encoded;
* the work a message queues (its request ``metadata`` and ``configuration``): what fits one SQS
  message (256 KiB, SQS's default maximum), checked before anything is stored;
* the number of parts or metadata keys: only the body size bounds them; they are stored as sent.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from _jsonrpc_support import (
    HOOK,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEAK_MARKERS,
    PARSE_ERROR,
    V1,
    Rig,
    assert_no_leak,
    assert_rest_error,
    assert_rpc_error,
    chunks,
    message,
    rig,
)

from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.wiring import reset_runtime
from a2a_serverless_dev.moto_fixes import item_size_fix
from a2a_serverless_dev.resources import create_resources
from testkit.aws import moto_clients

LIMIT = Settings().max_body_bytes
SQS_LIMIT = 256 * 1024
TASK_NOT_FOUND = -32001
EMOJI = "\U0001f600"  # four bytes of UTF-8, twelve once percent-encoded
RECORDED_EVENT = Path(__file__).parents[1] / "functions" / "events" / "apigw_rest_post_message_send.json"

Make = Callable[[str, str], dict[str, Any]]
"""(text, messageId) -> the request body of one door's SendMessage."""


@pytest.fixture(scope="module")
def r() -> Iterator[Rig]:
    with rig() as value:
        yield value


def rpc_body(method: str, params: Any, rpc_id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}).encode()


def _rpc_v1(text: str, mid: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message(text, mid)}}


def _v03_message(text: str, mid: str) -> dict[str, Any]:
    return {"kind": "message", "messageId": mid, "role": "user", "parts": [{"kind": "text", "text": text}]}


def _rpc_v03(text: str, mid: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": _v03_message(text, mid)}}


def _rest_v1(text: str, mid: str) -> dict[str, Any]:
    return {"message": message(text, mid)}


def _rest_v03(text: str, mid: str) -> dict[str, Any]:
    return {"request": {"messageId": mid, "role": "ROLE_USER", "content": [{"text": text}]}}


# SendMessage's four front doors: (path, headers, body maker, door).
DOORS = [
    pytest.param("/", V1, _rpc_v1, "rpc-1.0", id="jsonrpc-1.0"),
    pytest.param("/", {}, _rpc_v03, "rpc-0.3", id="jsonrpc-0.3"),
    pytest.param("/message:send", V1, _rest_v1, "rest-1.0", id="rest-1.0"),
    pytest.param("/v1/message:send", {}, _rest_v03, "rest-0.3", id="rest-0.3"),
]


def padded(size: int, make: Make, mid: str) -> bytes:
    """``make(text, mid)`` serialized, the text grown until the body is exactly ``size`` bytes."""
    base = len(json.dumps(make("", mid)).encode())
    body = json.dumps(make("x" * (size - base), mid)).encode()
    assert len(body) == size
    return body


def assert_refused(response: httpx.Response, door: str, code: int, status: int, reason: str | None = None) -> None:
    """The door's own error shape: JSON-RPC (HTTP 200, id null: the body was not read) or REST."""
    if door.startswith("rpc"):
        error = assert_rpc_error(response, rpc_id=None, codes=code, legacy=door == "rpc-0.3")
        if reason is not None:
            data = error["data"]
            assert (data["reason"] if isinstance(data, dict) else data[0]["reason"]) == reason
    elif door == "rest-0.3":
        assert_v03_rest_error(response, code, status, reason)
    else:
        assert_rest_error(response, status, reason)


def assert_v03_rest_error(response: httpx.Response, code: int, status: int, reason: str | None = None) -> None:
    """The v0.3 REST error: ``{code, message, data}`` with the reference 0.3 server's status
    (tests/transport/test_v03_rest_errors.py)."""
    assert response.status_code == status, response.text[:2000]
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"code", "message", "data"}, body
    assert body["code"] == code, body
    if reason is not None:
        assert body["data"]["reason"] == reason, body


def task_of(door: str, response: httpx.Response) -> dict[str, Any]:
    assert_no_leak(response)
    assert response.status_code == 200, response.text[:1000]
    body = response.json()
    if door.startswith("rpc"):
        assert "result" in body, body
        body = body["result"]
    task: dict[str, Any] = body.get("task", body)
    return task


def stored(r: Rig, task_id: str) -> dict[str, Any]:
    response = r.request("GET", f"/tasks/{task_id}", headers=V1)
    assert response.status_code == 200, response.text[:1000]
    task: dict[str, Any] = response.json()
    return task


def post(r: Rig, path: str, headers: dict[str, str], body: Any) -> httpx.Response:
    return r.request("POST", path, content=body, headers={"Content-Type": "application/json", **headers})


# --------------------------------------------------------------------------- body size


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
@pytest.mark.parametrize("over", [1, 64 * 1024, 4 * 1024 * 1024], ids=["just-over", "64k-over", "4m-over"])
@pytest.mark.parametrize("framing", ["content-length", "chunked", "understated-content-length"])
def test_body_over_the_limit_is_refused(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str, over: int, framing: str
) -> None:
    body = padded(LIMIT + over, make, "m-big")
    before = r.state()
    if framing == "understated-content-length":
        # The server counts what arrives; a Content-Length that lies does not get more through.
        response = post(r, path, {**headers, "Content-Length": "100"}, chunks(body))
    else:
        response = post(r, path, headers, chunks(body) if framing == "chunked" else body)
    assert_refused(response, door, INVALID_REQUEST, 413, "PAYLOAD_TOO_LARGE")
    assert r.state() == before


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_body_at_the_limit_is_stored_as_sent(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str, framing: str
) -> None:
    """A ~5 MiB text part is stored and read back as sent, and so is the demo agent's echo of it:
    both are stored as objects, the task keeps pointers, and a response carries them inline."""
    mid = f"m-limit-{door}-{framing}"
    body = padded(LIMIT, make, mid)
    response = post(r, path, headers, chunks(body) if framing == "chunked" else body)
    task = stored(r, task_of(door, response)["id"])
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "Echo: " + task["history"][0]["parts"][0]["text"]
    assert task["history"][0]["messageId"] == mid
    assert task["history"][0]["parts"][0]["text"] == "x" * (len(task["history"][0]["parts"][0]["text"]))
    assert len(task["history"][0]["parts"][0]["text"]) > LIMIT - 400


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [101, 1_000, 10_000, 100_000])
@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
def test_deep_nesting_is_a_parse_error(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str, depth: int
) -> None:
    """Python's json raises RecursionError near 1000 levels, and pydantic cannot serialize past ~255:
    anything deeper than 100 levels is refused as a parse error, wherever it is."""
    before = r.state()
    bodies = [
        b"[" * depth + b"]" * depth,
        json.dumps(make("x", "m-deep")).encode().replace(b'"x"', b"[" * depth + b"1" + b"]" * depth, 1),
        b'{"a":' * depth + b"1" + b"}" * depth,
    ]
    for body in bodies:
        if len(body) <= LIMIT:
            assert_refused(post(r, path, headers, body), door, PARSE_ERROR, 400)
    assert r.state() == before


# --------------------------------------------------------------------------- many parts, big maps


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
def test_ten_thousand_parts_are_stored_as_sent(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str
) -> None:
    """No count limit on parts: the body limit bounds them, and 10,000 tiny parts (about 160 KB of
    task) fit one DynamoDB item. All are stored, in order."""
    body = make("a", f"m-parts-{door}")
    msg = (body.get("params") or body).get("message") or body["request"]
    key = "content" if "content" in msg else "parts"
    count = 7_000 if door == "rpc-0.3" else 10_000  # v0.3 parts carry a "kind" each
    msg[key] = [{**msg[key][0], "text": str(i)} for i in range(count)]
    raw = json.dumps(body).encode()
    assert len(raw) < LIMIT
    task = stored(r, task_of(door, post(r, path, headers, raw))["id"])
    assert [p["text"] for p in task["history"][0]["parts"]] == [str(i) for i in range(count)]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


def test_huge_metadata_maps_are_stored_as_sent(r: Rig) -> None:
    metadata = {f"k{i}": i for i in range(6_000)}
    params = {"message": message("hi", "m-meta", metadata=metadata), "metadata": metadata}
    response = r.post(rpc_body("SendMessage", params), V1)
    task = stored(r, task_of("rpc-1.0", response)["id"])
    assert task["history"][0]["metadata"] == metadata


# --------------------------------------------------------------------------- ids


def _long_id_cases() -> list[Any]:
    cases = []
    for name, value in (("100k", "i" * 100_000), ("257-bytes", "i" * 257), ("65-emoji", EMOJI * 65)):
        cases += [
            pytest.param("SendMessage", {"message": message(message_id=value)}, INVALID_PARAMS, id=f"messageId-{name}"),
            pytest.param(
                "SendMessage", {"message": message(message_id="m", contextId=value)}, INVALID_PARAMS, id=f"ctx-{name}"
            ),
            pytest.param(
                "SendMessage", {"message": message(message_id="m", taskId=value)}, INVALID_PARAMS, id=f"taskId-{name}"
            ),
            pytest.param("SendMessage", {"message": message(), "tenant": value}, INVALID_PARAMS, id=f"tenant-{name}"),
            pytest.param(
                "SendMessage",
                {"message": message(), "configuration": {"taskPushNotificationConfig": {"id": value, "url": HOOK}}},
                INVALID_PARAMS,
                id=f"inline-push-config-id-{name}",
            ),
            pytest.param("GetTask", {"id": value}, TASK_NOT_FOUND, id=f"get-{name}"),
            pytest.param("GetTask", {"id": "{done}", "tenant": value}, TASK_NOT_FOUND, id=f"get-tenant-{name}"),
            pytest.param("CancelTask", {"id": value}, TASK_NOT_FOUND, id=f"cancel-{name}"),
            pytest.param("ListTasks", {"contextId": value}, INVALID_PARAMS, id=f"list-ctx-{name}"),
            pytest.param("ListTasks", {"tenant": value}, TASK_NOT_FOUND, id=f"list-tenant-{name}"),
            pytest.param(
                "CreateTaskPushNotificationConfig",
                {"taskId": "{done}", "id": value, "url": HOOK},
                INVALID_PARAMS,
                id=f"push-create-{name}",
            ),
            pytest.param(
                "GetTaskPushNotificationConfig",
                {"taskId": "{done}", "id": value},
                TASK_NOT_FOUND,
                id=f"push-get-{name}",
            ),
            pytest.param("ListTaskPushNotificationConfigs", {"taskId": value}, TASK_NOT_FOUND, id=f"push-list-{name}"),
        ]
    return cases


LONG_IDS = _long_id_cases()


@pytest.mark.parametrize(("method", "params", "code"), LONG_IDS)
def test_long_ids_are_refused_in_memory(r: Rig, method: str, params: dict[str, Any], code: int) -> None:
    """Over 256 bytes of UTF-8: invalid params where the id would be stored, task not found where
    it names something (no such id was ever issued)."""
    before = r.state()
    response = r.post(rpc_body(method, r.fill(params), "long"), V1)
    assert_rpc_error(response, rpc_id="long", codes=code, legacy=False)
    assert r.state() == before


@pytest.fixture(scope="module")
def moto_tables() -> Iterator[tuple[Any, Any]]:
    with moto_clients() as clients, item_size_fix():
        yield clients


@pytest.fixture(scope="module")
def dynamo_rig(moto_tables: tuple[Any, Any]) -> Iterator[Rig]:
    """The rig's app on the DynamoDB store (moto), worker inline."""
    dynamodb, sqs = moto_tables
    table = create_resources(dynamodb, sqs, prefix="limits").tables["TasksTable"]
    with rig(DynamoDBTaskStore(table, dynamodb), store="dynamodb", table_name=table) as value:
        yield value


def test_dynamo_rig_is_on_dynamodb(dynamo_rig: Rig) -> None:
    assert isinstance(dynamo_rig.runtime.store, DynamoDBTaskStore)


@pytest.mark.parametrize(("method", "params", "code"), LONG_IDS)
def test_long_ids_are_refused_before_dynamodb(dynamo_rig: Rig, method: str, params: dict[str, Any], code: int) -> None:
    """Regression: 65 emoji (260 bytes, 780 once percent-encoded) passed the old 256-*character*
    check and reached DynamoDB as a key over its limit: a ValidationException, answered -32603."""
    response = dynamo_rig.post(rpc_body(method, dynamo_rig.fill(params), "long"), V1)
    assert_rpc_error(response, rpc_id="long", codes=code, legacy=False)


@pytest.mark.parametrize(
    ("value", "tenant"),
    [
        pytest.param("i" * 256, "t" * 256, id="256-ascii"),
        pytest.param(EMOJI * 64, EMOJI * 64, id="64-emoji"),
        pytest.param("#%" * 128, "#%:" * 85, id="escapes"),
    ],
)
def test_ids_at_the_limit_round_trip_on_dynamodb(dynamo_rig: Rig, value: str, tenant: str) -> None:
    """256 bytes is accepted everywhere an id goes, and stored and found again as sent."""
    inline = {"taskPushNotificationConfig": {"id": value, "url": HOOK}}
    params = {"message": message("hi", value, contextId=value), "configuration": inline, "tenant": tenant}
    task = task_of("rpc-1.0", dynamo_rig.post(rpc_body("SendMessage", params), V1))
    assert task["contextId"] == value
    assert task["history"][0]["messageId"] == value

    def call(method: str, **fields: Any) -> Any:
        answer = dynamo_rig.post(rpc_body(method, {"tenant": tenant, **fields}), V1).json()
        assert "result" in answer, answer
        return answer["result"]

    assert call("GetTask", id=task["id"])["contextId"] == value
    assert [t["id"] for t in call("ListTasks", contextId=value)["tasks"]] == [task["id"]]
    assert call("GetTaskPushNotificationConfig", taskId=task["id"], id=value)["id"] == value
    # The same request again (same messageId, message and configuration): the same task
    again = call("SendMessage", message=message("hi", value, contextId=value), configuration=inline)
    assert again["task"]["id"] == task["id"]


# --------------------------------------------------------------------------- through a Lambda entry point


class LambdaContext:
    function_name = "a2a-limits"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:a2a-limits"
    aws_request_id = "11111111-2222-3333-4444-555555555555"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


@dataclass
class LambdaRig:
    dynamodb: Any
    sqs: Any
    table: str
    queue_url: str

    def invoke(
        self, body: bytes | None, *, base64_body: bool = False, without: str = "", **headers: str
    ) -> dict[str, Any]:
        """The recorded API Gateway REST proxy event, carrying ``body`` (and ``headers``, but not
        the header named ``without``), into SendMessage's function."""
        event = json.loads(RECORDED_EVENT.read_text())
        event["headers"] = {k: v for k, v in {**event["headers"], **headers}.items() if k != without}
        event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
        if body is None:
            event["body"] = None
        elif base64_body:
            event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
        else:
            event["body"] = body.decode()
        handler = importlib.import_module("a2a_serverless.functions.send_message").handler
        response: dict[str, Any] = handler(event, LambdaContext())
        return response

    def written(self) -> tuple[int, int]:
        """(items in the table, messages on the work queue)."""
        items = self.dynamodb.scan(TableName=self.table, Select="COUNT")["Count"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["All"])["Attributes"]
        return items, int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )


@pytest.fixture
def fn(moto_tables: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[LambdaRig]:
    """``functions.send_message`` as deployed: DynamoDB and the SQS work queue (moto), API Gateway
    authorizer identity. The work queue keeps SQS's default maximum message size (256 KiB): the
    template sets none, and moto's own default is AWS's newer 1 MiB ceiling."""
    dynamodb, sqs = moto_tables
    s3 = boto3.client("s3", region_name="us-east-1")
    resources = create_resources(dynamodb, sqs, s3=s3, prefix=f"fn-{uuid.uuid4().hex[:6]}")
    queue_url = resources.queue_urls["WorkQueue"]
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"MaximumMessageSize": str(SQS_LIMIT)})
    for key, value in {
        "POWERTOOLS_METRICS_NAMESPACE": "A2ATest",
        "A2A_STORE": "dynamodb",
        "A2A_TABLE_NAME": resources.tables["TasksTable"],
        "A2A_QUEUE_URL": queue_url,
        "A2A_BLOB_BUCKET": resources.buckets["BlobsBucket"],
        "A2A_AUTH_MODE": "apigateway",
    }.items():
        monkeypatch.setenv(key, value)
    reset_runtime()
    yield LambdaRig(dynamodb, sqs, resources.tables["TasksTable"], queue_url)
    reset_runtime()


def lambda_error(response: dict[str, Any], status: int, reason: str | None = None) -> dict[str, Any]:
    assert response["statusCode"] == status, response
    text = response["body"]
    for marker in LEAK_MARKERS:
        assert marker not in text, f"{marker!r} leaked: {text[:1000]}"
    body = json.loads(text)
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert error["code"] == status
    assert error["details"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    if reason is not None:
        assert error["details"][0]["reason"] == reason
    return error


def send_body(**extra: Any) -> dict[str, Any]:
    return {
        "message": message("hello", f"m-{uuid.uuid4().hex[:8]}"),
        "configuration": {"returnImmediately": True},
        **extra,
    }


@pytest.mark.parametrize("base64_body", [False, True], ids=["text", "base64"])
def test_lambda_accepts_a_body_at_the_limit(fn: LambdaRig, base64_body: bool) -> None:
    """A body of exactly the limit: its big text part goes to S3 (the work item, one SQS message,
    stays small), and the task reads back with the text as sent."""
    body = json.dumps(send_body(message=message("", "m-at-limit"))).encode()
    pad = LIMIT - len(body)
    body = body.replace(b'"text": ""', b'"text": "' + b"x" * pad + b'"')
    assert len(body) == LIMIT
    response = fn.invoke(body, base64_body=base64_body)
    assert response["statusCode"] == 200, response
    assert fn.written()[1] == 1
    s3 = boto3.client("s3", region_name="us-east-1")
    bucket = os.environ["A2A_BLOB_BUCKET"]
    (stored,) = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert stored["Size"] == pad


@pytest.mark.parametrize(
    ("body", "base64_body", "status", "reason"),
    [
        pytest.param(b"x" * (LIMIT + 1), False, 413, "PAYLOAD_TOO_LARGE", id="just-over"),
        pytest.param(b"x" * (6 * 1024 * 1024), True, 413, "PAYLOAD_TOO_LARGE", id="api-gateway-maximum"),
        pytest.param(b"[" * 100_000, False, 400, "INVALID_REQUEST", id="nested-100k"),
        pytest.param(b'{"message": {"messageId": "\xff\xfe"}}', True, 400, "INVALID_REQUEST", id="not-utf8"),
        pytest.param(b"\xef\xbb\xbf{}", True, 400, "INVALID_REQUEST", id="bom"),
        pytest.param(b"", False, 400, "INVALID_PARAMS", id="empty"),
        pytest.param(None, False, 400, "INVALID_PARAMS", id="no-body"),
        pytest.param(b'{"message": {"text": "\\ud800"}}', False, 400, "INVALID_REQUEST", id="lone-surrogate"),
        pytest.param(
            json.dumps(send_body(message=message("x", EMOJI * 65))).encode(),
            False,
            400,
            "INVALID_PARAMS",
            id="emoji-id",
        ),
    ],
)
def test_lambda_refuses_cleanly(fn: LambdaRig, body: bytes | None, base64_body: bool, status: int, reason: str) -> None:
    before = fn.written()
    lambda_error(fn.invoke(body, base64_body=base64_body), status, reason)
    assert fn.written() == before


@pytest.mark.parametrize(
    "metadata",
    [
        pytest.param({"k": "\\" * 120_000}, id="backslashes"),  # 240 KB of body, 480 KB as a work item
        pytest.param({"k": EMOJI * 50_000}, id="emoji"),  # 200 KB raw, 700 KB once escaped twice
        pytest.param({f"k{i}": '"' for i in range(15_000)}, id="many-quotes"),
    ],
)
def test_lambda_refuses_a_message_whose_work_does_not_fit_the_queue(fn: LambdaRig, metadata: dict[str, Any]) -> None:
    """Regression: the request ``metadata`` travels to the worker in the SQS work item, JSON in
    JSON, ASCII-escaped: a body under the limit could make a message over SQS's 256 KiB. The send
    failed after the task was stored: a FAILED task and a 500. It is refused before anything is
    written now."""
    body = json.dumps(send_body(metadata=metadata), ensure_ascii=False).encode()
    assert len(body) <= LIMIT
    before = fn.written()
    error = lambda_error(fn.invoke(body), 400, "INVALID_PARAMS")
    assert error["details"][1]["fieldViolations"][0]["field"] == "metadata"
    assert fn.written() == before


@pytest.mark.parametrize(
    "content_type",
    [
        pytest.param("text/plain", id="text-plain"),
        pytest.param("application/x-www-form-urlencoded", id="form-urlencoded"),
        pytest.param("multipart/form-data; boundary=x", id="multipart"),
        pytest.param(None, id="missing"),
    ],
)
def test_lambda_refuses_a_body_not_declared_json(fn: LambdaRig, content_type: str | None) -> None:
    """On AWS as locally: a body that is not declared JSON is 415, and nothing is written."""
    body = json.dumps(send_body()).encode()
    before = fn.written()
    if content_type is None:
        response = fn.invoke(body, without="Content-Type")
    else:
        response = fn.invoke(body, **{"Content-Type": content_type})
    lambda_error(response, 415, "CONTENT_TYPE_NOT_SUPPORTED")
    assert fn.written() == before
    assert fn.invoke(body, **{"Content-Type": "application/json; charset=utf-8"})["statusCode"] == 200


@pytest.mark.parametrize(
    ("part", "field"),
    [
        pytest.param({"mediaType": "text/plain\r\nX-Injected: 1"}, "mediaType", id="crlf-in-media-type"),
        pytest.param({"mediaType": "text/plain\u0000"}, "mediaType", id="nul-in-media-type"),
        pytest.param({"mediaType": "text/pl\u00e4in"}, "mediaType", id="non-ascii-media-type"),
        pytest.param({"mediaType": "text/" + "x" * 2000}, "mediaType", id="huge-media-type"),
        pytest.param({"filename": "a\r\nb.txt"}, "filename", id="crlf-in-filename"),
    ],
)
def test_lambda_refuses_header_breaking_part_fields(fn: LambdaRig, part: dict[str, str], field: str) -> None:
    """A large part's media type and file name travel in headers (S3's Content-Type, a presigned URL's
    Content-Type and Content-Disposition). One that no header can carry made S3 refuse the object, a
    503 "try again" that could never succeed (moto takes it); it is InvalidParams, nothing written."""
    big = {"text": "x" * (64 * 1024), **part}
    body = json.dumps(send_body(message={**message("", f"m-{uuid.uuid4().hex[:8]}"), "parts": [big]})).encode()
    before = fn.written()
    error = lambda_error(fn.invoke(body), 400, "INVALID_PARAMS")
    assert error["details"][1]["fieldViolations"][0]["field"] == f"message.parts[0].{field}"
    assert fn.written() == before


def test_lambda_huge_extensions_header(fn: LambdaRig) -> None:
    """API Gateway caps headers at 10 KB; past it, the same work-item check keeps a 1 MB
    ``A2A-Extensions`` header from becoming a 500."""
    before = fn.written()
    uris = ",".join(f"https://example.com/ext/{i}" for i in range(40_000))
    lambda_error(fn.invoke(json.dumps(send_body()).encode(), **{"A2A-Extensions": uris}), 400, "INVALID_PARAMS")
    assert fn.written() == before


# --------------------------------------------------------------------------- strings, encodings, headers


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
def test_nul_and_control_characters_round_trip(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str
) -> None:
    """NUL and other control characters are valid JSON strings (escaped): stored and read back as sent."""
    text, mid = "a\u0000b\u0001c\u001f\u007f\ufffe\uffff", f"m\u0000nul-{door}"
    task = stored(r, task_of(door, post(r, path, headers, json.dumps(make(text, mid)).encode()))["id"])
    assert task["history"][0]["messageId"] == mid
    assert task["history"][0]["parts"][0]["text"] == text


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
@pytest.mark.parametrize(
    "body",
    [
        pytest.param(lambda make: json.dumps(make("\ud800", "m-s")).encode(), id="lone-surrogate-in-text"),
        pytest.param(lambda make: json.dumps(make("x", "\udfff")).encode(), id="lone-surrogate-in-id"),
        pytest.param(lambda make: json.dumps(make("\xff", "m-u")).encode().replace(b"\\u00ff", b"\xff"), id="latin-1"),
        pytest.param(lambda make: json.dumps(make("x", "m")).encode()[:-3], id="truncated"),
        pytest.param(lambda make: b"\xef\xbb\xbf" + json.dumps(make("x", "m-bom")).encode(), id="bom"),
        pytest.param(lambda make: json.dumps(make("x", "m")).encode().replace(b'"x"', b"NaN"), id="nan"),
    ],
)
def test_bodies_that_are_not_json_are_parse_errors(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str, body: Callable[[Make], bytes]
) -> None:
    before = r.state()
    assert_refused(post(r, path, headers, body(make)), door, PARSE_ERROR, 400)
    assert r.state() == before


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
def test_empty_body(r: Rig, path: str, headers: dict[str, str], make: Make, door: str) -> None:
    """JSON-RPC: not JSON (-32700). REST: an empty request message, which lacks its message."""
    before = r.state()
    response = post(r, path, headers, b"")
    if door.startswith("rpc"):
        assert_refused(response, door, PARSE_ERROR, 400)
    elif door == "rest-0.3":
        assert_v03_rest_error(response, -32602, 422, "INVALID_PARAMS")  # the reference 0.3 server's status
    else:
        assert_rest_error(response, 400, "INVALID_PARAMS")
    assert r.state() == before


UNSUPPORTED_MEDIA_TYPE = -32005  # ContentTypeNotSupportedError (spec 5.4); HTTP 415 over REST
NOT_JSON_TYPES = [
    # What a page on any other origin may POST without a CORS preflight (cross-site request forgery).
    pytest.param("text/plain", id="text-plain"),
    pytest.param("text/plain;charset=UTF-8", id="text-plain-charset"),
    pytest.param("application/x-www-form-urlencoded", id="form-urlencoded"),
    pytest.param("multipart/form-data; boundary=x", id="multipart"),
    pytest.param(None, id="missing"),
    pytest.param("", id="empty"),
    # Not JSON, or JSON of another format.
    pytest.param("application/xml", id="xml"),
    pytest.param("text/json", id="text-json"),
    pytest.param("application/merge-patch+json", id="merge-patch"),
    pytest.param("application/jsonx", id="json-prefix"),
]


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
@pytest.mark.parametrize("content_type", NOT_JSON_TYPES)
def test_a_body_not_declared_json_is_refused(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str, content_type: str | None
) -> None:
    """A body whose Content-Type is not JSON, or that has none, is ContentTypeNotSupportedError
    (JSON-RPC -32005, REST 415 with the binding's error shape), and nothing is stored: a browser
    sends these types cross-origin without asking (official TCK, JSONRPC-SSE-002)."""
    body = json.dumps(make("forged", f"m-ct-{door}-{content_type}")).encode()
    sent = {**headers, **({} if content_type is None else {"Content-Type": content_type})}
    before = r.state()
    response = r.request("POST", path, content=body, headers=sent)
    assert_refused(response, door, UNSUPPORTED_MEDIA_TYPE, 415, "CONTENT_TYPE_NOT_SUPPORTED")
    assert response.headers["accept"] == "application/json, application/a2a+json"
    assert r.state() == before


@pytest.mark.parametrize(
    ("path", "headers", "body", "door"),
    [
        pytest.param("/", V1, {**_rpc_v1("s", "m-s1"), "method": "SendStreamingMessage"}, "rpc-1.0", id="jsonrpc-1.0"),
        pytest.param("/", {}, {**_rpc_v03("s", "m-s2"), "method": "message/stream"}, "rpc-0.3", id="jsonrpc-0.3"),
        pytest.param("/message:stream", V1, _rest_v1("s", "m-s3"), "rest-1.0", id="rest-1.0"),
        pytest.param("/v1/message:stream", {}, _rest_v03("s", "m-s4"), "rest-0.3", id="rest-0.3"),
    ],
)
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_stream_not_declared_json_is_refused_before_it_starts(
    r: Rig, path: str, headers: dict[str, str], body: dict[str, Any], door: str, content_type: str | None
) -> None:
    """The streaming sends too: a plain JSON error, not an event stream, and nothing stored."""
    sent = {
        **headers,
        "Accept": "text/event-stream",
        **({} if content_type is None else {"Content-Type": content_type}),
    }
    before = r.state()
    response = r.request("POST", path, content=json.dumps(body).encode(), headers=sent)
    assert_refused(response, door, UNSUPPORTED_MEDIA_TYPE, 415, "CONTENT_TYPE_NOT_SUPPORTED")
    assert r.state() == before


@pytest.mark.parametrize(
    ("verb", "path"),
    [
        pytest.param("POST", "/tasks/{waiting}:cancel", id="cancel"),
        pytest.param("POST", "/acme/tasks/{waiting}:cancel", id="tenant-cancel"),
        pytest.param("POST", "/v1/tasks/{waiting}:cancel", id="v03-cancel"),
        pytest.param("POST", "/tasks/{done}/pushNotificationConfigs", id="push-create"),
        pytest.param("POST", "/tasks/{done}:subscribe", id="subscribe"),
    ],
)
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_an_empty_body_declared_otherwise_is_refused(r: Rig, verb: str, path: str, content_type: str) -> None:
    """A form with no fields still says what it is: an HTML form on another site may POST it."""
    v03 = path.startswith("/v1/")
    before = r.state()
    response = r.request(verb, r.fill(path), content=b"", headers={**({} if v03 else V1), "Content-Type": content_type})
    assert_refused(
        response, "rest-0.3" if v03 else "rest-1.0", UNSUPPORTED_MEDIA_TYPE, 415, "CONTENT_TYPE_NOT_SUPPORTED"
    )
    assert r.state() == before


@pytest.mark.parametrize(
    ("path", "body", "door"),
    [
        pytest.param(
            "/",
            {
                **_rpc_v03("x", "m-v03-mime"),
                "params": {
                    "message": {
                        **_v03_message("x", "m-v03-mime"),
                        "parts": [{"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain\r\nX: 1"}}],
                    }
                },
            },
            "rpc-0.3",
            id="jsonrpc-0.3",
        ),
        pytest.param(
            "/v1/message:send",
            {
                "request": {
                    "messageId": "m-v03r-mime",
                    "role": "ROLE_USER",
                    "content": [{"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain\r\nX: 1"}}],
                }
            },
            "rest-0.3",
            id="rest-0.3",
        ),
    ],
)
def test_a_v03_mime_type_no_header_can_carry_is_invalid_params(
    r: Rig, path: str, body: dict[str, Any], door: str
) -> None:
    """v0.3's ``mimeType`` is the part's media type: the same rule (REST: the reference server's 422)."""
    before = r.state()
    response = post(r, path, {}, json.dumps(body).encode())
    if door == "rpc-0.3":
        error = assert_rpc_error(response, rpc_id=1, codes=INVALID_PARAMS, legacy=True)
        assert error["data"]["fieldViolations"][0]["field"] == "message.parts[0].mediaType"
    else:
        assert_v03_rest_error(response, INVALID_PARAMS, 422, "INVALID_PARAMS")
    assert r.state() == before


def test_requests_without_a_body_need_no_content_type(r: Rig) -> None:
    """GET and DELETE carry no body, and POST ``:cancel`` may have none: no Content-Type needed."""
    task = r.send("ask me", "m-no-body")
    got = r.request("GET", f"/tasks/{task['id']}", headers=V1)
    assert got.status_code == 200, got.text
    canceled = r.request("POST", f"/tasks/{task['id']}:cancel", content=b"", headers=V1)
    assert canceled.status_code == 200, canceled.text
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"


@pytest.mark.parametrize(("path", "headers", "make", "door"), DOORS)
@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/a2a+json",
        "application/json; charset=utf-8",
        "Application/JSON;Charset=UTF-8",
        "APPLICATION/A2A+JSON; charset=utf-8",
        " application/a2a+json ; version=1.0",
    ],
)
def test_the_json_types_are_accepted_with_parameters(
    r: Rig, path: str, headers: dict[str, str], make: Make, door: str, content_type: str
) -> None:
    """Both JSON types on every door, any case, parameters ignored (RFC 8259: JSON is UTF-8)."""
    mid = f"m-ct-{door}-{content_type}"
    body = json.dumps(make("typed", mid)).encode()
    response = r.request("POST", path, content=body, headers={**headers, "Content-Type": content_type})
    assert stored(r, task_of(door, response)["id"])["history"][0]["messageId"] == mid


@pytest.mark.parametrize(
    ("verb", "path"),
    [
        pytest.param("GET", "/tasks/%FF", id="task-id"),
        pytest.param("GET", "/v1/tasks/%ED%A0%80", id="v03-task-id"),
        pytest.param("POST", "/%C3%28/message:send", id="tenant"),
        pytest.param("GET", "/tasks?contextId=%F0%28%8C%BC", id="query"),
        pytest.param("GET", "/tasks/{done}/pushNotificationConfigs/%80", id="config-id"),
    ],
)
def test_urls_that_are_not_utf8_are_invalid_params(r: Rig, verb: str, path: str) -> None:
    before = r.state()
    body = json.dumps({"message": message()}).encode() if verb == "POST" else None
    response = r.request(verb, r.fill(path), content=body, headers=V1)
    assert_rest_error(response, 400, "INVALID_PARAMS")
    assert r.state() == before


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(b"1.0\xff", id="latin-1-byte"),
        pytest.param(b"\xef\xbb\xbf1.0", id="bom"),
        pytest.param(b"1.0\x00", id="nul"),
        pytest.param(b"1" * (1024 * 1024), id="one-megabyte"),
    ],
)
def test_odd_version_headers_are_version_errors(r: Rig, value: bytes) -> None:
    before = r.state()
    for path, body in (("/", rpc_body("GetTask", {"id": r.tasks["done"]["id"]}, "v")), ("/message:send", None)):
        response = r.request(
            "POST",
            path,
            content=body or json.dumps({"message": message()}).encode(),
            headers=[(b"A2A-Version", value), (b"Content-Type", b"application/json")],
        )
        if path == "/":
            assert_rpc_error(response, rpc_id="v", codes=-32009, legacy=None)
        else:
            assert_rest_error(response, 400, "VERSION_NOT_SUPPORTED")
    assert r.state() == before


def test_megabyte_headers_are_ignored_or_refused(r: Rig) -> None:
    """Headers are not the body: a 1 MB ``A2A-Extensions`` on a read changes nothing, and on a send
    it is refused before anything is stored (it would travel in the work item). API Gateway and the
    local server cap headers far below this anyway."""
    uris = ",".join(f"https://example.com/ext/{i}" for i in range(40_000)).encode()
    got = r.request(
        "GET", f"/tasks/{r.tasks['done']['id']}", headers=[(b"A2A-Version", b"1.0"), (b"A2A-Extensions", uris)]
    )
    assert got.status_code == 200, got.text[:500]
    before = r.state()
    sent = r.request(
        "POST",
        "/message:send",
        content=json.dumps({"message": message("hi", "m-ext")}).encode(),
        headers=[
            (b"A2A-Version", b"1.0"),
            (b"Content-Type", b"application/json"),
            (b"A2A-Extensions", uris),
            (b"X-Junk", b"\xff" * 1024 * 1024),
        ],
    )
    assert_rest_error(sent, 400, "INVALID_PARAMS")
    assert r.state() == before


def test_megabyte_credentials_are_unauthenticated() -> None:
    with rig(caller={"Authorization": "Bearer key-a"}, auth_mode="api-key", api_keys={"key-a": "alice"}) as keyed:
        before = keyed.store.snapshot()
        for token in (b"Bearer " + b"k" * 1024 * 1024, b"Bearer \xff\xfe", b"Bearer key-a\x00"):
            response = keyed.request(
                "POST",
                "/message:send",
                content=json.dumps({"message": message()}).encode(),
                headers=[(b"A2A-Version", b"1.0"), (b"Content-Type", b"application/json"), (b"Authorization", token)],
            )
            assert_no_leak(response)
            assert response.status_code == 401, response.text[:500]
        assert keyed.store.snapshot() == before
