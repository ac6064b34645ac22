"""``a2a-serverless dev --state-dir DIR``: the local stack's data kept across restarts.

When the stack stops (Ctrl-C, SIGTERM), after its functions have stopped and before moto does, it
writes what moto holds through the AWS APIs only (no moto internals): every item of the template's
tables (``Scan``), every message waiting on its queues (received, saved, deleted: a FIFO queue hands
out a group's next message only once the one before is gone), every object of its buckets. When it
starts with the same directory, it writes them back the same way before any function runs.

A run that was in flight when the stack stopped was cut off, as a Lambda environment that is shut
down cuts its invocation: its task still names the run, with a lease. At start the stack settles
those runs at once, as the sweeper would once their leases lapsed on AWS (the task fails with the
sweeper's message), so no task stays WORKING. Push configs keep their delivery cursors, so the
dispatcher, fed again by the restored items' stream records, sends nothing twice.

The directory holds ``state.json`` (items and messages, binary values base64) and ``objects/``. A
stack killed without a chance to stop (SIGKILL, a power cut) saves nothing; the previous save stays.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from a2a_serverless.json_types import Json, JsonValue

from ._loggers import kit_logger
from .resources import LocalResources

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import ScanInputTypeDef, WriteRequestUnionTypeDef
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ListObjectsV2RequestTypeDef
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageRequestTypeDef

_log = kit_logger("a2a_serverless_dev.stack")  # the stack's own lines

__all__ = ["STATE_FILE", "StateClients", "restore_and_settle", "restore_state", "save_logged", "save_state"]

STATE_FILE = "state.json"
_VERSION = 1


class StateClients(TypedDict):
    """The clients on moto the state is saved and restored through."""

    dynamodb: DynamoDBClient
    sqs: SQSClient
    s3: S3Client


def save_state(directory: Path, resources: LocalResources, clients: StateClients) -> dict[str, int]:
    """Write the tables' items, the queues' waiting messages and the buckets' objects to
    ``directory``; returns how many of each were saved."""
    directory.mkdir(parents=True, exist_ok=True)
    dynamodb, sqs, s3 = clients["dynamodb"], clients["sqs"], clients["s3"]
    tables: dict[str, list[JsonValue]] = {}
    for logical_id, name in resources.tables.items():
        items: list[JsonValue] = []
        kwargs: ScanInputTypeDef = {"TableName": name, "ConsistentRead": True}
        while True:
            page = dynamodb.scan(**kwargs)
            items.extend(_encode(item) for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        tables[logical_id] = items
    queues: dict[str, list[Json]] = {}
    for logical_id, url in resources.queue_urls.items():
        queues[logical_id] = _drain(sqs, url)
    objects = directory / "objects"
    count = 0
    for logical_id, bucket in resources.buckets.items():
        for key in _keys(s3, bucket):
            target = objects / logical_id / key
            target.parent.mkdir(parents=True, exist_ok=True)
            response = s3.get_object(Bucket=bucket, Key=key)
            target.write_bytes(response["Body"].read())
            count += 1
    state = {"version": _VERSION, "tables": tables, "queues": queues}
    # Written whole, then renamed: a stop interrupted half way leaves the previous save.
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, encoding="utf-8") as out:
        json.dump(state, out, separators=(",", ":"))
    os.replace(out.name, directory / STATE_FILE)
    return {
        "items": sum(len(v) for v in tables.values()),
        "messages": sum(len(v) for v in queues.values()),
        "objects": count,
    }


def restore_state(directory: Path, resources: LocalResources, clients: StateClients) -> dict[str, int] | None:
    """Write back what :func:`save_state` saved in ``directory`` (None when nothing was saved)."""
    path = directory / STATE_FILE
    if not path.is_file():
        return None
    state: Json = json.loads(path.read_text(encoding="utf-8"))
    if state.get("version") != _VERSION:
        raise ValueError(f"{path} was written by another version of the local stack")
    dynamodb, sqs, s3 = clients["dynamodb"], clients["sqs"], clients["s3"]
    items = 0
    for logical_id, saved in state["tables"].items():
        name = resources.tables.get(logical_id)
        if name is None:
            continue
        for start in range(0, len(saved), 25):
            requests: list[WriteRequestUnionTypeDef] = [
                {"PutRequest": {"Item": _decode(item)}} for item in saved[start : start + 25]
            ]
            pending: Mapping[str, Sequence[WriteRequestUnionTypeDef]] = {name: requests}
            while pending:
                pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        items += len(saved)
    messages = 0
    for logical_id, saved_messages in state["queues"].items():
        url = resources.queue_urls.get(logical_id)
        if url is None:
            continue
        for message in saved_messages:
            sent: SendMessageRequestTypeDef = {"QueueUrl": url, "MessageBody": message["body"]}
            if message.get("group"):
                sent["MessageGroupId"] = message["group"]
            if message.get("deduplication"):
                sent["MessageDeduplicationId"] = message["deduplication"]
            sqs.send_message(**sent)
            messages += 1
    objects = 0
    for logical_id, bucket in resources.buckets.items():
        root = directory / "objects" / logical_id
        if not root.is_dir():
            continue
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            s3.put_object(Bucket=bucket, Key=file.relative_to(root).as_posix(), Body=file.read_bytes())
            objects += 1
    return {"items": items, "messages": messages, "objects": objects}


def _drain(sqs: SQSClient, url: str) -> list[Json]:
    saved: list[Json] = []
    while True:
        received = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=0,
            VisibilityTimeout=60,
            MessageSystemAttributeNames=["MessageGroupId", "MessageDeduplicationId"],
        ).get("Messages", [])
        if not received:
            return saved
        for message in received:
            attributes = message.get("Attributes", {})
            saved.append(
                {
                    "body": message["Body"],
                    "group": attributes.get("MessageGroupId", ""),
                    "deduplication": attributes.get("MessageDeduplicationId", ""),
                }
            )
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def _keys(s3: S3Client, bucket: str) -> list[str]:
    keys: list[str] = []
    kwargs: ListObjectsV2RequestTypeDef = {"Bucket": bucket}
    while True:
        page = s3.list_objects_v2(**kwargs)
        keys.extend(str(o["Key"]) for o in page.get("Contents", []))
        if not page.get("IsTruncated"):
            return keys
        kwargs["ContinuationToken"] = page["NextContinuationToken"]


def _encode(value: object) -> JsonValue:
    """A low-level DynamoDB item as JSON: binary values (``B``, ``BS``) base64 under ``"__b64__"``."""
    if isinstance(value, bytes | bytearray):
        return {"__b64__": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value: JsonValue) -> JsonValue:
    if isinstance(value, dict):
        if set(value) == {"__b64__"}:
            return base64.b64decode(value["__b64__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def restore_and_settle(directory: Path, resources: LocalResources, clients: StateClients) -> None:
    from a2a_serverless.config import Settings
    from a2a_serverless.execution.sweeper import sweep
    from a2a_serverless.wiring import build_runtime

    restored = restore_state(directory, resources, clients)
    if restored is None:
        _log.info("state in %s: nothing saved yet (it is saved when the stack stops)", directory)
        return
    # Runs cut off by the last stop still name their run: settle them as the sweeper would once
    # their leases lapsed on AWS, so no task stays WORKING.
    settings = Settings.from_env()
    if settings.execution_mode == "durable":
        # The sweep settles tasks in the table; it starts no executions (they died with the stop:
        # a task that waited for input then cannot be resumed, docs/local-stack.md).
        settings = dataclasses.replace(settings, execution_mode="queue")
    runtime = build_runtime(settings)
    swept = total = 0
    while swept := sweep(runtime, now=2**31 - 1):
        total += swept
    _log.info(
        "state from %s: %d items, %d queued messages, %d objects; %d run(s) cut off by the last stop failed",
        directory,
        restored["items"],
        restored["messages"],
        restored["objects"],
        total,
    )


def save_logged(directory: Path, resources: LocalResources, clients: StateClients) -> None:
    try:
        saved = save_state(directory, resources, clients)
    except Exception:
        _log.exception("could not save the state to %s; the previous save, if any, is kept", directory)
        return
    _log.info(
        "state saved to %s: %d items, %d queued messages, %d objects",
        directory,
        saved["items"],
        saved["messages"],
        saved["objects"],
    )
