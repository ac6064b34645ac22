"""Every function's handler, as the Lambda layer installs the kit (``pip install .``, no extras):
imported and given one recorded event each, against a moto server (``A2A_AWS_ENDPOINT_URL``) whose
table and queues ``run.py`` created as the local stack does. Runs in that install's interpreter, so
it imports nothing but the standard library, the kit and what the kit requires; the events are
``tests/functions/events`` (``lambda_events`` re-aims the recorded API Gateway event).

One line per handler; the first handler that fails to import or answers wrongly stops the run with
its reason (exit 1). The handlers are the template's ``Handler`` strings, which must name every
module of ``a2a_serverless.functions``."""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "functions"))

from lambda_events import EVENTS, LambdaContext, api_event  # noqa: E402

HANDLER = re.compile(r"\ba2a_serverless\.functions\.(\w+)\.handler\b")
WEBHOOK_RECEIVED: list[bytes] = []


class Webhook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        WEBHOOK_RECEIVED.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def recorded(name: str) -> Any:
    return json.loads((EVENTS / name).read_text())


def call(module: str, event: Any) -> Any:
    handler = importlib.import_module(f"a2a_serverless.functions.{module}").handler
    return handler(event, LambdaContext(function_name=module))


def answered(response: Any, status: int = 200) -> Any:
    assert response.get("statusCode") == status, response
    return json.loads(response["body"])


def sqs_event(queue_url: str, queue_arn: str) -> Any:
    """The SQS event Lambda would make of the queue's next message (its one record)."""
    import boto3

    sqs = boto3.client("sqs", endpoint_url=os.environ["A2A_AWS_ENDPOINT_URL"])
    messages = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=1, WaitTimeSeconds=5, MessageSystemAttributeNames=["All"]
    ).get("Messages", [])
    assert messages, f"nothing on {queue_url}"
    event = recorded("sqs_work_item.json")
    record = event["Records"][0]
    (message,) = messages
    record.update(
        messageId=message["MessageId"],
        receiptHandle=message["ReceiptHandle"],
        body=message["Body"],
        attributes={**record["attributes"], **message["Attributes"]},
        md5OfBody=message["MD5OfBody"],
        eventSourceARN=queue_arn,
    )
    return event


def stream_event(task_id: str) -> Any:
    """The recorded stream event, its record what carries the task's newest events as DynamoDB
    Streams would send it (NEW_IMAGE): its head, when that holds the events that ended the task,
    else its latest event item."""
    import boto3

    dynamodb = boto3.client("dynamodb", endpoint_url=os.environ["A2A_AWS_ENDPOINT_URL"])
    items = dynamodb.scan(TableName=os.environ["A2A_TABLE_NAME"])["Items"]
    mine = [i for i in items if i.get("taskId", {}).get("S") == task_id]
    heads = [i for i in mine if i["sk"]["S"] == "META" and "heldFirst" in i]
    events = [i for i in mine if i["sk"]["S"].startswith("EVT#")]
    assert heads or events, f"no event item of task {task_id} in the table"
    item = heads[0] if heads else max(events, key=lambda i: i["sk"]["S"])
    event = recorded("dynamodb_stream_event_insert.json")
    event["Records"][0]["dynamodb"].update(Keys={"pk": item["pk"], "sk": item["sk"]}, NewImage=item)
    if heads:
        event["Records"][0]["eventName"] = "MODIFY"
    return event


