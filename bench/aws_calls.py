"""Figure 5: AWS calls per A2A operation, and what a million tasks cost at on-demand prices.

On the local stack (moto server + uvicorn + the SQS / stream pollers running the template's
handlers, all in this process), every A2A 1.0 method is driven at least once per sample, and every
AWS call the code makes is seen by botocore hooks on the default session (the one the store, queue
and signer clients use; the pollers' own clients are not on it). Each call is attributed to the
component that made it: the API-side handler of method X (an ASGI wrapper sets a context variable
from a per-request label header, and Starlette's thread pool carries it into the store calls), or
the worker, push dispatcher, push delivery or dead-letter function (the template's handlers,
wrapped). For each call: service, operation, transaction items, batch entries, and the billed
units: DynamoDB read / write request units computed from the items themselves (sizes by
DynamoDB's rules from the stored attribute values, before and after each write, read from moto's
in-process backend; global secondary index writes included), SQS requests per 64 KB chunk.

Task shapes (one window each, run one after another, the stack quiet in between) give the cost per
million tasks: DynamoDB, SQS (our calls plus an estimate of the event source mappings' receive and
delete), Lambda (requests and GB-seconds from the template's MemorySize and the durations measured
here), API Gateway (REST API requests). Prices: the constants below.

Shapes (``--shapes``): ``hello_blocking`` and ``hello_push`` (the default; they come with the
samples of every method), and the streaming shapes of issue 13, ``stream_800_burst``,
``stream_800_paced``, ``stream_200_burst`` (any ``stream_<N>_<burst|paced>``): one task each, run
once after the samples, whose executor (``chunks N INTERVAL`` of ``bench/_stream_agents.py``)
appends N chunks of 40 bytes to one artifact, as fast as it can (burst) or 50 a second (paced);
sent with a returnImmediately SendMessage, the window ends when the task is terminal and the stack
quiet, or at ``--stream-timeout`` seconds. For them: the outcome, DynamoDB calls by operation,
bytes sent in DynamoDB write requests, RRU / WRU, the worker's wall time, the cost per million.

The large-part shape of issue 14, ``artifact_5mb`` (any ``artifact_<N>mb``), run once after the
samples, with the executor ``bigfile N SEED`` of ``bench/_large_agents.py``: one blocking SendMessage
whose executor makes one artifact holding one ``raw`` file part of N MiB of random bytes (stored in
the template's S3 bucket, ``A2A_BLOB_BUCKET``, as the local stack sets it) and completes, then one
GetTask, whose response carries the part as a presigned S3 URL when its base64 is over the
response's inline budget, then one download of the file by that URL (plain HTTP, as a client
would: counted as one S3 GET and its bytes as data transfer out to the internet) and a byte-exact
check. S3 calls are counted like the others (PutObject / GetObject with their body sizes; a
presigned URL, which makes no request, as a ``PresignGetObject`` of no request); the cost per
million adds S3 requests, S3 Standard storage for the task's retention (the template's
``TaskTtlDays``: the bucket's lifecycle expiry) and the data transfer out.

    .venv/bin/python bench/aws_calls.py [--quick] [--samples N] [--json PATH]
        [--shapes hello_blocking,hello_push,stream_800_burst,artifact_5mb,...|all] [--stream-timeout 300]

Prints the markdown tables (``render``); ``--json`` writes the raw result. Importing this module
starts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import json
import math
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
REGION = "us-east-1"

# ----------------------------------------------------------------------------------------- prices
# Published on-demand prices, us-east-1, no free tier, no volume tiers (the first tier applies far
# beyond a million tasks). Checked 2026-11-23 against the pricing pages below (stored copies via the
# search tool; DynamoDB's are the prices after the 1 November 2024 on-demand reduction).
PRICES_CHECKED = "2026-11-23"
DYNAMODB_WRU = 0.625 / 1e6
"""$ per write request unit (on-demand, Standard table class). https://aws.amazon.com/dynamodb/pricing/on-demand/"""
DYNAMODB_RRU = 0.125 / 1e6
"""$ per read request unit. https://aws.amazon.com/dynamodb/pricing/on-demand/"""
SQS_STANDARD_REQUEST = 0.40 / 1e6
"""$ per standard-queue request (per 64 KB chunk). https://aws.amazon.com/sqs/pricing/"""
SQS_FIFO_REQUEST = 0.50 / 1e6
"""$ per FIFO-queue request (per 64 KB chunk). https://aws.amazon.com/sqs/pricing/"""
LAMBDA_REQUEST = 0.20 / 1e6
"""$ per Lambda invocation. https://aws.amazon.com/lambda/pricing/"""
LAMBDA_GB_SECOND_ARM64 = 0.0000133334
"""$ per GB-second, Arm (first 7.5 billion GB-s a month). https://aws.amazon.com/lambda/pricing/"""
API_GATEWAY_REST_REQUEST = 3.50 / 1e6
"""$ per REST API request (first 333 million a month). https://aws.amazon.com/api-gateway/pricing/"""
S3_PUT_REQUEST = 0.005 / 1000
"""$ per PUT, COPY, POST or LIST request, S3 Standard. https://aws.amazon.com/s3/pricing/"""
S3_GET_REQUEST = 0.0004 / 1000
"""$ per GET, SELECT or other request, S3 Standard (DELETE is free). https://aws.amazon.com/s3/pricing/"""
S3_STANDARD_GB_MONTH = 0.023
"""$ per GB-month, S3 Standard, first 50 TB a month (GB = 2^30 bytes, prorated by the hour, no
minimum storage duration). https://aws.amazon.com/s3/pricing/"""
DATA_TRANSFER_OUT_GB = 0.09
"""$ per GB out of S3 to the internet, first 10 TB a month (the first 100 GB a month of the account
are free: not counted). https://aws.amazon.com/s3/pricing/ (Data transfer)"""
LAMBDA_DURABLE_OPERATION = 8.00 / 1e6
"""$ per durable operation (a checkpointed step, wait or callback) of a Lambda durable execution: the
rate of the durable-functions example on https://aws.amazon.com/lambda/pricing/ ("$8.00/M"), as
transcribed from that page on 2026-09-20 by a third party
(https://raw.githubusercontent.com/api-evangelist/aws-lambda/refs/heads/main/plans/aws-lambda-plans-pricing.yml,
found with the search tool; no stored copy of the AWS page itself was found). Durable executions are
also billed per GB of data written and per GB-month of data retained: those prices were not found,
so that part is not counted (the output says so and gives the bytes)."""
GB = 1024**3
"""The GB of S3's storage and transfer prices: 2^30 bytes."""
DAYS_PER_MONTH = 30
"""A month of storage, for prorating: the task TTL of 30 days is one month."""
PRICE_SOURCES = {
    "DynamoDB on-demand": "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    "SQS": "https://aws.amazon.com/sqs/pricing/",
    "Lambda": "https://aws.amazon.com/lambda/pricing/",
    "API Gateway": "https://aws.amazon.com/api-gateway/pricing/",
    "S3": "https://aws.amazon.com/s3/pricing/",
    "Lambda durable functions": "https://aws.amazon.com/lambda/pricing/ (durable functions example, via "
    "https://raw.githubusercontent.com/api-evangelist/aws-lambda/refs/heads/main/plans/aws-lambda-plans-pricing.yml)",
}
AUTHORIZER_ASSUMED_MS = 10.0
"""The REQUEST authorizer (AuthMode Open, the default; not cached) is not part of the local stack;
its duration is assumed, not measured."""

SQS_CHUNK = 64 * 1024
WRITE_UNIT = 1024
READ_UNIT = 4096

# ----------------------------------------------------------------------------------------- labels
HEADERS = {"A2A-Version": "1.0", "Authorization": "Bearer bench-key"}
LABEL_HEADER = "X-Bench-Op"
BACKGROUND = {
    "worker": "WorkerFunction",
    "push_dispatcher": "PushDispatcherFunction",
    "push_delivery": "PushDeliveryFunction",
    "dead_letter": "DeadLetterFunction",
    # Every minute, whatever runs: a window that lasts past a minute (the paced shapes) sees it.
    "sweeper": "SweeperFunction",
}
"""Handler module -> the template's function, for the wrapped event source handlers."""

_DURABLE_MODE: list[bool] = []
"""Set while a durable-mode stack runs (the two_turn_wait shape)."""
_COMPONENT: contextvars.ContextVar[str] = contextvars.ContextVar("bench_component", default="")
_LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("bench_label", default="")


