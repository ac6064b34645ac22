"""A trace's context on an SQS message, as OpenTelemetry's messaging conventions carry it: the W3C
``traceparent`` in a message attribute of that name (docs/tracing.md, "How the context travels").

The SQS queues (the work queue, the push delivery queue and its dead letters) send an item's
``trace`` this way instead of in the body, and the Lambda entry points read it back from the
record's ``messageAttributes``. The body still carries it where there are no attributes: a durable
execution's input, and messages queued before the attribute was used (read as the fallback).
Nothing here imports OpenTelemetry: with tracing off the items carry no trace, and no attribute is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import MessageAttributeValueTypeDef

__all__ = ["TRACEPARENT", "message_attributes", "received_trace"]

TRACEPARENT = "traceparent"
"""The attribute's name: the W3C header's, as the propagator's carrier names it."""


def message_attributes(trace: str) -> dict[str, MessageAttributeValueTypeDef]:
    """The message attributes that carry ``trace`` (a ``traceparent``; none when it is empty)."""
    return {TRACEPARENT: {"DataType": "String", "StringValue": trace}} if trace else {}


def received_trace(record_attributes: Mapping[str, Any] | None, fallback: str) -> str:
    """The ``traceparent`` a Lambda SQS record carries in its ``messageAttributes`` (Lambda's
    camelCase shape), else ``fallback`` (what the body carried)."""
    attribute = (record_attributes or {}).get(TRACEPARENT)
    value = attribute.get("stringValue") if isinstance(attribute, Mapping) else None
    return value if isinstance(value, str) and value else fallback
