"""Runs the real local stack with a stand-in app and worker (for test_devstack_stack.py).

The stand-ins only read what the stack provides, the process environment and the Lambda event, so
the test exercises the stack itself: moto, the template's resources, the pollers, uvicorn, signals.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import boto3
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_serverless.ports.queue import WorkItem
from a2a_serverless_dev.resources import load_template
from a2a_serverless_dev.stack import DevOptions, run


def card(request: Request) -> Response:
    return JSONResponse({"url": os.environ["A2A_PUBLIC_URL"], "table": os.environ["A2A_TABLE_NAME"]})


def enqueue(request: Request) -> Response:
    item = WorkItem(tenant="", owner="anonymous", task_id=request.query_params["task"], message_id="m")
    boto3.client("sqs").send_message(
        QueueUrl=os.environ["A2A_QUEUE_URL"],
        MessageBody=item.to_json(),
        MessageGroupId=item.task_id,
        MessageDeduplicationId=item.deduplication_id,
    )
    return Response(status_code=202)


def app() -> Starlette:
    return Starlette(
        routes=[
            Route("/.well-known/agent-card.json", card),
            Route("/enqueue", enqueue, methods=["POST"]),
        ]
    )


def worker(event: dict[str, Any], context: Any) -> dict[str, Any]:
    (record,) = event["Records"]
    task = WorkItem.from_json(record["body"]).task_id
    attempt = record["attributes"]["ApproximateReceiveCount"]
    _say(f"handled {task} attempt={attempt} in={context.function_name}")
    if task == "fail-once" and attempt == "1":
        return {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
    return {"batchItemFailures": []}


def _say(line: str) -> None:
    # One write per line: uvicorn's access log shares stdout from another thread.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def resolve(path: str) -> Any:
    _say(f"resolved {path}")
    return worker


def template() -> dict[str, Any]:
    """The template, with a work queue that redelivers after a second (the test waits for it)."""
    loaded = load_template()
    loaded["Resources"]["WorkQueue"]["Properties"]["VisibilityTimeout"] = 1
    return loaded


if __name__ == "__main__":
    options = DevOptions(port=0, workers=2, prefix="standin")
    sys.exit(run(options, app_factory=app, resolve_handler=resolve, template=template()))