# ------------------------------------------------------------------------------ DynamoDB item sizes
def attribute_value_size(value: dict[str, Any]) -> int:
    """Size of one typed attribute value by DynamoDB's rules (CapacityUnitCalculations): strings
    and binaries by their bytes, numbers ~1 byte per two significant digits + 1, null / bool 1,
    lists and maps 3 bytes + 1 per element + their elements (map keys count as names)."""
    kind, inner = next(iter(value.items()))
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        return _number_size(str(inner))
    if kind == "B":
        return len(inner) if isinstance(inner, (bytes, bytearray)) else len(str(inner)) * 3 // 4
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(s).encode()) for s in inner)
    if kind == "NS":
        return sum(_number_size(str(n)) for n in inner)
    if kind == "BS":
        return sum(len(b) if isinstance(b, (bytes, bytearray)) else len(str(b)) * 3 // 4 for b in inner)
    if kind == "L":
        return 3 + sum(1 + attribute_value_size(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + attribute_value_size(v) for k, v in inner.items())
    return len(json.dumps(inner))


def _number_size(text: str) -> int:
    digits = text.lstrip("+-").replace(".", "").split("e")[0].split("E")[0].strip("0") or "0"
    return math.ceil(len(digits) / 2) + 1


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes of an item (attribute names + values); 0 for no item."""
    if not item:
        return 0
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT))


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / READ_UNIT))
    return float(units) if consistent else units / 2


@dataclass(frozen=True)
class IndexSchema:
    """A global secondary index as the table defines it: its key attributes and its projection."""

    name: str
    keys: tuple[str, ...]
    projection: str = "ALL"
    """``ALL``, ``KEYS_ONLY`` or ``INCLUDE``."""
    non_key: tuple[str, ...] = ()
    """The ``NonKeyAttributes`` of an ``INCLUDE`` projection."""
    table_keys: tuple[str, ...] = ()

    def entry(self, item: dict[str, Any]) -> dict[str, Any]:
        """The index entry of an item (that has the index keys): the table's key attributes, the
        index's key attributes, then everything (ALL), the listed attributes (INCLUDE) or nothing
        more (KEYS_ONLY)."""
        if self.projection == "ALL":
            return item
        wanted = {*self.table_keys, *self.keys, *(self.non_key if self.projection == "INCLUDE" else ())}
        return {name: value for name, value in item.items() if name in wanted}


class MotoItems:
    """Reads items straight from moto's in-process backend (what the moto server serves), so a
    write's before and after images can be sized without an AWS call of our own."""

    def __init__(self) -> None:
        self._schemas: dict[str, tuple[tuple[str, ...], list[IndexSchema]]] = {}

    def _backend(self) -> Any:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        return dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION]

    def schema(self, table_name: str) -> tuple[tuple[str, ...], list[IndexSchema]]:
        """(key attribute names, the global secondary indexes with their projections) of a table."""
        if table_name not in self._schemas:
            table = self._backend().get_table(table_name)
            keys = tuple(k for k in (table.hash_key_attr, table.range_key_attr) if k)
            indexes = []
            for index in table.global_indexes:
                projection = dict(index.projection or {})
                indexes.append(
                    IndexSchema(
                        name=index.name,
                        keys=tuple(part["AttributeName"] for part in index.schema),
                        projection=str(projection.get("ProjectionType") or "ALL"),
                        non_key=tuple(projection.get("NonKeyAttributes") or ()),
                        table_keys=keys,
                    )
                )
            self._schemas[table_name] = (keys, indexes)
        return self._schemas[table_name]

    def get(self, table_name: str, key: dict[str, Any]) -> dict[str, Any] | None:
        for _ in range(5):  # another thread may be changing the item while it is copied
            try:
                item = self._backend().get_item(table_name, key)
                return dict(item.to_json()["Attributes"]) if item is not None else None
            except RuntimeError:
                time.sleep(0.001)
        return None

    def key_of(self, table_name: str, item: dict[str, Any]) -> dict[str, Any]:
        keys, _ = self.schema(table_name)
        return {k: item[k] for k in keys if k in item}


def gsi_writes(indexes: Sequence[IndexSchema], before: dict[str, Any] | None, after: dict[str, Any] | None) -> float:
    """Write units a table write costs in the global secondary indexes, by each index's projection:
    an item entering or leaving an index is one index write, a changed index key two (delete +
    put), a change of a projected attribute one, each by the index entry's size (table keys + index
    keys + the projected attributes; for ALL, the whole item). A change of attributes the index
    does not project costs nothing in it."""
    units = 0.0
    for index in indexes:
        was = before is not None and all(k in before for k in index.keys)
        now = after is not None and all(k in after for k in index.keys)
        if was and now:
            assert before is not None
            assert after is not None
            old, new = index.entry(before), index.entry(after)
            if any(before[k] != after[k] for k in index.keys):
                units += write_units(item_size(old)) + write_units(item_size(new))
            elif old != new:
                units += write_units(max(item_size(old), item_size(new)))
        elif now:
            assert after is not None
            units += write_units(item_size(index.entry(after)))
        elif was:
            assert before is not None
            units += write_units(item_size(index.entry(before)))
    return units


def batch_get_units(
    params: dict[str, Any], parsed: dict[str, Any], full_item: Callable[[str, dict[str, Any]], dict[str, Any] | None]
) -> tuple[float, int]:
    """(read units, items) of a BatchGetItem: each requested key that was processed is read as a
    GetItem of its own (an item's size rounded up to 4 KB separately, a missing item at least one
    unit), strongly consistent or not per table (``ConsistentRead`` in ``RequestItems``). A
    ``ProjectionExpression`` does not lower the bill: the whole item is sized (``full_item(table,
    key)``, read from moto), as it is when the response's items do not carry their keys."""
    units = 0.0
    items = 0
    unprocessed = parsed.get("UnprocessedKeys") or {}
    for table, request in (params.get("RequestItems") or {}).items():
        consistent = bool(request.get("ConsistentRead"))
        skipped = (unprocessed.get(table) or {}).get("Keys") or []
        keys = [key for key in request.get("Keys") or [] if key not in skipped]
        returned = (parsed.get("Responses") or {}).get(table) or []
        projected = "ProjectionExpression" in request or "AttributesToGet" in request
        for key in keys:
            item = None
            if not projected:
                item = next((i for i in returned if all(i.get(k) == v for k, v in key.items())), None)
            if item is None:
                item = full_item(table, key)
            units += read_units(item_size(item), consistent=consistent)
            items += 1
    return units, items


WRITE_OPS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
"""The DynamoDB operations whose request bodies count as bytes written."""
_QUERY_REDUCERS = ("Select", "FilterExpression", "ProjectionExpression", "AttributesToGet")
"""Query parameters that make the response differ from the items DynamoDB reads (and bills)."""


# ------------------------------------------------------------------------------------- recording
class Recorder:
    """botocore hooks on the default session: ``before-parameter-build`` notes the request and the
    before images of the items a write touches (DynamoDB) or the size of the body sent (S3), and
    records a presigned URL (``generate_presigned_url`` emits it too, then sends nothing: no
    ``after-call`` follows); ``request-created`` the size of the serialized request body
    (DynamoDB); ``after-call`` (also called for error responses) notes the call, its component and
    its billed units. :meth:`note_download` records a client's download by a presigned URL (plain
    HTTP, not botocore)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[dict[str, Any]] = []
        self.window = "startup"
        self.items = MotoItems()
        self.work_items: dict[str, dict[str, Any]] = {}
        """task id -> the work queue SendMessage parameters (for the dead-letter window)."""
        self._plain_client: Any = None

    def install(self, session: Any) -> None:
        session.events.register("before-parameter-build", self.before)
        session.events.register("request-created.dynamodb", self.request_created)
        session.events.register("after-call", self.after)

    # -- hooks
    def before(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        try:
            service = model.service_model.service_id.hyphenize()
            before: list[dict[str, Any] | None] = []
            if service == "dynamodb":
                before = [
                    self.items.get(table, key) for table, key, _ in _write_targets(self.items, model.name, params)
                ]
            stash: dict[str, Any] = {"params": params, "before": before}
            if service == "s3":
                stash["request_bytes"] = _body_size(params.get("Body"))
            context["a2a_bench"] = stash
            if context.get("is_presign_request"):
                self._record(service, f"Presign{model.name}", "", _presign_units(params))
        except Exception as exc:  # a measuring bug must not break the code under measurement
            context["a2a_bench"] = {"params": params, "before": [], "error": repr(exc)}

    def request_created(self, request: Any, **_: Any) -> None:
        """The serialized body's size (botocore's retries of a call send the same body again; it is
        counted once, with the call)."""
        stash = (getattr(request, "context", None) or {}).get("a2a_bench")
        if stash is not None:
            body = request.data if request.data is not None else b""
            stash["request_bytes"] = len(body.encode() if isinstance(body, str) else body)

    def after(self, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        stash = context.get("a2a_bench") or {"params": {}, "before": []}
        service = model.service_model.service_id.hyphenize()
        call: dict[str, Any] = {
            "component": _COMPONENT.get() or _thread_component(),
            "label": _LABEL.get(),
            "window": self.window,
            "service": service,
            "op": model.name,
            "error": (parsed.get("Error") or {}).get("Code", ""),
            "t": time.time(),
        }
        try:
            if service == "dynamodb":
                call["request_bytes"] = stash.get("request_bytes", 0)
                call.update(self._dynamodb_units(model.name, stash["params"], parsed, stash["before"], call["error"]))
            elif service == "sqs":
                call.update(_sqs_units(model.name, stash["params"]))
                self._note_work_item(model.name, stash["params"])
            elif service == "s3":
                call.update(_s3_units(model.name, stash["params"], parsed, stash.get("request_bytes", 0)))
        except Exception as exc:
            call["measure_error"] = repr(exc)
        if "error" in stash:
            call["measure_error"] = stash["error"]
        with self.lock:
            self.calls.append(call)

    def _record(self, service: str, op: str, error: str, units: dict[str, Any]) -> None:
        call = {
            "component": _COMPONENT.get() or _thread_component(),
            "label": _LABEL.get(),
            "window": self.window,
            "service": service,
            "op": op,
            "error": error,
            "t": time.time(),
            **units,
        }
        with self.lock:
            self.calls.append(call)

    def note_download(self, label: str, received: int, status: int) -> None:
        """A client's GET of an object by a presigned URL (component ``client``): one S3 GET
        request, its bytes received from S3 and sent out of AWS to the internet."""
        token, tag = _COMPONENT.set("client"), _LABEL.set(label)
        try:
            units = {
                "s3_requests": 1,
                "s3_tier": "get",
                "s3_bytes_received": received,
                "data_transfer_out_bytes": received,
                "via": "presigned URL",
            }
            self._record("s3", "GetObject", "" if status == 200 else f"HTTP {status}", units)
        finally:
            _LABEL.reset(tag)
            _COMPONENT.reset(token)

    # -- DynamoDB units
    def _dynamodb_units(
        self,
        op: str,
        params: dict[str, Any],
        parsed: dict[str, Any],
        before: list[dict[str, Any] | None],
        error: str,
    ) -> dict[str, Any]:
        if op == "GetItem":
            consistent = bool(params.get("ConsistentRead"))
            item = parsed.get("Item")
            if "ProjectionExpression" in params or "AttributesToGet" in params:
                item = self.items.get(params["TableName"], params["Key"])  # billed on the whole item
            return {"rru": read_units(item_size(item), consistent=consistent)}
        if op == "BatchGetItem":
            rru, n = batch_get_units(params, parsed, self.items.get)
            return {"rru": rru, "items": n}
        if op == "Query":
            consistent = bool(params.get("ConsistentRead")) and not params.get("IndexName")
            items = parsed.get("Items")
            if any(k in params for k in _QUERY_REDUCERS) or items is None:
                # What DynamoDB reads (up to Limit), not what it returns after a filter, a
                # projection or a count: the same query without them.
                items = self._items_read(params)
            return {"rru": read_units(sum(item_size(i) for i in items), consistent=consistent), "items": len(items)}
        if op == "TransactGetItems":
            sizes = [item_size(r.get("Item")) for r in parsed.get("Responses", [])]
            return {"rru": sum(2 * read_units(s, consistent=True) for s in sizes), "items": len(sizes)}
        targets = _write_targets(self.items, op, params)
        if not targets:
            return {}
        transactional = op == "TransactWriteItems"
        pairs = list(zip(targets, before, strict=False))
        if op == "BatchWriteItem":
            pairs = _unprocessed_removed(pairs, parsed)
        wru = gsi = 0.0
        sizes: list[dict[str, Any]] = []
        for (table, key, action), old in pairs:
            new = None if error else self.items.get(table, key)
            if action == "ConditionCheck" or error:
                size = item_size(old)
                new = old
            else:
                size = max(item_size(old), item_size(new))
            wru += (2 if transactional else 1) * write_units(size)
            indexes = self.items.schema(table)[1]
            if not error:
                gsi += gsi_writes(indexes, old, new)
            moved = [
                index.name
                for index in indexes
                if old
                and new
                and all(k in old and k in new for k in index.keys)
                and any(old[k] != new[k] for k in index.keys)
            ]
            sk = str(key.get("sk", {}).get("S", "?"))
            kind = sk.split("#", 1)[0]
            sizes.append(
                {"item": kind, "action": action, "before": item_size(old), "after": item_size(new), "moved": moved}
            )
        out: dict[str, Any] = {"wru": wru, "wru_gsi": gsi, "sizes": sizes}
        if transactional or op == "BatchWriteItem":
            out["items"] = len(pairs)
        return out

    def _items_read(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """The items a COUNT, filtered or projected Query reads: the same query without them (its
        Limit and start key kept), on a client of its own session (not counted). On an index, the
        index entries are read (as the index projects them)."""
        if self._plain_client is None:
            import boto3

            self._plain_client = boto3.session.Session(region_name=REGION).client(
                "dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL"]
            )
        query = {k: v for k, v in params.items() if k not in _QUERY_REDUCERS}
        used = set(re.findall(r"[#:][A-Za-z0-9_]+", str(query.get("KeyConditionExpression", ""))))
        for field in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
            kept = {k: v for k, v in query.get(field, {}).items() if k in used}
            if kept:
                query[field] = kept
            else:
                query.pop(field, None)
        items: list[dict[str, Any]] = self._plain_client.query(**query).get("Items", [])
        return items

    def _note_work_item(self, op: str, params: dict[str, Any]) -> None:
        if op == "SendMessage" and "MessageGroupId" in params and "WorkQueue" in str(params.get("QueueUrl")):
            with self.lock:
                self.work_items[str(params["MessageGroupId"])] = dict(params)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.calls)


def _write_targets(items: MotoItems, op: str, params: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """(table, key, action) of each item a write call touches."""
    if op == "PutItem":
        return [(params["TableName"], items.key_of(params["TableName"], params["Item"]), "Put")]
    if op in ("UpdateItem", "DeleteItem"):
        return [(params["TableName"], params["Key"], op[:-4])]
    if op == "BatchWriteItem":
        out = []
        for table, requests in (params.get("RequestItems") or {}).items():
            for request in requests:
                if "PutRequest" in request:
                    out.append((table, items.key_of(table, request["PutRequest"]["Item"]), "Put"))
                elif "DeleteRequest" in request:
                    out.append((table, request["DeleteRequest"]["Key"], "Delete"))
        return out
    if op == "TransactWriteItems":
        out = []
        for entry in params["TransactItems"]:
            action, body = next(iter(entry.items()))
            key = body["Key"] if "Key" in body else items.key_of(body["TableName"], body["Item"])
            out.append((body["TableName"], key, action))
        return out
    return []


def _unprocessed_removed(pairs: list[Any], parsed: dict[str, Any]) -> list[Any]:
    """A BatchWriteItem's ((table, key, action), before) pairs less the items DynamoDB handed back
    unprocessed (not written, not billed)."""
    left = []
    for table, requests in (parsed.get("UnprocessedItems") or {}).items():
        for request in requests:
            if "PutRequest" in request:
                left.append((table, request["PutRequest"]["Item"]))
            elif "DeleteRequest" in request:
                left.append((table, request["DeleteRequest"]["Key"]))

    def unprocessed(table: str, key: dict[str, Any]) -> bool:
        return any(table == t and all(item.get(k) == v for k, v in key.items()) for t, item in left)

    return [pair for pair in pairs if not unprocessed(pair[0][0], pair[0][1])]


def _sqs_units(op: str, params: dict[str, Any]) -> dict[str, Any]:
    fifo = str(params.get("QueueUrl", "")).endswith(".fifo")
    queue = str(params.get("QueueUrl", "")).rsplit("/", 1)[-1]
    if op == "SendMessage":
        payload = len(str(params.get("MessageBody", "")).encode()) + _attributes_size(params)
        return {"queue": queue, "fifo": fifo, "sqs_requests": max(1, math.ceil(payload / SQS_CHUNK)), "entries": 1}
    if op == "SendMessageBatch":
        entries = params.get("Entries", [])
        payload = sum(len(str(e.get("MessageBody", "")).encode()) + _attributes_size(e) for e in entries)
        return {
            "queue": queue,
            "fifo": fifo,
            "sqs_requests": max(1, math.ceil(payload / SQS_CHUNK)),
            "entries": len(entries),
        }
    return {"queue": queue, "fifo": fifo, "sqs_requests": 1}


S3_PUT_TIER = frozenset(
    {
        "PutObject",
        "CopyObject",
        "PostObject",
        "ListObjects",
        "ListObjectsV2",
        "ListObjectVersions",
        "ListBuckets",
        "ListMultipartUploads",
        "ListParts",
        "CreateMultipartUpload",
        "UploadPart",
        "UploadPartCopy",
        "CompleteMultipartUpload",
        "CreateBucket",
    }
)
"""S3 operations billed as PUT, COPY, POST or LIST requests; DELETEs are free; all others GETs."""
S3_FREE = frozenset({"DeleteObject", "DeleteObjects", "AbortMultipartUpload", "DeleteBucket"})


def _s3_units(op: str, params: dict[str, Any], parsed: dict[str, Any], sent: int) -> dict[str, Any]:
    """One S3 request: its price tier (``put``, ``get`` or ``free``), the body bytes sent (a
    PutObject's object, an UploadPart's part) and received (a GetObject's ``ContentLength``), and
    the object written (bucket and key: an object put twice is stored once)."""
    tier = "put" if op in S3_PUT_TIER else "free" if op in S3_FREE else "get"
    out: dict[str, Any] = {"s3_requests": 1, "s3_tier": tier, "s3_bytes_sent": sent}
    if op == "GetObject" and not parsed.get("Error"):
        out["s3_bytes_received"] = int(parsed.get("ContentLength") or 0)
    if op == "PutObject" and not parsed.get("Error"):
        out["s3_object"] = f"{params.get('Bucket')}/{params.get('Key')}"
        out["s3_object_bytes"] = sent
    return out


def _presign_units(params: dict[str, Any]) -> dict[str, Any]:
    """A presigned URL: made locally (signed with the function's credentials), no request."""
    return {"s3_requests": 0, "s3_tier": "none", "presigned_url": 1, "key": str(params.get("Key", ""))}


def _body_size(body: Any) -> int:
    """Bytes of a request body given as bytes, text or a seekable file object."""
    if body is None:
        return 0
    if isinstance(body, (bytes, bytearray, memoryview)):
        return len(body)
    if isinstance(body, str):
        return len(body.encode())
    try:
        here = body.tell()
        body.seek(0, os.SEEK_END)
        end = int(body.tell())
        body.seek(here)
        return end - int(here)
    except (AttributeError, OSError, ValueError):
        return 0


def _attributes_size(params: dict[str, Any]) -> int:
    size = 0
    for name, value in (params.get("MessageAttributes") or {}).items():
        size += len(name.encode()) + len(str(value.get("DataType", "")).encode())
        size += len(str(value.get("StringValue", value.get("BinaryValue", ""))).encode())
    return size


def _thread_component() -> str:
    name = threading.current_thread().name
    if name.startswith("AnyIO worker thread"):
        return "api"
    # Durable mode: the SDK runs the durable worker's invocations in its own threads (no context
    # variables carried), and the run they make, its executor's, in asyncio's
    if _DURABLE_MODE and name.startswith(("dex-handler", "asyncio_")):
        return "DurableWorkerFunction"
    return f"thread:{name}"


# ------------------------------------------------------------------------------- invocations
class Activity:
    """Lambda invocations (wrapped handlers) and API requests (ASGI wrapper): counts, durations,
    and whether anything is still running, so a window can wait for the stack to be quiet."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.in_flight = 0
        self.last_change = time.monotonic()
        self.invocations: list[dict[str, Any]] = []
        self.window = "startup"

    @contextlib.contextmanager
    def running(self, kind: str, name: str, label: str = "") -> Iterator[None]:
        with self.cond:
            self.in_flight += 1
            self.last_change = time.monotonic()
            window = self.window
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            with self.cond:
                self.in_flight -= 1
                self.last_change = time.monotonic()
                self.invocations.append({"kind": kind, "name": name, "label": label, "window": window, "ms": elapsed})
                self.cond.notify_all()

    def quiet(self, seconds: float, timeout: float = 30.0) -> bool:
        """Wait until nothing has run for ``seconds`` (stream polls come every 50 ms)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                idle = time.monotonic() - self.last_change
                if self.in_flight == 0 and idle >= seconds:
                    return True
                if time.monotonic() > deadline:
                    return False
                self.cond.wait(max(0.05, seconds - idle) if self.in_flight == 0 else 0.1)


class LabelMiddleware:
    """ASGI wrapper: the request's ``X-Bench-Op`` label and component ``api`` go into context
    variables, which Starlette's thread pool (anyio) and asyncio tasks carry to the store calls."""

    def __init__(self, app: Any, activity: Activity) -> None:
        self.app = app
        self.activity = activity

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        label = dict(scope.get("headers") or []).get(LABEL_HEADER.lower().encode(), b"").decode() or "unlabeled"
        component, tag = _COMPONENT.set("api"), _LABEL.set(label)
        try:
            with self.activity.running("api", label, label):
                await self.app(scope, receive, send)
        finally:
            _LABEL.reset(tag)
            _COMPONENT.reset(component)


def wrap_handlers(activity: Activity) -> Callable[[str], Callable[..., Any]]:
    """The stack's ``resolve_handler``: the template's handler, run with its component set."""
    from a2a_serverless_dev._imports import import_object

    def resolve(path: str) -> Callable[..., Any]:
        handler = import_object(path)
        module = path.split(":")[0].rsplit(".", 1)[-1]
        function = BACKGROUND.get(module, module)

        def wrapped(event: dict[str, Any], context: Any) -> Any:
            token = _COMPONENT.set(function)
            try:
                with activity.running("lambda", function):
                    return handler(event, context)
            finally:
                _COMPONENT.reset(token)

        return wrapped

    return resolve


# ----------------------------------------------------------------------------------- the driver
class Driver:
    def __init__(self, base: str, recorder: Recorder, activity: Activity, receiver: Any) -> None:
        import httpx

        self.http = httpx.Client(base_url=base, timeout=60, headers=HEADERS)
        self.recorder = recorder
        self.activity = activity
        self.receiver = receiver
        self._sqs: Any = None
        self.quiet_seconds = 0.5
        """No invocation or request for this long: the window's work is done (stream polls: 50 ms)."""
        self.seconds: defaultdict[str, list[float]] = defaultdict(list)

    def close(self) -> None:
        self.http.close()

    @contextlib.contextmanager
    def window(self, name: str) -> Iterator[None]:
        if not self.activity.quiet(self.quiet_seconds):
            raise RuntimeError(f"the stack did not go quiet before window {name}")
        self.recorder.window = self.activity.window = name
        started = time.monotonic()
        try:
            yield
        finally:
            quiet = self.activity.quiet(self.quiet_seconds)
            self.seconds[name].append(round(time.monotonic() - started, 2))
            self.recorder.window = self.activity.window = "between"
            if not quiet:
                raise RuntimeError(f"the stack did not go quiet after window {name}")

    def call(self, label: str, verb: str, path: str, **kwargs: Any) -> Any:
        response = self.http.request(verb, path, headers={LABEL_HEADER: label}, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None

    def stream(self, label: str, path: str, body: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        events = []
        kwargs: dict[str, Any] = {"headers": {LABEL_HEADER: label, "Accept": "text/event-stream"}}
        if body is not None:
            kwargs["json"] = body
        with self.http.stream("POST", path, **kwargs) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
        return events

    def send(
        self, tenant: str, text: str, *, label: str, immediately: bool = False, hook: str | None = None
    ) -> dict[str, Any]:
        configuration: dict[str, Any] = {"returnImmediately": immediately}
        if hook:
            configuration["taskPushNotificationConfig"] = {"url": hook}
        body = {"message": _message(text), "configuration": configuration}
        task: dict[str, Any] = self.call(label, "POST", f"{tenant}/message:send", json=body)["task"]
        return task

    def wait_state(self, tenant: str, task_id: str, states: set[str], timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            task: dict[str, Any] = self.call("GetTask", "GET", f"{tenant}/tasks/{task_id}")
            if task["status"]["state"] in states:
                return task
            if time.monotonic() > deadline:
                raise RuntimeError(f"task {task_id} stayed {task['status']['state']}, wanted {states}")
            time.sleep(0.05)

    def download(self, url: str, label: str) -> bytes:
        """GET ``url`` (a presigned S3 URL) as a client would: a plain HTTP client, none of the
        agent's headers; recorded as one S3 GET by the client."""
        import httpx

        with httpx.Client(timeout=120) as plain:
            response = plain.get(url)
        self.recorder.note_download(label, len(response.content), response.status_code)
        response.raise_for_status()
        return response.content

    def dead_letter(self, task_id: str) -> None:
        """Put a copy of the task's work item on the work dead-letter queue, as SQS does after
        maxReceiveCount failed receives (with a client of its own session: not counted)."""
        import boto3

        if self._sqs is None:
            self._sqs = boto3.session.Session(region_name=REGION).client(
                "sqs", endpoint_url=os.environ["AWS_ENDPOINT_URL"]
            )
        urls = self._sqs.list_queues().get("QueueUrls", [])
        url = next(u for u in urls if "WorkDeadLetterQueue" in u)
        item = self.recorder.work_items[task_id]
        self._sqs.send_message(
            QueueUrl=url,
            MessageBody=item["MessageBody"],
            MessageGroupId=item["MessageGroupId"],
            MessageDeduplicationId=uuid.uuid4().hex,
        )


def _message(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"}
COMPLETED = "TASK_STATE_COMPLETED"


def run_sample(d: Driver, n: int, notes: dict[str, Any], *, light: bool = False) -> None:
    """One pass over every method and task shape, in windows; tenant ``s<n>`` keeps ListTasks'
    scope to this sample's tasks. ``light``: the two task shapes only (a quick warm-up)."""
    tenant = f"/s{n}"
    with d.window("hello_blocking"):
        hello = d.send(tenant, "hello", label="SendMessage (blocking)")
        assert hello["status"]["state"] == COMPLETED, hello
        d.call("GetTask", "GET", f"{tenant}/tasks/{hello['id']}")
    with d.window("hello_push"):
        path = f"/push{n}"
        pushed = d.send(tenant, "hello", label="SendMessage (blocking, inline push config)", hook=d.receiver.url + path)
        if not d.receiver.wait_completed({path}, timeout=30):
            raise RuntimeError("no COMPLETED push notification")
        d.call("GetTask", "GET", f"{tenant}/tasks/{pushed['id']}")
    notes.setdefault("notifications", []).append(len(d.receiver.for_path(path)))
    if light:
        return
    with d.window("hello_return_immediately"):
        task = d.send(tenant, "hello", label="SendMessage (returnImmediately)", immediately=True)
        d.wait_state(tenant, task["id"], TERMINAL)
    with d.window("hello_streaming"):
        events = d.stream("SendStreamingMessage", f"{tenant}/message:stream", {"message": _message("hello")})
        notes.setdefault("stream_events", []).append(len(events))
    with d.window("list_tasks"):
        d.call("ListTasks", "GET", f"{tenant}/tasks")
        d.call("ListTasks (status filter)", "GET", f"{tenant}/tasks", params={"status": "TASK_STATE_COMPLETED"})
    with d.window("push_config_methods"):
        base = f"{tenant}/tasks/{hello['id']}/pushNotificationConfigs"
        created = d.call("CreateTaskPushNotificationConfig", "POST", base, json={"url": d.receiver.url + f"/cfg{n}"})
        d.call("GetTaskPushNotificationConfig", "GET", f"{base}/{created['id']}")
        d.call("ListTaskPushNotificationConfigs", "GET", base)
        d.call("DeleteTaskPushNotificationConfig", "DELETE", f"{base}/{created['id']}")
    with d.window("cancel"):
        task = d.send(tenant, "sleep 30", label="SendMessage (returnImmediately)", immediately=True)
        d.wait_state(tenant, task["id"], {"TASK_STATE_WORKING"})
        d.call("CancelTask", "POST", f"{tenant}/tasks/{task['id']}:cancel")
        d.wait_state(tenant, task["id"], {"TASK_STATE_CANCELED"})
    with d.window("subscribe"):
        task = d.send(tenant, "sleep 1", label="SendMessage (returnImmediately)", immediately=True)
        started = time.monotonic()
        d.stream("SubscribeToTask", f"{tenant}/tasks/{task['id']}:subscribe")
        notes.setdefault("subscribe_seconds", []).append(round(time.monotonic() - started, 2))
    with d.window("extended_card"):
        d.call("GetExtendedAgentCard", "GET", f"{tenant}/extendedAgentCard")
    with d.window("dead_letter"):
        task = d.send(tenant, "sleep 3", label="SendMessage (returnImmediately)", immediately=True)
        d.wait_state(tenant, task["id"], {"TASK_STATE_WORKING"})
        d.dead_letter(task["id"])
        failed = d.wait_state(tenant, task["id"], TERMINAL)
        notes.setdefault("dead_letter_states", []).append(failed["status"]["state"])


# -------------------------------------------------------------------------------- stream shapes
HELLO_SHAPES = ("hello_blocking", "hello_push")
STREAM_SHAPES = ("stream_800_burst", "stream_800_paced", "stream_200_burst")
"""The streaming shapes of issue 13; any ``stream_<N>_<burst|paced>`` is accepted too."""
_STREAM_SHAPE = re.compile(r"^stream_(\d+)_(burst|paced)$")
PACED_INTERVAL = 0.02
"""Seconds between two chunks of a ``paced`` shape (50 chunks per second)."""
STREAM_EXECUTOR = "bench._stream_agents:DemoWithChunksExecutor"
"""The demo agent plus ``chunks N INTERVAL`` (used only when a stream shape is selected)."""
STREAM_SEND_LABEL = "SendMessage (returnImmediately, chunks)"
WAIT_LABEL = "GetTask (bench wait, not counted)"
"""The driver's own polls for a stream task's end: dropped from the calls and requests analysed."""
WAIT_POLL_SECONDS = 0.5


def stream_shape(name: str) -> tuple[int, float] | None:
    """``stream_<N>_<burst|paced>`` -> (N chunks, seconds between chunks); anything else None."""
    match = _STREAM_SHAPE.match(name)
    if match is None:
        return None
    return int(match.group(1)), (PACED_INTERVAL if match.group(2) == "paced" else 0.0)


def shape_description(name: str) -> str:
    if name in SHAPES:
        return SHAPES[name]
    size = artifact_shape(name)
    if size is not None:
        return (
            f"one blocking SendMessage to an executor that makes one artifact holding one raw file part of "
            f"{size / MIB:g} MiB of random bytes (stored in S3) and completes, then one GetTask (the part by "
            "presigned URL when its base64 is over the response's inline budget), then the client's download by "
            "that URL; run once"
        )
    spec = stream_shape(name)
    assert spec is not None, name
    count, interval = spec
    pace = f"{1 / interval:g} chunks per second (a {interval:g} s sleep between chunks)" if interval else "burst"
    return (
        f"one SendMessage (returnImmediately) to an executor that streams {count} chunks of 40 bytes of text into "
        f"one artifact (append), {pace}, between a WORKING and a COMPLETED status update; the window ends when "
        "the task is terminal and the stack quiet (the driver's own GetTask polls are not counted); run once"
    )


# ----------------------------------------------------------------------------- large-part shapes
ARTIFACT_SHAPES = ("artifact_5mb",)
"""The large-part shape of issue 14; any ``artifact_<N>mb`` is accepted too."""
_ARTIFACT_SHAPE = re.compile(r"^artifact_(\d+)mb$")
MIB = 1024 * 1024
FILE_EXECUTOR = "bench._large_agents:DemoWithFilesExecutor"
"""The demo agent plus ``chunks N INTERVAL`` and ``bigfile N SEED`` (used when an artifact shape is
selected)."""
FILE_SEED = 14


def artifact_shape(name: str) -> int | None:
    """``artifact_<N>mb`` -> N MiB in bytes; anything else None."""
    match = _ARTIFACT_SHAPE.match(name)
    return int(match.group(1)) * MIB if match and int(match.group(1)) > 0 else None


def _file_part(task: dict[str, Any]) -> dict[str, Any]:
    """The file part of a ``bigfile`` task's artifact (empty if there is none)."""
    from bench._large_agents import FILE_ARTIFACT_ID

    artifact = next((a for a in task.get("artifacts") or [] if a.get("artifactId") == FILE_ARTIFACT_ID), None)
    parts = (artifact or {}).get("parts") or [{}]
    return dict(parts[0])


def part_form(part: dict[str, Any]) -> str:
    """How a response carries a file part: ``url``, ``raw`` (inline base64) or ``missing``."""
    return "url" if part.get("url") else "raw" if "raw" in part else "missing"


def run_artifact_shape(d: Driver, name: str, tenant: str) -> dict[str, Any]:
    """One task of an artifact shape in a window of its own: blocking SendMessage, GetTask, the
    client's download by the URL (or the inline bytes), checked against what the executor made."""
    sys.path.insert(0, str(ROOT))
    from bench._large_agents import file_bytes, file_name, file_request

    size = artifact_shape(name)
    assert size is not None, name
    info: dict[str, Any] = {"file_bytes": size}
    with d.window(name):
        sent = d.send(tenant, file_request(size, FILE_SEED), label=f"SendMessage (blocking, {name})")
        info["task_id"] = sent["id"]
        info["send_state"] = sent["status"]["state"]
        info["send_part"] = part_form(_file_part(sent))
        got: dict[str, Any] = d.call(f"GetTask ({name})", "GET", f"{tenant}/tasks/{sent['id']}")
        info["final_state"] = got["status"]["state"]
        part = _file_part(got)
        info["get_task_part"] = part_form(part)
        info["get_task_part_fields"] = sorted(part)
        info["filename"] = part.get("filename", "")
        info["media_type"] = part.get("mediaType", "")
        if part.get("url"):
            info["url_scheme"] = str(part["url"]).split(":", 1)[0]
            data = d.download(str(part["url"]), f"download ({name})")
        else:
            import base64

            data = base64.b64decode(part.get("raw") or "")
        info["downloads"] = 1 if part.get("url") else 0
        info["bytes_received"] = len(data)
        info["bytes_exact"] = data == file_bytes(size, FILE_SEED)
        info["filename_as_sent"] = info["filename"] == file_name(size)
    return info


def run_stream_shape(d: Driver, name: str, tenant: str, cap: float) -> dict[str, Any]:
    """One task of a stream shape in a window of its own; never longer than ``cap`` seconds (then
    what happened so far is reported)."""
    spec = stream_shape(name)
    assert spec is not None, name
    count, interval = spec
    if not d.activity.quiet(d.quiet_seconds):
        raise RuntimeError(f"the stack did not go quiet before window {name}")
    d.recorder.window = d.activity.window = name
    started = time.monotonic()
    deadline = started + cap
    info: dict[str, Any] = {"chunks_sent_by_executor": count, "interval_seconds": interval, "cap_seconds": cap}
    try:
        task = d.send(tenant, f"chunks {count} {interval:g}", label=STREAM_SEND_LABEL, immediately=True)
        info["task_id"] = task["id"]
        state = task["status"]["state"]
        while state not in TERMINAL and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_SECONDS)
            state = d.call(WAIT_LABEL, "GET", f"{tenant}/tasks/{task['id']}")["status"]["state"]
        info["seconds_to_terminal"] = round(time.monotonic() - started, 2) if state in TERMINAL else None
        info["timed_out"] = state not in TERMINAL
        info["quiet_after"] = d.activity.quiet(d.quiet_seconds, timeout=max(30.0, deadline - time.monotonic()))
    finally:
        d.seconds[name].append(round(time.monotonic() - started, 2))
        d.recorder.window = d.activity.window = "between"
    if "task_id" in info:
        final = d.call(WAIT_LABEL, "GET", f"{tenant}/tasks/{info['task_id']}")
        info.update(stream_task_outcome(final))
    return info


def stream_task_outcome(task: dict[str, Any]) -> dict[str, Any]:
    """State, status message and what reached the task's answer artifact (chunks, in order?)."""
    sys.path.insert(0, str(ROOT))
    from bench._stream_agents import ARTIFACT_ID, chunk_text

    status = task.get("status") or {}
    message = " ".join(p.get("text", "") for p in (status.get("message") or {}).get("parts", []))
    artifact = next((a for a in task.get("artifacts") or [] if a.get("artifactId") == ARTIFACT_ID), None)
    texts = [p.get("text", "") for p in (artifact or {}).get("parts", [])]
    return {
        "final_state": status.get("state", ""),
        "final_status_message": message,
        "chunks_stored": len(texts),
        "chunks_in_order": texts == [chunk_text(i) for i in range(len(texts))],
        "artifact_text_bytes": sum(len(t.encode()) for t in texts),
    }


def measure(
    base: str,
    recorder: Recorder,
    activity: Activity,
    samples: int,
    quick: bool,
    shapes: Sequence[str] = HELLO_SHAPES,
    stream_cap: float = 300.0,
) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH))
    from push import Receiver  # the webhook receiver of bench/push.py

    notes: dict[str, Any] = {}
    streams: dict[str, Any] = {}
    artifacts: dict[str, Any] = {}
    with Receiver() as receiver:
        driver = Driver(base, recorder, activity, receiver)
        try:
            run_sample(driver, 0, {}, light=quick)  # warm-up: first clients, the signing key set, imports
            first = len(recorder.snapshot())
            first_invocation = len(activity.invocations)
            if any(shape in HELLO_SHAPES for shape in shapes):
                for n in range(1, samples + 1):
                    run_sample(driver, n, notes)
            for shape in (s for s in shapes if stream_shape(s)):
                if streams and not all(info.get("quiet_after", True) for info in streams.values()):
                    streams[shape] = {"skipped": "the stack was not quiet after the previous stream shape"}
                    continue
                streams[shape] = run_stream_shape(driver, shape, f"/{shape}", stream_cap)
            for shape in (s for s in shapes if artifact_shape(s)):
                artifacts[shape] = run_artifact_shape(driver, shape, f"/{shape}")
            notes["window_seconds"] = {k: v[-samples:] for k, v in driver.seconds.items()}
            notes["blob_bucket"] = os.environ.get("A2A_BLOB_BUCKET", "")  # set by the stack from the template
        finally:
            driver.close()
    calls = [c for c in recorder.snapshot()[first:] if c["label"] != WAIT_LABEL]
    with activity.cond:
        invocations = [i for i in activity.invocations[first_invocation:] if i["label"] != WAIT_LABEL]
    warmup = recorder.snapshot()[:first]
    return {
        "calls": calls,
        "invocations": invocations,
        "notes": notes,
        "stream_shapes": streams,
        "artifact_shapes": artifacts,
        "window_samples": {shape: 1 for shape in [*streams, *artifacts]},
        "warmup_only": dict(
            Counter(f"{c['component']} {c['service']}.{c['op']}" for c in warmup if c["service"] == "ssm")
        ),
    }


# ------------------------------------------------------------------------------------- the stack
def bench_executor(shapes: Sequence[str]) -> str | None:
    """The executor the stack runs: the product's demo agent for the hello shapes; with a stream
    shape the demo plus ``chunks``; with an artifact shape the demo plus ``chunks`` and ``bigfile``."""
    if any(artifact_shape(s) for s in shapes):
        return FILE_EXECUTOR
    if any(stream_shape(s) for s in shapes):
        return STREAM_EXECUTOR
    return None


def run_stack(
    samples: int, quick: bool = False, shapes: Sequence[str] = HELLO_SHAPES, stream_cap: float = 300.0
) -> dict[str, Any]:
    """Start the local stack in this process (main thread), measure from another thread, stop."""
    sys.path.insert(0, str(ROOT))
    import boto3
    from _stack import measure_on_local_stack

    card = Path(tempfile.mkdtemp(prefix="a2a-bench-")) / "extended-card.json"
    card.write_text(json.dumps({"name": "Extended bench agent"}))
    os.environ.update(
        {
            "A2A_EXTENDED_CARD_FILE": str(card),
            "A2A_AUTH_MODE": "api-key",  # GetExtendedAgentCard answers authenticated callers only
            "A2A_API_KEYS": json.dumps({"bench-key": "bench"}),
        }
    )
    boto3.setup_default_session()
    recorder = Recorder()
    recorder.install(boto3.DEFAULT_SESSION)
    activity = Activity()

    def app_factory() -> Any:
        from a2a_serverless.transport.app import create_app

        return LabelMiddleware(create_app(), activity)

    with contextlib.redirect_stdout(sys.stderr):  # the functions' EMF lines and the ready line
        outcome = measure_on_local_stack(
            lambda base: measure(base, recorder, activity, samples, quick, shapes, stream_cap),
            executor=bench_executor(shapes),
            workers=2,
            app_factory=app_factory,
            resolve_handler=wrap_handlers(activity),
        )
    card.unlink(missing_ok=True)
    card.parent.rmdir()
    if "error" in outcome:
        raise RuntimeError(outcome["error"])
    return outcome


# ------------------------------------------------------------------------------------- analysis
def template_facts() -> dict[str, Any]:
    """Memory, architecture, event source batch sizes, queue types and the API type, from template.yaml."""
    from a2a_serverless_dev._template import sqs_event_sources
    from a2a_serverless_dev.resources import load_template

    template = load_template()
    resources = template["Resources"]
    globals_ = template.get("Globals", {}).get("Function", {})
    functions = {}
    for name, resource in resources.items():
        if resource["Type"] == "AWS::Serverless::Function":
            props = resource["Properties"]
            functions[name] = {
                "memory_mb": int(props.get("MemorySize", globals_.get("MemorySize", 128))),
                "architectures": props.get("Architectures", globals_.get("Architectures", ["x86_64"])),
            }
    queues = {
        name: {"fifo": bool(r["Properties"].get("FifoQueue"))}
        for name, r in resources.items()
        if r["Type"] == "AWS::SQS::Queue"
    }
    sources = {s.queue_id: {"function": s.function_id, "batch_size": s.batch_size} for s in sqs_event_sources(template)}
    apis = sorted(
        {r["Type"] for r in resources.values() if r["Type"] in ("AWS::Serverless::Api", "AWS::Serverless::HttpApi")}
    )
    auth_default = template.get("Parameters", {}).get("AuthMode", {}).get("Default", "")
    ttl_days = int(template.get("Parameters", {}).get("TaskTtlDays", {}).get("Default", DAYS_PER_MONTH))
    return {
        "functions": functions,
        "queues": queues,
        "sqs_event_sources": sources,
        "api_types": apis,
        "auth_mode": auth_default,
        "task_ttl_days": ttl_days,
        "buckets": sorted(name for name, r in resources.items() if r["Type"] == "AWS::S3::Bucket"),
    }


def method_function(label: str) -> str:
    from a2a_serverless.methods import METHODS_BY_NAME

    method = METHODS_BY_NAME[label.split(" ")[0]]
    if method.function == "gateway":
        return "GatewayFunction"
    return "".join(part.title() for part in method.function.split("_")) + "Function"


def _units(calls: list[dict[str, Any]]) -> dict[str, Any]:
    ops: Counter[str] = Counter()
    out: dict[str, Any] = {
        "rru": 0.0,
        "wru": 0.0,
        "wru_gsi": 0.0,
        "transact_items": 0,
        "sqs_fifo": 0,
        "sqs_std": 0,
        "sqs_entries": 0,
        "dynamodb_write_request_bytes": 0,
        "s3_put_requests": 0,
        "s3_get_requests": 0,
        "s3_free_requests": 0,
        "s3_presigned_urls": 0,
        "s3_bytes_sent": 0,
        "s3_bytes_received": 0,
        "s3_bytes_stored": 0,
        "data_transfer_out_bytes": 0,
    }
    stored: dict[str, int] = {}
    for c in calls:
        ops[f"{c['service']}.{c['op']}"] += 1
        if c["service"] == "dynamodb" and c["op"] in WRITE_OPS:
            out["dynamodb_write_request_bytes"] += c.get("request_bytes", 0)
        out["rru"] += c.get("rru", 0.0)
        out["wru"] += c.get("wru", 0.0)
        out["wru_gsi"] += c.get("wru_gsi", 0.0)
        if c["op"] == "TransactWriteItems":
            out["transact_items"] += c.get("items", 0)
        if c["service"] == "sqs":
            out["sqs_fifo" if c.get("fifo") else "sqs_std"] += c.get("sqs_requests", 1)
            out["sqs_entries"] += c.get("entries", 0)
        if c["service"] == "s3":
            tier = c.get("s3_tier", "get")
            if tier in ("put", "get", "free"):
                out[f"s3_{tier}_requests"] += c.get("s3_requests", 1)
            out["s3_presigned_urls"] += c.get("presigned_url", 0)
            out["s3_bytes_sent"] += c.get("s3_bytes_sent", 0)
            out["s3_bytes_received"] += c.get("s3_bytes_received", 0)
            out["data_transfer_out_bytes"] += c.get("data_transfer_out_bytes", 0)
            if "s3_object" in c:
                stored[c["s3_object"]] = c.get("s3_object_bytes", 0)
    out["s3_bytes_stored"] = sum(stored.values())
    out["s3_objects_stored"] = sorted(stored)
    out["calls"] = dict(sorted(ops.items()))
    out["dynamodb_calls"] = sum(n for k, n in ops.items() if k.startswith("dynamodb."))
    out["sqs_calls"] = sum(n for k, n in ops.items() if k.startswith("sqs."))
    out["s3_calls"] = sum(n for k, n in ops.items() if k.startswith("s3."))
    out["errors"] = dict(Counter(c["error"] for c in calls if c.get("error")))
    return out


def _scaled(units: dict[str, Any], n: float) -> dict[str, Any]:
    if n <= 0:
        return units
    out = {k: (round(v / n, 3) if isinstance(v, (int, float)) else v) for k, v in units.items()}
    out["calls"] = {k: round(v / n, 3) for k, v in units["calls"].items()}
    out["errors"] = {k: round(v / n, 3) for k, v in units["errors"].items()}
    return out


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


def analyse(
    raw: dict[str, Any], samples: int, facts: dict[str, Any], shapes: Sequence[str] = HELLO_SHAPES
) -> dict[str, Any]:
    calls: list[dict[str, Any]] = raw["calls"]
    window_samples: dict[str, int] = raw.get("window_samples", {})  # runs per window: stream shapes 1
    invocations: list[dict[str, Any]] = raw["invocations"]
    # ---- per method, API side, per request
    requests = [i for i in invocations if i["kind"] == "api"]
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i in requests:
        by_label[i["label"]].append(i)
    methods: dict[str, Any] = {}
    for label, reqs in sorted(by_label.items()):
        mine = [c for c in calls if c["component"] == "api" and c["label"] == label]
        entry = _scaled(_units(mine), len(reqs))
        entry.update(
            {
                "method": label.split(" ")[0],
                "function": method_function(label),
                "requests": len(reqs),
                "median_ms": _median([i["ms"] for i in reqs]),
            }
        )
        methods[label] = entry
    # ---- per window: every component, per sample
    windows: dict[str, Any] = {}
    stored_per_task: dict[str, float] = {}
    """Bytes of the S3 objects a window's calls wrote, per run (an object put twice is stored once)."""
    for window in sorted({c["window"] for c in calls} | {i["window"] for i in invocations}):
        if window in ("between", "startup"):
            continue
        components: dict[str, Any] = {}
        in_window = [c for c in calls if c["window"] == window]
        stored_per_task[window] = _units(in_window)["s3_bytes_stored"] / window_samples.get(window, samples)
        invs = [i for i in invocations if i["window"] == window]
        names = sorted({c["component"] if c["component"] != "api" else f"api:{c['label']}" for c in in_window})
        names += sorted({i["name"] for i in invs if i["kind"] == "lambda"} - set(names))
        for name in names:
            if name.startswith("api:"):
                mine = [c for c in in_window if c["component"] == "api" and c["label"] == name[4:]]
            else:
                mine = [c for c in in_window if c["component"] == name]
            runs_of_window = window_samples.get(window, samples)
            entry = _scaled(_units(mine), runs_of_window)
            runs = [i for i in invs if i["kind"] == "lambda" and i["name"] == name]
            entry["invocations"] = round(len(runs) / runs_of_window, 3)
            entry["median_ms"] = _median([i["ms"] for i in runs])
            components[name] = entry
        windows[window] = components
    # ---- per executor event and per notification
    notifications = raw["notes"].get("notifications", [])
    per_notification: dict[str, Any] = {}
    if notifications:
        n = sum(notifications)
        for name in ("PushDispatcherFunction", "PushDeliveryFunction"):
            mine = [c for c in calls if c["window"] == "hello_push" and c["component"] == name]
            per_notification[name] = _scaled(_units(mine), n)
        per_notification["notifications_per_task"] = round(n / len(notifications), 2)
    hello_worker = [c for c in calls if c["window"] == "hello_blocking" and c["component"] == "WorkerFunction"]
    per_event = _scaled(_units(hello_worker), 3 * samples)
    written: dict[str, list[int]] = defaultdict(list)
    moves: Counter[str] = Counter()
    for c in calls:
        if c["window"] in window_samples:
            continue  # the stream shapes have their own figures
        for size in c.get("sizes", []):
            written[size["item"]].append(max(size["before"], size["after"]))
            if size["item"] == "META":
                moves["head writes"] += 1
                moves["head writes moving an index key"] += bool(size["moved"])
    item_sizes = {
        kind: {"writes": len(v), "median_bytes": int(statistics.median(v)), "max_bytes": max(v)}
        for kind, v in sorted(written.items())
    }
    costs = {
        name: cost_of_shape(
            name, windows, requests, invocations, facts, window_samples.get(name, samples), stored_per_task[name]
        )
        for name in shapes
        if name in windows
    }
    return {
        "methods": methods,
        "windows": windows,
        "per_executor_event": per_event,
        "per_notification": per_notification,
        "shapes": costs,
        "stream_shapes": {
            name: stream_figures(name, info, calls, invocations, costs.get(name))
            for name, info in raw.get("stream_shapes", {}).items()
        },
        "artifact_shapes": {
            name: artifact_figures(name, info, calls, costs.get(name))
            for name, info in raw.get("artifact_shapes", {}).items()
        },
        "item_sizes_written": item_sizes,
        "head_index_key_moves": dict(moves),
        "notes": raw["notes"],
        "warmup_only_ssm_calls": raw.get("warmup_only", {}),
        "measure_errors": sorted({c["measure_error"] for c in calls if "measure_error" in c}),
    }


SHAPES = {
    "hello_blocking": (
        "one blocking SendMessage with the demo 'hello' (3 executor events: WORKING, one artifact, COMPLETED), "
        "then one GetTask; no push config"
    ),
    "hello_push": (
        "the same with one push config given inline in the SendMessage: every task event delivered to the "
        "webhook (notifications per task in the table)"
    ),
}


def stream_figures(
    name: str,
    info: dict[str, Any],
    calls: list[dict[str, Any]],
    invocations: list[dict[str, Any]],
    cost: dict[str, Any] | None,
) -> dict[str, Any]:
    """One stream shape's run: what happened to the task, every DynamoDB call of its window (all
    components) by operation, the bytes of the write requests, the units, the worker's time, the
    cost per million such tasks."""
    if "skipped" in info or cost is None:
        return dict(info)
    mine = [c for c in calls if c["window"] == name]
    dynamodb = [c for c in mine if c["service"] == "dynamodb"]
    units = _units(dynamodb)
    worker = [i for i in invocations if i["window"] == name and i["kind"] == "lambda" and i["name"] == "WorkerFunction"]
    heads = [max(s["before"], s["after"]) for c in dynamodb for s in c.get("sizes", []) if s["item"] == "META"]
    by_component: dict[str, dict[str, int]] = defaultdict(dict)
    for c in dynamodb:
        component = c["component"] if c["component"] != "api" else f"api:{c['label']}"
        by_component[component][c["op"]] = by_component[component].get(c["op"], 0) + 1
    return {
        **info,
        "description": shape_description(name),
        "dynamodb_calls": {k.split(".", 1)[1]: v for k, v in units["calls"].items()},
        "dynamodb_calls_by_component": {k: dict(sorted(v.items())) for k, v in sorted(by_component.items())},
        "dynamodb_errors": units["errors"],
        "dynamodb_write_request_bytes": units["dynamodb_write_request_bytes"],
        "rru": round(units["rru"], 3),
        "wru": round(units["wru"] + units["wru_gsi"], 3),
        "wru_of_which_gsi": round(units["wru_gsi"], 3),
        "transact_items": units["transact_items"],
        "head_max_bytes": max(heads, default=0),
        "worker_invocations": len(worker),
        "worker_ms": [round(i["ms"], 1) for i in worker],
        "worker_seconds_total": round(sum(i["ms"] for i in worker) / 1000, 2),
        "per_million_tasks_usd": cost["per_million_tasks_usd"],
        "total_per_million_tasks_usd": cost["total_per_million_tasks_usd"],
    }


def artifact_figures(
    name: str, info: dict[str, Any], calls: list[dict[str, Any]], cost: dict[str, Any] | None
) -> dict[str, Any]:
    """One artifact shape's run: what the client got, every S3 and DynamoDB call of its window (all
    components) by operation and component, bytes, units and the cost per million such tasks."""
    if cost is None:
        return dict(info)
    mine = [c for c in calls if c["window"] == name]
    s3 = _units([c for c in mine if c["service"] == "s3"])
    dynamodb = _units([c for c in mine if c["service"] == "dynamodb"])
    by_component: dict[str, dict[str, int]] = defaultdict(dict)
    for c in mine:
        component = c["component"] if c["component"] != "api" else f"api:{c['label']}"
        op = f"{c['service']}.{c['op']}"
        by_component[component][op] = by_component[component].get(op, 0) + 1
    return {
        **info,
        "description": shape_description(name),
        "s3_calls": {k.split(".", 1)[1]: v for k, v in s3["calls"].items()},
        "s3_put_requests": s3["s3_put_requests"],
        "s3_get_requests": s3["s3_get_requests"],
        "s3_presigned_urls": s3["s3_presigned_urls"],
        "s3_bytes_sent": s3["s3_bytes_sent"],
        "s3_bytes_received": s3["s3_bytes_received"],
        "s3_bytes_stored": s3["s3_bytes_stored"],
        "data_transfer_out_bytes": s3["data_transfer_out_bytes"],
        "s3_errors": s3["errors"],
        "dynamodb_calls": {k.split(".", 1)[1]: v for k, v in dynamodb["calls"].items()},
        "dynamodb_errors": dynamodb["errors"],
        "dynamodb_write_request_bytes": dynamodb["dynamodb_write_request_bytes"],
        "rru": round(dynamodb["rru"], 3),
        "wru": round(dynamodb["wru"] + dynamodb["wru_gsi"], 3),
        "wru_of_which_gsi": round(dynamodb["wru_gsi"], 3),
        "calls_by_component": {k: dict(sorted(v.items())) for k, v in sorted(by_component.items())},
        "units_per_task": cost["units_per_task"],
        "per_million_tasks_usd": cost["per_million_tasks_usd"],
        "total_per_million_tasks_usd": cost["total_per_million_tasks_usd"],
    }


def cost_of_shape(
    window: str,
    windows: dict[str, Any],
    requests: list[dict[str, Any]],
    invocations: list[dict[str, Any]],
    facts: dict[str, Any],
    samples: int,
    s3_stored_bytes: float = 0.0,
) -> dict[str, Any]:
    """Per task of the shape measured in ``window``: units by service, then dollars.
    ``s3_stored_bytes``: the bytes of the objects its calls wrote, per task (kept for the task's
    retention, ``TaskTtlDays``)."""
    components = windows[window]
    rru = sum(c["rru"] for c in components.values())
    wru = sum(c["wru"] + c["wru_gsi"] for c in components.values())
    wru_gsi = sum(c["wru_gsi"] for c in components.values())
    sqs_fifo = sum(c["sqs_fifo"] for c in components.values())
    sqs_std = sum(c["sqs_std"] for c in components.values())
    # The SQS event source mappings (not our code): one ReceiveMessage and one DeleteMessage(Batch)
    # per message on the queues with BatchSize 1 (every queue here), billed to SQS.
    messages = sum(c["sqs_entries"] for c in components.values())
    esm_requests = 2 * messages
    consumed = facts["sqs_event_sources"]
    esm_fifo = esm_requests if all(facts["queues"][q]["fifo"] for q in consumed) else 0
    # Lambda: API requests (the method's function + the authorizer) and the event source invocations
    api_reqs = [i for i in requests if i["window"] == window]
    lambda_requests = 0.0
    gb_seconds = 0.0
    functions = facts["functions"]
    authorizer = facts["auth_mode"] in ("Open", "Jwt")
    for i in api_reqs:
        memory = functions[method_function(i["label"])]["memory_mb"] / 1024
        lambda_requests += 1
        gb_seconds += memory * i["ms"] / 1000
        if authorizer:
            lambda_requests += 1
            gb_seconds += functions["AuthorizerFunction"]["memory_mb"] / 1024 * AUTHORIZER_ASSUMED_MS / 1000
    for i in invocations:
        if i["window"] == window and i["kind"] == "lambda":
            lambda_requests += 1
            gb_seconds += functions[i["name"]]["memory_mb"] / 1024 * i["ms"] / 1000
    lambda_requests /= samples
    gb_seconds /= samples
    api_requests = len(api_reqs) / samples
    s3_put = sum(c["s3_put_requests"] for c in components.values())
    s3_get = sum(c["s3_get_requests"] for c in components.values())
    out_bytes = sum(c["data_transfer_out_bytes"] for c in components.values())
    storage_months = facts.get("task_ttl_days", DAYS_PER_MONTH) / DAYS_PER_MONTH
    units = {
        "api_requests": round(api_requests, 3),
        "lambda_requests": round(lambda_requests, 3),
        "lambda_gb_seconds": round(gb_seconds, 5),
        "rru": round(rru, 3),
        "wru": round(wru, 3),
        "wru_of_which_gsi": round(wru_gsi, 3),
        "sqs_requests_ours_fifo": round(sqs_fifo, 3),
        "sqs_requests_ours_standard": round(sqs_std, 3),
        "sqs_requests_event_source_estimate": round(esm_requests, 3),
        "notifications": round(sum(c.get("invocations", 0) for n, c in components.items() if "Delivery" in n), 3),
        "s3_put_requests": round(s3_put, 3),
        "s3_get_requests": round(s3_get, 3),
        "s3_presigned_urls": round(sum(c["s3_presigned_urls"] for c in components.values()), 3),
        "s3_bytes_stored": round(s3_stored_bytes),
        "s3_storage_gb_months": round(s3_stored_bytes / GB * storage_months, 6),
        "data_transfer_out_bytes": round(out_bytes),
    }
    dollars = {
        "dynamodb": rru * DYNAMODB_RRU + wru * DYNAMODB_WRU,
        "sqs": (sqs_fifo + esm_fifo) * SQS_FIFO_REQUEST + (sqs_std + esm_requests - esm_fifo) * SQS_STANDARD_REQUEST,
        "lambda": lambda_requests * LAMBDA_REQUEST + gb_seconds * LAMBDA_GB_SECOND_ARM64,
        "api_gateway": api_requests * API_GATEWAY_REST_REQUEST,
        "s3_requests": s3_put * S3_PUT_REQUEST + s3_get * S3_GET_REQUEST,
        "s3_storage": s3_stored_bytes / GB * storage_months * S3_STANDARD_GB_MONTH,
        "data_transfer_out": out_bytes / GB * DATA_TRANSFER_OUT_GB,
    }
    per_million = {k: round(v * 1e6, 2) for k, v in dollars.items()}
    per_million["lambda_requests_only"] = round(lambda_requests * LAMBDA_REQUEST * 1e6, 2)
    per_million["lambda_duration_only"] = round(gb_seconds * LAMBDA_GB_SECOND_ARM64 * 1e6, 2)
    total = round(sum(per_million[k] for k in dollars), 2)
    return {
        "description": shape_description(window),
        "units_per_task": units,
        "per_million_tasks_usd": per_million,
        "total_per_million_tasks_usd": total,
    }


# ------------------------------------------------------------------- two turns and a wait (issue 19)
WAIT_SHAPES = ("two_turn_wait",)
WAIT_SECONDS_MODELLED = 3600
"""The wait between the two turns that the shape stands for (it is modelled, not waited for)."""
WAIT_WINDOW = "two_turn_wait"
SHAPES["two_turn_wait"] = (
    "a blocking SendMessage 'ask me' (the demo agent asks for a name: INPUT_REQUIRED), then, after a wait "
    "modelled as one hour, a blocking SendMessage with the answer on the task (COMPLETED)"
)


def run_two_turn_wait_stack(mode: str, samples: int) -> dict[str, Any]:
    """The local stack in ``mode`` (queue or durable) in this process; one warm-up task, then
    ``samples`` two-turn tasks in the measured window. In durable mode the API's app is the local
    stack's durable one (executions on the local runner, invocations of the durable worker metered)
    and each task's durable operations are read from the runner."""
    sys.path.insert(0, str(ROOT))
    import boto3
    from _stack import measure_on_local_stack

    os.environ.update({"A2A_AUTH_MODE": "api-key", "A2A_API_KEYS": json.dumps({"bench-key": "bench"})})
    os.environ["A2A_EXECUTION_MODE"] = mode
    os.environ.pop("A2A_DURABLE_FUNCTION", None)  # the stack names its local durable worker
    boto3.setup_default_session()
    recorder = Recorder()
    recorder.install(boto3.DEFAULT_SESSION)
    activity = Activity()
    workers: list[Any] = []

    def app_factory() -> Any:
        if mode == "durable":
            from a2a_serverless_dev.durable import durable_gateway_app, durable_limits
            from a2a_serverless_dev.resources import load_template

            app, worker = durable_gateway_app(
                limits=durable_limits(load_template()),
                function_name="DurableWorkerFunction",
                around_invocation=lambda: activity.running("lambda", "DurableWorkerFunction"),
            )
            workers.append(worker)
            return LabelMiddleware(app, activity)
        from a2a_serverless.transport.app import create_app

        return LabelMiddleware(create_app(), activity)

    def two_turns(d: Driver, tenant: str) -> dict[str, Any]:
        asked = d.send(tenant, "ask me", label="SendMessage (blocking, asks)")
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
        body = {"message": {**_message("Ann"), "taskId": asked["id"]}, "configuration": {"returnImmediately": False}}
        done = d.call("SendMessage (blocking, answer)", "POST", f"{tenant}/message:send", json=body)["task"]
        assert done["status"]["state"] == COMPLETED, done
        return asked

    def measure_mode(base: str) -> dict[str, Any]:
        driver = Driver(base, recorder, activity, None)
        operations: list[dict[str, Any]] = []
        try:
            with driver.window("warmup"):
                two_turns(driver, "/w")
            first, first_invocation = len(recorder.snapshot()), len(activity.invocations)
            for n in range(samples):
                with driver.window(WAIT_WINDOW):
                    task = two_turns(driver, f"/t{n}")
                if workers:
                    operations.append(_durable_operations(workers[0], task["id"]))
        finally:
            driver.close()
        with activity.cond:
            invocations = list(activity.invocations[first_invocation:])
        return {
            "calls": recorder.snapshot()[first:],
            "invocations": invocations,
            "notes": {"window_seconds": dict(driver.seconds)},
            "durable_operations": operations,
        }

    _DURABLE_MODE[:] = [True] if mode == "durable" else []
    with contextlib.redirect_stdout(sys.stderr):
        outcome = measure_on_local_stack(
            measure_mode, workers=2, app_factory=app_factory, resolve_handler=wrap_handlers(activity)
        )
    _DURABLE_MODE.clear()
    for worker in workers:
        worker.close()
    if "error" in outcome:
        raise RuntimeError(f"{mode} mode: {outcome['error']}")
    return outcome


def _durable_operations(worker: Any, task_id: str) -> dict[str, Any]:
    """A finished task's durable execution, from the local runner: its checkpointed operations (steps,
    callbacks, waits) by type, and the bytes of its input and of the results they recorded."""
    arn = worker.runs.execution_arn(task_id)
    result = worker.runs.runner.wait_for_result(arn, timeout=30)
    by_type = Counter(op.operation_type.value for op in result.operations)
    written = sum(len(str(getattr(op, "result", None) or "")) for op in result.operations)
    return {"operations": sum(by_type.values()), "by_type": dict(by_type), "result_bytes": written}


def two_turn_wait_result(samples: int) -> dict[str, Any]:
    facts = template_facts()
    modes: dict[str, Any] = {}
    for mode in ("queue", "durable"):
        from moto.moto_api._internal.models import moto_api_backend

        from a2a_serverless.lambda_.push import reset_push_services
        from a2a_serverless.wiring import reset_runtime

        moto_api_backend.reset()  # the in-process moto of the previous stack: a fresh account
        reset_runtime()  # and the functions' runtimes (this process's) built against it
        reset_push_services()
        raw = run_two_turn_wait_stack(mode, samples)
        raw["window_samples"] = {WAIT_WINDOW: samples}
        analysed = analyse(raw, samples, facts, WAIT_SHAPES)
        shape = analysed["shapes"][WAIT_WINDOW]
        ops = raw["durable_operations"]
        if ops:
            per_task = statistics.mean(o["operations"] for o in ops)
            shape["units_per_task"]["durable_operations"] = round(per_task, 3)
            shape["units_per_task"]["durable_operations_by_type"] = ops[-1]["by_type"]
            shape["units_per_task"]["durable_result_bytes"] = round(statistics.mean(o["result_bytes"] for o in ops))
            shape["per_million_tasks_usd"]["lambda_durable_operations"] = round(
                per_task * LAMBDA_DURABLE_OPERATION * 1e6, 2
            )
            shape["total_per_million_tasks_usd"] = round(
                shape["total_per_million_tasks_usd"] + shape["per_million_tasks_usd"]["lambda_durable_operations"], 2
            )
        modes[mode] = {
            "shape": shape,
            "windows": analysed["windows"].get(WAIT_WINDOW, {}),
            "measure_errors": analysed["measure_errors"],
            "window_seconds": raw["notes"]["window_seconds"].get(WAIT_WINDOW, []),
        }
    return {
        "meta": {
            "samples": samples,
            "date": time.strftime("%Y-%m-%d"),
            "wait_seconds_modelled": WAIT_SECONDS_MODELLED,
            "prices": {
                "Lambda durable operation": f"${LAMBDA_DURABLE_OPERATION * 1e6:.2f} per million "
                f"({PRICE_SOURCES['Lambda durable functions']})",
                "Lambda durable data written / retained": "price not found: not counted",
                "the rest": "as the other shapes (PRICE_SOURCES)",
            },
        },
        "modes": modes,
    }


def render_two_turn_wait(result: dict[str, Any]) -> str:
    queue, durable = result["modes"]["queue"]["shape"], result["modes"]["durable"]["shape"]
    hours = result["meta"]["wait_seconds_modelled"] / 3600
    lines = [
        f"### Two turns and a wait of {hours:g} h: queue and durable mode ({result['meta']['date']})",
        "",
        SHAPES["two_turn_wait"] + f"; {result['meta']['samples']} task(s) per mode after a warm-up task.",
        "",
        "| per task | queue | durable |",
        "|---|---:|---:|",
    ]
    rows = [
        ("API requests", "api_requests"),
        ("Lambda requests", "lambda_requests"),
        ("Lambda GB-seconds", "lambda_gb_seconds"),
        ("DynamoDB RRU", "rru"),
        ("DynamoDB WRU", "wru"),
        ("SQS requests (ours, FIFO)", "sqs_requests_ours_fifo"),
        ("SQS requests (event source, estimate)", "sqs_requests_event_source_estimate"),
        ("durable operations", "durable_operations"),
        ("durable results written, bytes", "durable_result_bytes"),
    ]
    for label, key in rows:
        lines.append(f"| {label} | {queue['units_per_task'].get(key, 0)} | {durable['units_per_task'].get(key, 0)} |")
    invocations = {
        mode: {
            name: c["invocations"]
            for name, c in result["modes"][mode]["windows"].items()
            if c.get("invocations") and not name.startswith("api:")
        }
        for mode in ("queue", "durable")
    }
    lines.append(f"| invocations by function | {invocations['queue']} | {invocations['durable']} |")
    lines += ["", "| $ per million tasks | queue | durable |", "|---|---:|---:|"]
    keys = [k for k in durable["per_million_tasks_usd"] if k not in ("lambda_requests_only", "lambda_duration_only")]
    for key in dict.fromkeys([*queue["per_million_tasks_usd"], *keys]):
        if key in ("lambda_requests_only", "lambda_duration_only"):
            continue
        q, d = queue["per_million_tasks_usd"].get(key, 0), durable["per_million_tasks_usd"].get(key, 0)
        lines.append(f"| {key} | {q:.2f} | {d:.2f} |")
    lines.append(
        f"| **total** | **{queue['total_per_million_tasks_usd']:.2f}** "
        f"| **{durable['total_per_million_tasks_usd']:.2f}** |"
    )
    lines += [
        "",
        f"The {hours:g} h wait is modelled, not waited for. Queue mode: nothing runs and nothing is called while "
        "the task waits (INPUT_REQUIRED is a row in the table; the answer is a new work item). Durable mode: the "
        "execution waits on a callback and holds no invocation (measured: none ran between the turns); the wait "
        "is one of the execution's durable operations, counted above. In both modes the task stays in the table "
        "for the wait (the same DynamoDB storage either way: not counted). Durable executions are also billed "
        "per GB of data written and per GB-month retained (DurableRetentionDays): "
        + result["meta"]["prices"]["Lambda durable data written / retained"]
        + " (the bytes written are in the table). Prices: "
        + "; ".join(f"{k}: {v}" for k, v in result["meta"]["prices"].items())
        + ". Locally the runner stands in for Lambda's checkpoint API: its calls (Invoke, "
        "CheckpointDurableExecution, SendDurableExecutionCallbackSuccess) are not billed requests here.",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- output
def render(result: dict[str, Any]) -> str:
    """The markdown section: calls per method, background work per task, cost per million tasks."""
    meta = result["meta"]
    shapes = meta.get("shapes", HELLO_SHAPES)
    sampled = any(shape in HELLO_SHAPES for shape in shapes)
    runs = f"samples: {meta['samples']}" if sampled else "no method samples (stream / artifact shapes only)"
    if any(stream_shape(shape) for shape in shapes):
        runs += "; each stream shape run once"
    if any(artifact_shape(shape) for shape in shapes):
        runs += "; each artifact shape run once"
    out = [
        f"Local stack, {runs} (after a warm-up pass); units per request (methods) or per task "
        "(shapes), averaged over the runs. RRU / WRU computed from item sizes (see the notes).",
        "",
        "**AWS calls per A2A method, API side** (per request; function = the template's function that serves the "
        "REST route; ms = median local request time)",
        "",
        "| method | function | DynamoDB calls | RRU | WRU (of which GSI) | SQS requests | ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in result["methods"].items():
        out.append(
            f"| {label} | {m['function']} | {_ops(m['calls'], 'dynamodb.')} | {_n(m['rru'])} | "
            f"{_n(m['wru'] + m['wru_gsi'])} ({_n(m['wru_gsi'])}) | {_ops(m['calls'], 'sqs.') or '0'} | "
            f"{m['median_ms']} |"
        )
    out += [
        "",
        "**Every component, per task of each window** (api:X = the API side of the requests in that window)",
        "",
        "| window | component | invocations | calls | RRU | WRU (of which GSI) | SQS requests |",
        "|---|---|---|---|---|---|---|",
    ]
    for window, components in result["windows"].items():
        for name, c in components.items():
            sqs = _n(c["sqs_fifo"] + c["sqs_std"])
            inv = _n(c["invocations"]) if not name.startswith("api:") else ""
            out.append(
                f"| {window} | {name} | {inv} | {_ops(c['calls'], '') or '0'} | {_n(c['rru'])} | "
                f"{_n(c['wru'] + c['wru_gsi'])} ({_n(c['wru_gsi'])}) | {sqs} |"
            )
    sizes = ", ".join(
        f"{kind} {v['median_bytes']} B (max {v['max_bytes']})" for kind, v in result["item_sizes_written"].items()
    )
    moves = result["head_index_key_moves"]
    e = result["per_executor_event"]
    if sampled:  # the figures of the method samples' 'hello' tasks
        out += [
            "",
            f"Items written (median size by kind): {sizes}. Head writes that moved both index keys (a status "
            f"change: the ByScope / ByContext sort key is the status timestamp): "
            f"{moves.get('head writes moving an index key', 0)} of {moves.get('head writes', 0)}.",
            f"Worker, per executor event ('hello' task / 3): {_ops(e['calls'], '')}; "
            f"{_n(e['rru'])} RRU, {_n(e['wru'] + e['wru_gsi'])} WRU (of which GSI {_n(e['wru_gsi'])}); "
            f"{_n(e['transact_items'])} transaction items.",
        ]
    pn = result["per_notification"]
    if pn:
        out.append(f"Push, per notification ({pn['notifications_per_task']} notifications per 'hello' task):")
        for name in ("PushDispatcherFunction", "PushDeliveryFunction"):
            c = pn[name]
            out.append(
                f"{name}: {_ops(c['calls'], '')}; {_n(c['rru'])} RRU, {_n(c['wru'] + c['wru_gsi'])} WRU, "
                f"{_n(c['sqs_fifo'] + c['sqs_std'])} SQS requests."
            )
    out += [
        "",
        "**Cost per million tasks** (us-east-1 on-demand, USD; no free tier)",
        "",
        "| task shape | API req | Lambda req | GB-s | RRU | WRU (GSI) | SQS req (ours + event source) | "
        "S3 PUT + GET | DynamoDB | SQS | Lambda (req + duration) | API Gateway | S3 (req + storage) | data out | "
        "**total** |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in result["shapes"].items():
        u, d = s["units_per_task"], s["per_million_tasks_usd"]
        sqs = u["sqs_requests_ours_fifo"] + u["sqs_requests_ours_standard"]
        s3 = d.get("s3_requests", 0.0) + d.get("s3_storage", 0.0)
        out.append(
            f"| {name} | {_n(u['api_requests'])} | {_n(u['lambda_requests'])} | {u['lambda_gb_seconds']:.4f} | "
            f"{_n(u['rru'])} | {_n(u['wru'])} ({_n(u['wru_of_which_gsi'])}) | {_n(sqs)} + "
            f"{_n(u['sqs_requests_event_source_estimate'])} | "
            f"{_n(u.get('s3_put_requests', 0))} + {_n(u.get('s3_get_requests', 0))} | "
            f"{d['dynamodb']:.2f} | {d['sqs']:.2f} | {d['lambda']:.2f} ({d['lambda_requests_only']:.2f} + "
            f"{d['lambda_duration_only']:.2f}) | {d['api_gateway']:.2f} | {s3:,.2f} "
            f"({d.get('s3_requests', 0.0):,.2f} + {d.get('s3_storage', 0.0):,.2f}) | "
            f"{d.get('data_transfer_out', 0.0):,.2f} | **{s['total_per_million_tasks_usd']:,.2f}** |"
        )
    out += render_stream_shapes(result.get("stream_shapes") or {})
    out += render_artifact_shapes(result.get("artifact_shapes") or {})
    out += ["", "Task shapes:"]
    out += [f"- `{name}`: {s['description']}." for name, s in result["shapes"].items()]
    out += ["", "Prices (checked " + meta["prices_checked"] + "):"]
    out += [f"- {k}: {v}" for k, v in meta["prices"].items()]
    out += ["", "Notes:"]
    out += [f"- {note}" for note in meta["caveats"]]
    return "\n".join(out) + "\n"


def render_stream_shapes(streams: dict[str, Any]) -> list[str]:
    """The stream shapes' table: per task, every component of the window."""
    if not streams:
        return []
    out = [
        "",
        "**Streaming task shapes** (one task each; DynamoDB calls of every component in the window; bytes = "
        "serialized request bodies of the DynamoDB write calls; worker s = wall time of its invocations)",
        "",
        "| shape | outcome | chunks stored | DynamoDB calls | write request bytes | RRU | WRU (GSI) | head max B | "
        "DynamoDB $/M | total $/M | worker s (invocations) | send → terminal s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in streams.items():
        if "skipped" in s:
            out.append(f"| {name} | skipped: {s['skipped']} |  |  |  |  |  |  |  |  |  |  |")
            continue
        state = s.get("final_state", "?").removeprefix("TASK_STATE_")
        if s.get("timed_out"):
            state += f" (not terminal after {s['cap_seconds']:g} s)"
        calls = ", ".join(f"{_n(n)} {op}" for op, n in s["dynamodb_calls"].items())
        terminal = s.get("seconds_to_terminal")
        out.append(
            f"| {name} | {state} | {s.get('chunks_stored', '?')} of {s['chunks_sent_by_executor']} | {calls} | "
            f"{s['dynamodb_write_request_bytes']:,} | {_n(s['rru'])} | {_n(s['wru'])} ({_n(s['wru_of_which_gsi'])}) | "
            f"{s['head_max_bytes']:,} | {s['per_million_tasks_usd']['dynamodb']:,.2f} | "
            f"{s['total_per_million_tasks_usd']:,.2f} | {s['worker_seconds_total']:g} ({s['worker_invocations']}) | "
            f"{terminal if terminal is not None else '-'} |"
        )
    messages = {n: s.get("final_status_message") for n, s in streams.items() if s.get("final_status_message")}
    out += [f"- `{n}` final status message: {m!r}" for n, m in messages.items()]
    return out


def render_artifact_shapes(artifacts: dict[str, Any]) -> list[str]:
    """The artifact shapes' table: per task, the S3 and DynamoDB calls of every component."""
    if not artifacts:
        return []
    out = [
        "",
        "**Large-part task shapes** (one task each; every component's calls in the window, the client's download "
        "by the presigned URL included; S3 bytes = object bodies sent / received)",
        "",
        "| shape | outcome | GetTask part | downloaded | S3 calls | S3 bytes sent / received | DynamoDB calls | "
        "RRU | WRU (GSI) | DynamoDB $/M | S3 req $/M | S3 storage $/M | data out $/M | total $/M |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, a in artifacts.items():
        if "s3_calls" not in a:
            out.append(f"| {name} | not measured |  |  |  |  |  |  |  |  |  |  |  |  |")
            continue
        d = a["per_million_tasks_usd"]
        state = a.get("final_state", "?").removeprefix("TASK_STATE_")
        exact = "byte-exact" if a.get("bytes_exact") else "NOT exact"
        s3_calls = ", ".join(f"{_n(n)} {op}" for op, n in a["s3_calls"].items())
        calls = ", ".join(f"{_n(n)} {op}" for op, n in a["dynamodb_calls"].items())
        out.append(
            f"| {name} | {state} | {a.get('get_task_part', '?')} | {a.get('bytes_received', 0):,} B, {exact} | "
            f"{s3_calls} | {a['s3_bytes_sent']:,} / {a['s3_bytes_received']:,} | {calls} | {_n(a['rru'])} | "
            f"{_n(a['wru'])} ({_n(a['wru_of_which_gsi'])}) | {d['dynamodb']:,.2f} | {d['s3_requests']:,.2f} | "
            f"{d['s3_storage']:,.2f} | {d['data_transfer_out']:,.2f} | {a['total_per_million_tasks_usd']:,.2f} |"
        )
    return out


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value else "0"


def _ops(calls: dict[str, float], prefix: str) -> str:
    return ", ".join(f"{_n(n)} {op.split('.', 1)[1]}" for op, n in calls.items() if op.startswith(prefix) and n)


CAVEATS = [
    "Calls are counted in botocore's after-call hook on the default session (one per API call, error responses "
    "included; botocore's own retries are not separate calls). The pollers' clients (SQS receive / delete, stream "
    "reads) are not on it.",
    "RRU / WRU are computed, not reported: moto's ConsumedCapacity (with ReturnConsumedCapacity) is a constant per "
    "operation (0.5 for GetItem, 1 or 2 per item elsewhere) whatever the item size or consistency, so it is not "
    "used. Item sizes follow DynamoDB's published rules, from the attribute values moto stores (approximate: "
    "number sizes, index entry overhead). Reads: per 4 KB, strongly consistent 1, eventually consistent (GSI "
    "queries) 0.5, Query rounded on the sum of the items read (before a filter, a projection or a count; up to "
    "its Limit), at least 1 unit; BatchGetItem as one GetItem per key (each item rounded up to 4 KB, a missing "
    "one 1 unit, ConsistentRead per table); a projection does not lower a read's bill. Writes: per 1 KB of the "
    "larger of the before and after item, at least 1; inside TransactWriteItems 2 per KB per item; "
    "BatchWriteItem 1 per KB per item processed. Failed conditional writes are charged by the existing item's "
    "size.",
    "Global secondary indexes: each index write billed at 1 WRU per KB (the standard rate, also for writes made in "
    "a transaction: an assumption), sized by the index's projection as moto's table defines it (ALL: the whole "
    "item; INCLUDE: the table and index keys plus the listed attributes; KEYS_ONLY: the keys); an item entering "
    "or leaving an index is one write, an index key change a delete plus a put (two writes), a change of a "
    "projected attribute one write, a change of attributes the index does not project none.",
    "Write request bytes: the size of the serialized request body of each DynamoDB PutItem, UpdateItem, "
    "DeleteItem, TransactWriteItems and BatchWriteItem call (botocore's request-created event), failed ones "
    "included.",
    "SQS: every queue is FIFO ($0.50 per million); a request is billed per 64 KB of payload. The event source "
    "mappings' ReceiveMessage / DeleteMessage are not made by our code and not counted; the cost adds an estimate "
    "of one receive and one delete per message (BatchSize 1 on every SQS event source in template.yaml). Their "
    "idle long polling is a fixed cost per queue, not per task, and is left out.",
    "DynamoDB Streams: GetRecords calls by Lambda event source mappings are free; the dispatcher's invocations "
    "(measured here; on AWS they depend on how records batch) are counted as Lambda requests.",
    "Lambda: one request per API call for the function serving the route (REST binding; JSON-RPC would all go to "
    "GatewayFunction, 1 GB) plus one for the REQUEST authorizer (AuthMode Open, the template default, not "
    f"cached; {AUTHORIZER_ASSUMED_MS:.0f} ms assumed), and one per event source invocation. GB-seconds use the "
    "template's MemorySize (arm64) and the durations measured here: handler wall time on a loaded 2-core machine "
    "with moto over local HTTP, so indicative only; a blocking SendMessage's duration includes the wait for the "
    "worker.",
    "S3 (artifact shapes): every call on the default session counted in after-call (PutObject / UploadPart body "
    "bytes from the request's parameters, GetObject bytes from its ContentLength); a presigned URL is signed "
    "locally by generate_presigned_url (botocore emits before-parameter-build, then sends nothing): recorded as "
    "a PresignGetObject of no request and no cost. The client's download by the URL is plain HTTP, recorded as "
    "one S3 GET by component 'client', its bytes as data transfer out to the internet (S3 to Lambda in the "
    "region: free). PUT, COPY, POST, LIST: the PUT price; DELETE free; every other request the GET price. "
    "Storage: the bytes of the distinct objects written, S3 Standard, for TaskTtlDays (the bucket's lifecycle "
    "expiry; S3 expires an object at the midnight UTC after that age, so up to a day more), prorated at "
    f"{DAYS_PER_MONTH} days a month; GB = 2^30 bytes. moto checks neither the URL's signature nor its expiry.",
    "Not included: DynamoDB storage, PITR and stream storage, CloudWatch Logs / metrics, X-Ray (Tracing: Active on "
    "every function), data transfer other than the artifact shapes' downloads, SSM (standard parameters: no "
    "charge; the push signing key set is read once per cold start), the free tiers.",
    "Streaming methods poll the event log while open (a strongly consistent Query every 50 ms while events flow, "
    "backing off to 1 s): their calls grow with the stream's duration; SubscribeToTask here follows a 'sleep 1' "
    "task to its end.",
]


def build_result(
    samples: int, quick: bool, shapes: Sequence[str] = HELLO_SHAPES, stream_cap: float = 300.0
) -> dict[str, Any]:
    raw = run_stack(samples, quick, shapes, stream_cap)
    facts = template_facts()
    result = analyse(raw, samples, facts, shapes)
    result["meta"] = {
        "samples": samples,
        "quick": quick,
        "shapes": list(shapes),
        "stream_cap_seconds": stream_cap,
        "date": time.strftime("%Y-%m-%d"),
        "prices_checked": PRICES_CHECKED,
        "prices": {
            "DynamoDB on-demand write / read request unit": f"${DYNAMODB_WRU * 1e6:.3f} / ${DYNAMODB_RRU * 1e6:.3f} "
            f"per million ({PRICE_SOURCES['DynamoDB on-demand']})",
            "SQS FIFO / standard request": f"${SQS_FIFO_REQUEST * 1e6:.2f} / ${SQS_STANDARD_REQUEST * 1e6:.2f} "
            f"per million ({PRICE_SOURCES['SQS']})",
            "Lambda": f"${LAMBDA_REQUEST * 1e6:.2f} per million requests, ${LAMBDA_GB_SECOND_ARM64} per GB-second "
            f"arm64 ({PRICE_SOURCES['Lambda']})",
            "API Gateway REST API": f"${API_GATEWAY_REST_REQUEST * 1e6:.2f} per million requests "
            f"({PRICE_SOURCES['API Gateway']})",
            "S3 Standard requests": f"PUT, COPY, POST, LIST ${S3_PUT_REQUEST * 1000:.3f} / GET and others "
            f"${S3_GET_REQUEST * 1000:.4f} per 1,000 ({PRICE_SOURCES['S3']})",
            "S3 Standard storage": f"${S3_STANDARD_GB_MONTH} per GB-month ({PRICE_SOURCES['S3']})",
            "Data transfer out to the internet": f"${DATA_TRANSFER_OUT_GB} per GB, first 10 TB a month "
            f"({PRICE_SOURCES['S3']})",
        },
        "template": facts,
        "caveats": CAVEATS,
    }
    return result


def parse_shapes(text: str, parser: argparse.ArgumentParser) -> list[str]:
    everything = [*HELLO_SHAPES, *STREAM_SHAPES, *ARTIFACT_SHAPES]
    names = everything if text.strip() == "all" else [n.strip() for n in text.split(",")]
    names = [n for n in dict.fromkeys(names) if n]
    unknown = [
        n
        for n in names
        if n not in HELLO_SHAPES and n not in WAIT_SHAPES and stream_shape(n) is None and artifact_shape(n) is None
    ]
    if unknown or not names:
        parser.error(
            f"unknown shapes {unknown}: use hello_blocking, hello_push, stream_<N>_<burst|paced>, artifact_<N>mb, "
            "two_turn_wait or all"
        )
    if set(names) & set(WAIT_SHAPES) and set(names) - set(WAIT_SHAPES):
        parser.error("two_turn_wait runs two stacks of its own (queue and durable mode): give it alone")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="AWS calls per A2A method and cost per million tasks (local stack)")
    parser.add_argument("--quick", action="store_true", help="one sample (under a minute)")
    parser.add_argument("--samples", type=int, default=None, help="samples after the warm-up pass (default 5)")
    parser.add_argument("--json", type=Path, help="write the result here")
    parser.add_argument(
        "--shapes",
        default=",".join(HELLO_SHAPES),
        help="comma-separated task shapes: hello_blocking, hello_push (with them, every method is sampled), "
        f"{', '.join(STREAM_SHAPES)} or any stream_<N>_<burst|paced>, {', '.join(ARTIFACT_SHAPES)} or any "
        "artifact_<N>mb (run once each, after the samples); 'all' = the hello, the three stream and the "
        "artifact shapes (default: the hello shapes); two_turn_wait (alone: queue and durable mode, "
        "--samples tasks each)",
    )
    parser.add_argument(
        "--stream-timeout",
        type=float,
        default=300.0,
        help="cap per stream shape, seconds: then what happened so far is reported (default 300)",
    )
    args = parser.parse_args(argv)
    shapes = parse_shapes(args.shapes, parser)
    samples = args.samples or (1 if args.quick else 5)
    if shapes == list(WAIT_SHAPES):
        waited = two_turn_wait_result(samples)
        if args.json:
            args.json.write_text(json.dumps(waited, indent=2))
        print(render_two_turn_wait(waited))
        return 1 if any(waited["modes"][m]["measure_errors"] for m in waited["modes"]) else 0
    result = build_result(samples, args.quick, shapes, args.stream_timeout)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(render(result))
    return 1 if result["measure_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
