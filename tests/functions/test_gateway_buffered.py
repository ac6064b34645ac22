"""The gateway without the Lambda Web Adapter (``WebAdapterLayerVersion`` 0, as under
``sam local``): ``a2a_serverless.functions.gateway`` serves the gateway's routes (JSON-RPC at
``POST /``, ``/tasks/{id}``, the streams) from API Gateway events, buffered: a stream is one body
of Server-Sent Events, once it ends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lambda_events import api_event, body, invoke

MESSAGE = {"messageId": "m-gw-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}


@pytest.fixture
def aws(lambda_aws: Any) -> Any:
    lambda_aws.configure(A2A_AUTH_MODE="apigateway")
    return lambda_aws


def jsonrpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def test_jsonrpc_send_then_get_task_over_rest(aws: Any) -> None:
    # When a JSON-RPC SendMessage (not blocking) reaches the gateway's POST /
    send = jsonrpc("SendMessage", {"message": MESSAGE, "configuration": {"returnImmediately": True}})
    sent = invoke("gateway", api_event("POST", "/", body=send))
    # Then it is answered as JSON-RPC, with the task the principal now owns
    assert sent["statusCode"] == 200, sent
    task = body(sent)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    # And GET /tasks/{id} (routed to the gateway, since it may be a subscribe) reads it back
    got = invoke("gateway", api_event("GET", f"/tasks/{task['id']}", resource="/tasks/{id}"))
    assert got["statusCode"] == 200, got
    assert body(got)["id"] == task["id"]
    # And another principal does not find it
    other = invoke("gateway", api_event("GET", f"/tasks/{task['id']}", resource="/tasks/{id}", principal="user-bob"))
    assert other["statusCode"] == 404


def test_a_stream_is_answered_as_one_body_of_events(aws: Any) -> None:
    # Given a runtime that runs the agent as the message is sent (in memory, no work queue), so the
    # task ends, and its stream with it, within the invocation
    aws.configure(A2A_STORE="memory", A2A_QUEUE_URL="", A2A_STREAM_MAX_SECONDS="60")
    # When a SendStreamingMessage reaches POST /message:stream
    sent = invoke("gateway", api_event("POST", "/message:stream", body={"message": MESSAGE}))
    # Then the whole stream comes back as one text body of SSE events, from the task to its end
    assert sent["statusCode"] == 200, sent
    assert sent["headers"]["content-type"].startswith("text/event-stream")
    assert sent["isBase64Encoded"] is False
    events = [json.loads(line[5:]) for line in sent["body"].splitlines() if line.startswith("data:")]
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
