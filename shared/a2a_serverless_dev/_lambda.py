"""What Lambda hands a function fed by an SQS event source mapping, and how it reads the answer.

``sqs_event`` turns ``ReceiveMessage`` results into the event Lambda delivers; ``failed_message_ids``
reads a handler's response with Lambda's partial-batch-failure rules; ``LambdaContext`` is the
context object, with a real deadline.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a_serverless.json_types import Json, JsonValue

__all__ = ["ACCOUNT_ID", "InvalidBatchResponse", "LambdaContext", "failed_message_ids", "sqs_event"]

ACCOUNT_ID = "123456789012"
"""moto's default account, so ARNs match the ones moto reports."""


@dataclass(frozen=True)
class LambdaContext:
    """The attributes and method of the Lambda Python runtime's context object."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    deadline_monotonic: float
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = "local"
    identity: Any = None
    client_context: Any = None

    @classmethod
    def start(cls, function_name: str, *, region: str, memory_mb: int, timeout_seconds: float) -> LambdaContext:
        """A context for an invocation starting now, with the function's timeout."""
        return cls(
            function_name=function_name,
            invoked_function_arn=f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{function_name}",
            memory_limit_in_mb=memory_mb,
            deadline_monotonic=time.monotonic() + timeout_seconds,
            log_group_name=f"/aws/lambda/{function_name}",
        )

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline_monotonic - time.monotonic()) * 1000))


def sqs_event(messages: Sequence[Mapping[str, JsonValue]], *, queue_arn: str, region: str) -> Json:
    """The Lambda event for a batch of ``ReceiveMessage`` messages (received with all system and
    message attributes)."""
    return {"Records": [_record(m, queue_arn=queue_arn, region=region) for m in messages]}


def _record(message: Mapping[str, JsonValue], *, queue_arn: str, region: str) -> Json:
    record: Json = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": dict(message.get("Attributes", {})),
        "messageAttributes": {
            name: _message_attribute(value) for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }
    if "MD5OfMessageAttributes" in message:
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    return record


def _message_attribute(value: Mapping[str, JsonValue]) -> Json:
    # Lambda spells these in camelCase, always lists both list fields, and base64-encodes binaries.
    out: Json = {
        "stringListValues": list(value.get("StringListValues", [])),
        "binaryListValues": [_b64(v) for v in value.get("BinaryListValues", [])],
        "dataType": value["DataType"],
    }
    if "StringValue" in value:
        out["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        out["binaryValue"] = _b64(value["BinaryValue"])
    return out


def _b64(value: bytes | str) -> str:
    raw = value.encode() if isinstance(value, str) else value
    return base64.b64encode(raw).decode("ascii")


class InvalidBatchResponse(ValueError):
    """The response breaks the partial-batch-failure contract: Lambda fails the whole batch."""


def failed_message_ids(response: JsonValue, batch: Sequence[str]) -> set[str]:
    """The message ids a ``ReportBatchItemFailures`` response reports as failed.

    As Lambda does: no response, an empty response or an empty/null ``batchItemFailures`` is complete
    success; an item without an ``itemIdentifier``, or with an empty one or one not in the batch,
    raises ``InvalidBatchResponse`` (complete failure).
    """
    if response is None:
        return set()
    if not isinstance(response, dict):
        raise InvalidBatchResponse(f"response is a {type(response).__name__}, not an object")
    failures = response.get("batchItemFailures")
    if not failures:
        return set()
    if not isinstance(failures, list):
        raise InvalidBatchResponse("batchItemFailures is not a list")
    failed: set[str] = set()
    for item in failures:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not isinstance(identifier, str) or identifier not in batch:
            raise InvalidBatchResponse(f"invalid batch item failure {item!r}")
        failed.add(identifier)
    return failed