def main() -> int:
    template = (REPO / "template.yaml").read_text()
    modules = {path.stem for path in (REPO / "shared" / "a2a_serverless" / "functions").glob("[!_]*.py")}
    named = set(HANDLER.findall(template))
    if named != modules:
        print(f"the template's handlers {sorted(named)} are not the functions' modules {sorted(modules)}")
        return 1
    queues = json.loads(os.environ["PROFILE_QUEUES"])
    webhook = ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=webhook.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{webhook.server_address[1]}/hook"
    task: dict[str, Any] = {}

    def send_message() -> str:
        sent = answered(call("send_message", recorded("apigw_rest_post_message_send.json")))
        task.update(sent["task"])
        return task["status"]["state"]

    def worker() -> str:
        event = sqs_event(queues["WorkQueue"]["url"], queues["WorkQueue"]["arn"])
        task["work_item"] = event["Records"][0]["body"]
        result = call("worker", event)
        assert result == {"batchItemFailures": []}, result
        return "no failed item"

    def gateway() -> str:
        got = answered(call("gateway", api_event("GET", f"/tasks/{task['id']}", resource="/tasks/{id}")))
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        return got["status"]["state"]

    def list_tasks() -> str:
        listed = answered(call("list_tasks", api_event("GET", "/tasks")))
        assert [t["id"] for t in listed["tasks"]] == [task["id"]], listed
        return "1 task"

    config_path = "/tasks/{id}/pushNotificationConfigs"

    def create_push_config() -> str:
        path = config_path.replace("{id}", task["id"])
        created = answered(
            call("create_push_config", api_event("POST", path, body={"url": hook}, resource=config_path))
        )
        task["config"] = created["id"]
        return f"config {created['id']}"

    def get_push_config() -> str:
        path = f"{config_path}/{{configId}}"
        concrete = path.replace("{id}", task["id"]).replace("{configId}", task["config"])
        answered(call("get_push_config", api_event("GET", concrete, resource=path)))
        return "200"

    def list_push_configs() -> str:
        listed = answered(
            call("list_push_configs", api_event("GET", config_path.replace("{id}", task["id"]), resource=config_path))
        )
        return f"{len(listed['configs'])} config"

    def push_dispatcher() -> str:
        result = call("push_dispatcher", stream_event(task["id"]))
        assert result == {"batchItemFailures": []}, result
        return "no failed record"

    def push_delivery() -> str:
        queue = queues["PushDeliveryQueue"]
        result = call("push_delivery", sqs_event(queue["url"], queue["arn"]))
        assert result == {"batchItemFailures": []}, result
        return f"{len(WEBHOOK_RECEIVED)} webhook POST"

    def delete_push_config() -> str:
        path = f"{config_path}/{{configId}}"
        concrete = path.replace("{id}", task["id"]).replace("{configId}", task["config"])
        response = call("delete_push_config", api_event("DELETE", concrete, resource=path))
        assert response["statusCode"] in (200, 204), response
        return str(response["statusCode"])

    def agent_card() -> str:
        card = answered(call("agent_card", api_event("GET", "/.well-known/agent-card.json")))
        return card["name"]

    def get_extended_card() -> str:
        # No extended card is configured: the spec's answer is UnsupportedOperationError.
        error = answered(call("get_extended_card", api_event("GET", "/extendedAgentCard")), 400)
        return json.dumps(error)[:80]

    def authorizer() -> str:
        policy = call("authorizer", recorded("apigw_request_authorizer.json"))
        (statement,) = policy["policyDocument"]["Statement"]
        return statement["Effect"]

    def dead_letter() -> str:
        # The task's work item, as if SQS had given up on it: the task is done, so it stays COMPLETED.
        event = recorded("sqs_work_item.json")
        event["Records"][0]["body"] = task["work_item"]
        result = call("dead_letter", event)
        assert result == {"batchItemFailures": []}, result
        got = answered(call("gateway", api_event("GET", f"/tasks/{task['id']}", resource="/tasks/{id}")))
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        return "no failed item, the task still COMPLETED"

    def sweeper() -> str:
        result = call("sweeper", recorded("eventbridge_scheduled_event.json"))
        return json.dumps(result)[:80]

    def durable_worker() -> str:
        # Not a durable execution's event: the durable SDK refuses it, once the cold start is done.
        try:
            call("durable_worker", {"Records": []})
        except Exception as exc:
            if not type(exc).__module__.startswith("aws_durable_execution_sdk_python"):
                raise
            return f"refused by the durable SDK: {type(exc).__name__}"
        raise AssertionError("the durable worker took an event that is not a durable execution's")

    steps: list[Callable[[], str]] = [
        authorizer,
        agent_card,
        send_message,
        worker,
        gateway,
        list_tasks,
        create_push_config,
        get_push_config,
        list_push_configs,
        push_dispatcher,
        push_delivery,
        delete_push_config,
        get_extended_card,
        dead_letter,
        sweeper,
        durable_worker,
    ]
    assert {step.__name__ for step in steps} == modules, sorted(modules ^ {step.__name__ for step in steps})
    for step in steps:
        try:
            print(f"  {step.__name__}: {step()}", flush=True)
        except Exception:
            print(f"  {step.__name__}: FAILED\n{traceback.format_exc()}", flush=True)
            return 1
    webhook.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
