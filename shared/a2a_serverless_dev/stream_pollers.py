"""Emulates Lambda's DynamoDB Streams event source mapping on moto's stream.

Per shard, in order: read records, keep those matching the mapping's filter criteria, invoke the
function with the event Lambda would build, and checkpoint. With ``ReportBatchItemFailures`` the
batch is retried from the first failed record; after ``MaximumRetryAttempts`` (or when records are
older than ``MaximumRecordAgeInSeconds``) the batch's details go to the on-failure destination
queue, as Lambda does, and the shard moves on. (Bisecting a failing batch is not emulated: with the
partial-failure response the failing record is already known.)
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, cast

from a2a_serverless.json_types import Json, JsonValue

from ._lambda import LambdaContext
from ._loggers import kit_logger
from ._template import StreamEventSource
from .pollers import Handler

if TYPE_CHECKING:
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient
    from mypy_boto3_dynamodbstreams.literals import ShardIteratorTypeType
    from mypy_boto3_sqs import SQSClient

__all__ = ["StreamPoller", "matches_filters"]

_log = kit_logger(__name__)


def matches_filters(record: Mapping[str, JsonValue], patterns: Sequence[Mapping[str, JsonValue]]) -> bool:
    """Lambda event filtering, for the subset of the pattern language templates here use: exact
    values in lists, ``{"prefix": ...}``, ``{"exists": true}`` (a key present with a primitive
    value), and nested objects. No pattern means every record."""
    return not patterns or any(_match(record, pattern) for pattern in patterns)


def _match(value: JsonValue, pattern: JsonValue) -> bool:
    if isinstance(pattern, Mapping):
        return isinstance(value, Mapping) and all(k in value and _match(value[k], p) for k, p in pattern.items())
    if isinstance(pattern, list):
        return any(_match_leaf(value, p) for p in pattern)
    return bool(value == pattern)


def _match_leaf(value: JsonValue, rule: JsonValue) -> bool:
    if isinstance(rule, Mapping) and "prefix" in rule:
        return isinstance(value, str) and value.startswith(str(rule["prefix"]))
    if isinstance(rule, Mapping) and rule.get("exists") is True:
        return not isinstance(value, (Mapping, list))
    return bool(value == rule)


@dataclass
class StreamPoller:
    streams: DynamoDBStreamsClient
    """A boto3 ``dynamodbstreams`` client."""
    sqs: SQSClient
    source: StreamEventSource
    stream_arn: str
    handler: Handler
    function_name: str
    on_failure_queue_url: str | None = None
    region: str = "us-east-1"
    idle_seconds: float = 0.25
    """Lambda polls each shard of a DynamoDB stream "at a base rate of 4 times per second". (Faster
    polling here made smaller batches, hence more dispatcher and delivery invocations, each with
    its reads: deliveries to one webhook, one at a time, then fell behind a streaming task.)"""
    quiet_seconds: float = 10.0
    """After this long without a record, the poller slows to ``quiet_idle_seconds`` (the first record
    after a quiet spell then waits up to that long): an idle local stack's CPU, where Lambda would
    keep polling at its base rate on its own machines."""
    quiet_idle_seconds: float = 1.0
    describe_every_seconds: float = 10.0
    """How often the shards are listed again (a table's stream rarely splits)."""
    _iterators: dict[str, str] = field(default_factory=dict)
    _shards: list[str] = field(default_factory=list)
    _described_at: float = 0.0

    def run(self, stop: threading.Event) -> None:
        last_record = time.monotonic()
        while not stop.is_set():
            started = time.monotonic()
            try:
                handled = self.poll_once()
                if handled:
                    last_record = started
                interval = self.next_poll_in(handled, quiet_for=started - last_record)
                if interval:
                    stop.wait(max(0.0, interval - (time.monotonic() - started)))
            except Exception:
                if stop.is_set():
                    break
                _log.exception("polling the stream for %s failed; retrying", self.function_name)
                stop.wait(1.0)

    def wake(self) -> None:
        """Nothing to wake: its waits end on ``stop``."""

    def next_poll_in(self, handled: int, *, quiet_for: float) -> float:
        """Seconds from this poll's start to the next: none after a full batch (there is more), else
        Lambda's base rate, or ``quiet_idle_seconds`` once no record came for ``quiet_seconds``."""
        if handled >= self.source.batch_size:
            return 0.0
        return self.quiet_idle_seconds if quiet_for > self.quiet_seconds else self.idle_seconds

    def poll_once(self) -> int:
        """One pass over the shards; returns how many records were handled."""
        handled = 0
        now = time.monotonic()
        if not self._shards or now - self._described_at > self.describe_every_seconds:
            description = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]
            self._shards = [shard["ShardId"] for shard in description["Shards"]]
            self._described_at = now
        for shard_id in self._shards:
            if shard_id not in self._iterators:
                self._iterators[shard_id] = self.streams.get_shard_iterator(
                    StreamArn=self.stream_arn,
                    ShardId=shard_id,
                    ShardIteratorType=cast("ShardIteratorTypeType", self.source.starting_position),
                )["ShardIterator"]
            result = self.streams.get_records(ShardIterator=self._iterators[shard_id], Limit=self.source.batch_size)
            self._iterators[shard_id] = result.get("NextShardIterator") or self._iterators[shard_id]
            records = [self._lambda_record(r) for r in result.get("Records", [])]
            records = [r for r in records if matches_filters(r, self.source.filters)]
            if records:
                self._deliver(shard_id, records)
                handled += len(records)
        return handled

    def _lambda_record(self, record: Mapping[str, JsonValue]) -> Json:
        dynamodb = dict(record["dynamodb"])
        created = dynamodb.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            dynamodb["ApproximateCreationDateTime"] = int(created.timestamp())
        event: Json = json.loads(
            json.dumps(
                {
                    "eventID": record.get("eventID") or uuid.uuid4().hex,
                    "eventName": record["eventName"],
                    "eventVersion": "1.1",
                    "eventSource": "aws:dynamodb",
                    "awsRegion": self.region,
                    "dynamodb": dynamodb,
                    "eventSourceARN": self.stream_arn,
                },
                default=str,
            )
        )
        return event

    def _deliver(self, shard_id: str, records: list[Json]) -> None:
        pending = records
        for attempt in range(self.source.maximum_retry_attempts + 1):
            failed_from = self._invoke(pending)
            if failed_from is None:
                return
            pending = pending[failed_from:]
            if self._too_old(pending[0]):
                break
            time.sleep(min(0.05 * 2**attempt, 1.0))
        self._send_to_on_failure_destination(shard_id, pending)

    def _invoke(self, records: list[Json]) -> int | None:
        """None if the batch succeeded, else the index of the first record to retry from."""
        context = LambdaContext.start(
            self.function_name,
            region=self.region,
            memory_mb=self.source.memory_mb,
            timeout_seconds=self.source.timeout_seconds,
        )
        try:
            response = json.loads(json.dumps(self.handler({"Records": records}, context)))
        except Exception:
            _log.exception("%s failed on a stream batch; it will be retried", self.function_name)
            return 0
        if not self.source.report_batch_item_failures:
            return None
        failures = (response or {}).get("batchItemFailures") or []
        sequence_numbers = [r["dynamodb"]["SequenceNumber"] for r in records]
        failed = [f.get("itemIdentifier") for f in failures]
        if not failed:
            return None
        positions = [sequence_numbers.index(f) for f in failed if f in sequence_numbers]
        if len(positions) != len(failed):
            _log.error("%s returned unknown batchItemFailures %s; retrying the batch", self.function_name, failed)
            return 0
        return min(positions)

    def _too_old(self, record: Mapping[str, JsonValue]) -> bool:
        created = record["dynamodb"].get("ApproximateCreationDateTime")
        limit = self.source.maximum_record_age_seconds
        return bool(limit and isinstance(created, (int, float)) and time.time() - created > limit)

    def _send_to_on_failure_destination(self, shard_id: str, records: list[Json]) -> None:
        _log.error("%s gave up on %d stream records of %s", self.function_name, len(records), shard_id)
        if not self.on_failure_queue_url:
            return
        body = {
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": f"arn:aws:lambda:{self.region}:123456789012:function:{self.function_name}",
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": self.source.maximum_retry_attempts + 1,
            },
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "version": "1.0",
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "DDBStreamBatchInfo": {
                "shardId": shard_id,
                "startSequenceNumber": records[0]["dynamodb"]["SequenceNumber"],
                "endSequenceNumber": records[-1]["dynamodb"]["SequenceNumber"],
                "batchSize": len(records),
                "streamArn": self.stream_arn,
            },
        }
        self.sqs.send_message(QueueUrl=self.on_failure_queue_url, MessageBody=json.dumps(body))
