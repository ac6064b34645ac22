"""How ``aws_calls.py`` sees and attributes every AWS call and every function invocation.

:class:`Recorder` hooks botocore's events on a session (before-parameter-build, after-call) and
turns each call into one record: service, operation, transaction items or batch entries, and the
billed units (DynamoDB request units from :mod:`_aws_units`, SQS requests per 64 KB chunk, S3
requests by price tier with their bytes; a presigned URL as a call of no request). Each record
carries the component that made it, read from context variables: the label an ASGI wrapper
(:class:`LabelMiddleware`) sets from a per-request header for the API side, or the template
function whose wrapped handler (:func:`wrap_handlers`, counted by :class:`Activity`) is running.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from _aws_units import (
    _QUERY_REDUCERS,
    REGION,
    SQS_CHUNK,
    MotoItems,
    batch_get_units,
    gsi_writes,
    item_size,
    read_units,
    write_units,
)

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
