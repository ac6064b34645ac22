"""``a2a-serverless dev --state-dir DIR``: what the stack holds survives a restart (tasks with their
events and stored parts, push configs, queued work), and a run cut off by the stop ends FAILED at
the next start instead of staying WORKING."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import httpx

from a2a_serverless_dev._state import restore_state, save_state
from a2a_serverless_dev.resources import LocalResources, create_resources, load_template
from testkit.aws import REGION, moto_clients
from testkit.devstack import DevStack

V1 = {"A2A-Version": "1.0"}


def test_items_messages_and_objects_survive_a_save_and_a_restore(tmp_path: Path) -> None:
    template = load_template()
    with moto_clients() as (dynamodb, sqs):
        s3 = boto3.client("s3", region_name=REGION)
        clients = {"dynamodb": dynamodb, "sqs": sqs, "s3": s3}
        before = create_resources(dynamodb, sqs, s3=s3, prefix="one", template=template)
        table, queue = before.tables["TasksTable"], before.queue_urls["WorkQueue"]
        bucket = before.buckets["BlobsBucket"]
        item = {"pk": {"S": "TASK#a"}, "sk": {"S": "META"}, "z": {"B": b"\x00\xff"}}
        dynamodb.put_item(TableName=table, Item=item)
        for n in range(3):  # one FIFO group: its messages come out one at a time
            sqs.send_message(
                QueueUrl=queue, MessageBody=f"work {n}", MessageGroupId="g", MessageDeduplicationId=f"d{n}"
            )
        s3.put_object(Bucket=bucket, Key="tasks/x/y", Body=b"part bytes")
        assert save_state(tmp_path, before, clients) == {"items": 1, "messages": 3, "objects": 1}

    with moto_clients() as (dynamodb, sqs):  # a fresh account, as at the next start
        s3 = boto3.client("s3", region_name=REGION)
        clients = {"dynamodb": dynamodb, "sqs": sqs, "s3": s3}
        after = create_resources(dynamodb, sqs, s3=s3, prefix="one", template=template)
        assert restore_state(tmp_path, after, clients) == {"items": 1, "messages": 3, "objects": 1}
        key = {"pk": {"S": "TASK#a"}, "sk": {"S": "META"}}
        assert dynamodb.get_item(TableName=after.tables["TasksTable"], Key=key)["Item"]["z"]["B"] == b"\x00\xff"
        bodies = []
        for _ in range(3):
            (message,) = sqs.receive_message(QueueUrl=after.queue_urls["WorkQueue"])["Messages"]
            bodies.append(message["Body"])
            sqs.delete_message(QueueUrl=after.queue_urls["WorkQueue"], ReceiptHandle=message["ReceiptHandle"])
        assert bodies == ["work 0", "work 1", "work 2"]  # in order
        assert s3.get_object(Bucket=after.buckets["BlobsBucket"], Key="tasks/x/y")["Body"].read() == b"part bytes"


def test_nothing_saved_is_nothing_restored(tmp_path: Path) -> None:
    assert restore_state(tmp_path, LocalResources(), {}) is None


class _Stack:
    """The stack with ``--state-dir``, and the two calls the test makes of it."""

    def __init__(self, state_dir: Path) -> None:
        self.stack = DevStack.start("--state-dir", str(state_dir))
        self.base, self.lines = self.stack.base, self.stack.lines

    def stop(self) -> None:
        assert self.stack.stop() == 0, "\n".join(self.lines)

    def send(self, text: str, **configuration: Any) -> dict[str, Any]:
        message = {"messageId": text.replace(" ", "-"), "role": "ROLE_USER", "parts": [{"text": text}]}
        body: dict[str, Any] = {"message": message}
        if configuration:
            body["configuration"] = configuration
        task: dict[str, Any] = httpx.post(f"{self.base}/message:send", json=body, headers=V1, timeout=30).json()["task"]
        return task

    def get(self, task_id: str) -> dict[str, Any]:
        task: dict[str, Any] = httpx.get(f"{self.base}/tasks/{task_id}", headers=V1, timeout=30).json()
        return task


def test_a_restarted_stack_has_its_tasks_and_no_run_stays_working(tmp_path: Path) -> None:
    # Given: a stack with a finished task, one with a 100 KB answer (stored as an object), a push
    # config, and a run in flight when it stops
    first = _Stack(tmp_path)
    try:
        done = first.send("hello")
        long = first.send("long 100KB")
        running = first.send("sleep 60", returnImmediately=True)
        config = {"taskId": done["id"], "url": "http://127.0.0.1:9/hook", "token": "t"}
        created = httpx.post(f"{first.base}/tasks/{done['id']}/pushNotificationConfigs", json=config, headers=V1).json()
    finally:
        first.stop()
    assert any("state saved to" in line for line in first.lines)

    # When: it starts again with the same directory
    second = _Stack(tmp_path)
    try:
        # Then: the tasks are there as they were, the object's part whole, the push config too
        assert second.get(done["id"]) == done  # as the blocking send returned it
        assert second.get(long["id"])["artifacts"][0]["parts"][0]["text"].startswith("the agent wrote")
        assert len(second.get(long["id"])["artifacts"][0]["parts"][0]["text"]) == 100 * 1024
        got = httpx.get(f"{second.base}/tasks/{done['id']}/pushNotificationConfigs/{created['id']}", headers=V1).json()
        assert got["url"] == config["url"]
        # and the run the stop cut off ended FAILED with the sweeper's message, not WORKING
        cut = second.get(running["id"])
        assert cut["status"]["state"] == "TASK_STATE_FAILED"
        assert any("1 run(s) cut off by the last stop failed" in line for line in second.lines)
    finally:
        second.stop()
