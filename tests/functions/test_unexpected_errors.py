"""An unexpected server error, in the gateway app served by a process of its own (under the Lambda
Web Adapter, or as the local stack's API process): logged at ERROR with its traceback and the
request id the caller's error carries, as the functions log (Powertools' JSON), never as bare text
(which the local stack's console showed as INFO)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERVE_ONE_CALL = """
import asyncio, json, httpx
from a2a_serverless.transport.app import create_app

async def main():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app()), base_url="http://127.0.0.1") as c:
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        answer = await c.post("/", json=body, headers={"A2A-Version": "1.0"})
        print("ANSWER " + json.dumps(answer.json()))

asyncio.run(main())
"""


def test_an_unexpected_error_is_logged_at_error_with_its_traceback_and_request_id(tmp_path: Path) -> None:
    # Given the app in a process that set up no logging, where a call fails unexpectedly (tracing
    # misconfigured: off Lambda nothing checked it at start)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "AWS_LAMBDA_"))}
    env.update(A2A_STORE="memory", A2A_TRACING="jaeger")

    # When a call is made
    result = subprocess.run(
        [sys.executable, "-c", SERVE_ONE_CALL], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )

    # Then the caller gets a generic internal error carrying a request id ...
    assert result.returncode == 0, result.stderr
    (answer,) = [json.loads(line[7:]) for line in result.stdout.splitlines() if line.startswith("ANSWER ")]
    assert answer["error"]["message"] == "Internal error"
    request_id = answer["error"]["data"][0]["metadata"]["requestId"]
    assert request_id
    # ... and one JSON line at ERROR says what happened, with the traceback and that id
    (logged,) = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert logged["level"] == "ERROR"
    assert logged["message"] == "unexpected error in JSON-RPC handler"
    assert logged["request_id"] == request_id
    assert "Traceback" in logged["exception"]
    assert "TracingConfigError" in logged["exception"]
    assert result.stderr == ""
