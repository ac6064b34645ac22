"""Test events for the template's functions, as their event sources would send them, for
``sam local invoke --event`` (``a2a-serverless event KIND``) and the tests that run the functions.

``sam local generate-event`` knows the shapes but not the kit's messages (and its ``sqs
receive-message`` breaks on a JSON body). The message bodies here come from the kit's own code, so
they cannot drift from what runs: a work item is put on the work queue by
:class:`~a2a_serverless.adapters.sqs.SqsWorkQueue` and a delivery item by
:class:`~a2a_serverless.adapters.sqs.SqsDeliveryQueue`, each with a client that keeps the request
instead of sending it; the SQS record around it is the local stack's (:func:`._lambda.sqs_event`),
the stream record's new image the DynamoDB store's own item (its codec), the schedule's event the
local stack's schedule (:func:`.schedule_pollers.scheduled_event`). The API Gateway events (a
REQUEST authorizer's and a REST proxy integration's, :mod:`._apigateway_events`) follow API
Gateway's documented shapes.

KIND is ``worker``, ``durable-worker``, ``dead-letter``, ``push-dispatcher``, ``push-delivery``, ``sweeper``,
``authorizer`` or ``api``; ``a2a-serverless event KIND --help`` says what each takes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from a2a_serverless.adapters.dynamodb.table import log_item, push_item
from a2a_serverless.adapters.sqs import SqsDeliveryQueue, SqsWorkQueue
from a2a_serverless.durable.queue import DurableQueue
from a2a_serverless.json_types import Json
from a2a_serverless.models import TaskPushNotificationConfig
from a2a_serverless.ports import Scope, TaskStore, WorkItem
from a2a_serverless.push.delivery import DeliveryItem
from a2a_serverless.versions import CURRENT

from ._apigateway_events import REGION, api_event, authorizer_event
from ._command import fail
from ._lambda import ACCOUNT_ID, sqs_event

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

__all__ = [
    "KINDS",
    "add_parser",
    "api_event",
    "authorizer_event",
    "dead_letter_event",
    "delivery_event",
    "dispatcher_event",
    "durable_event",
    "run",
    "schedule_event",
    "worker_event",
]

STACK = "a2a-local"
"""The stack name in the ARNs and queue names (the local stack's): the handlers read none of them."""

KINDS = ("worker", "durable-worker", "dead-letter", "push-dispatcher", "push-delivery", "sweeper", "authorizer", "api")


# ------------------------------------------------------------------------------------------ SQS


class _KeptRequests:
    """An SQS client that keeps what the kit's queue adapters would send."""

    def __init__(self) -> None:
        self.messages: list[Json] = []

    def send_message(self, **request: Any) -> Json:
        self.messages.append(_received(request))
        return {"MessageId": self.messages[-1]["MessageId"]}

    def send_message_batch(self, *, QueueUrl: str, Entries: Sequence[Mapping[str, Any]]) -> Json:
        for entry in Entries:
            self.messages.append(_received(entry))
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def _received(request: Mapping[str, Any], receive_count: int = 1) -> Json:
    """The ``ReceiveMessage`` message (all attributes) that a FIFO queue hands out for ``request``."""
    body = str(request["MessageBody"])
    now_ms = str(int(time.time() * 1000))
    message: Json = {
        "MessageId": str(uuid.uuid4()),
        "ReceiptHandle": uuid.uuid4().hex,
        "MD5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
        "Body": body,
        "Attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": now_ms,
            "SenderId": ACCOUNT_ID,
            "ApproximateFirstReceiveTimestamp": now_ms,
            "MessageGroupId": str(request["MessageGroupId"]),
            "MessageDeduplicationId": str(request["MessageDeduplicationId"]),
            "SequenceNumber": str(time.time_ns()),
        },
        "MessageAttributes": dict(request.get("MessageAttributes", {})),
    }
    return message


def _queue_arn(queue_id: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{STACK}-{queue_id}.fifo"


def _queue_url(queue_id: str) -> str:
    return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT_ID}/{STACK}-{queue_id}.fifo"


def _as_sqs(kept: _KeptRequests) -> SQSClient:
    return cast("SQSClient", kept)


def _sqs_event(kept: _KeptRequests, queue_id: str, receive_count: int) -> Json:
    for message in kept.messages:
        message["Attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return sqs_event(kept.messages, queue_arn=_queue_arn(queue_id), region=REGION)


def worker_event(item: WorkItem, *, receive_count: int = 1) -> Json:
    """The worker's SQS event for ``item``, as SendMessage queues it on the work queue."""
    kept = _KeptRequests()
    SqsWorkQueue(_queue_url("WorkQueue"), client=_as_sqs(kept)).enqueue(item)
    return _sqs_event(kept, "WorkQueue", receive_count)


def dead_letter_event(item: WorkItem, *, receive_count: int = 1) -> Json:
    """The dead-letter function's SQS event: ``item`` as SQS moves it to the work dead-letter queue
    (the same message, after the work queue's ``maxReceiveCount`` receives)."""
    kept = _KeptRequests()
    SqsWorkQueue(_queue_url("WorkDeadLetterQueue"), client=_as_sqs(kept)).enqueue(item)
    return _sqs_event(kept, "WorkDeadLetterQueue", receive_count)


def delivery_event(item: DeliveryItem, *, receive_count: int = 1) -> Json:
    """The push delivery function's SQS event for ``item``, as the dispatcher queues it."""
    kept = _KeptRequests()
    queue = SqsDeliveryQueue(_queue_url("PushDeliveryQueue"), _queue_url("PushDeadLetterQueue"), _as_sqs(kept))
    queue.send([item])
    return _sqs_event(kept, "PushDeliveryQueue", receive_count)


# ------------------------------------------------------------------------------ durable worker


class _KeptStart:
    """Durable runs that keep the input of the execution the kit would start."""

    def __init__(self) -> None:
        self.payloads: list[str] = []

    def start(self, name: str, payload: str) -> None:
        self.payloads.append(payload)

    def resume(self, callback_id: str, payload: str) -> None:
        raise AssertionError("a first turn resumes nothing")

    def abandon(self, callback_id: str, reason: str) -> None:
        raise AssertionError("a first turn abandons nothing")


def durable_event(item: WorkItem) -> Json:
    """The durable worker's input (``ExecutionMode: Durable``): what SendMessage starts the task's
    durable execution with, for its first message (``item.turn`` 0 or 1; a later message resumes
    the execution, it starts none)."""
    if item.turn > 1:
        raise ValueError("a durable execution starts with the task's first message: --turn 0 or 1")
    kept = _KeptStart()
    # No store: a first message only starts an execution (a later one would read the task's head).
    DurableQueue(cast("TaskStore", None), kept).enqueue(item)
    (payload,) = kept.payloads
    event: Json = json.loads(payload)
    return event


# ----------------------------------------------------------------------------- DynamoDB stream


def dispatcher_event(
    scope: Scope, task_id: str, *, config_id: str = "", seq: int = 0, url: str = "https://example.com/hook"
) -> Json:
    """The push dispatcher's DynamoDB stream event: the INSERT of a push config item (``config_id``:
    it queues the task's events so far for that config) or of an event-log item ending at ``seq``
    (it queues the events up to ``seq`` for every config of the task), the store's own item as the
    record's new image."""
    if bool(config_id) == bool(seq):
        raise ValueError("give a config id or an event seq, one of them")
    now = datetime.now(UTC)
    if config_id:
        config = TaskPushNotificationConfig(tenant=scope.tenant, id=config_id, task_id=task_id, url=url)
        image = push_item(scope, config, None, CURRENT)
    else:
        image = log_item(scope, task_id, seq, ["{}"], now, None)
    keys = {name: image[name] for name in ("pk", "sk")}
    table = f"{STACK}-TasksTable"
    stream = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{table}/stream/{now.strftime('%Y-%m-%dT%H:%M:%S.000')}"
    size = len(json.dumps(image))
    record: Json = {
        "eventID": uuid.uuid4().hex,
        "eventName": "INSERT",
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": REGION,
        "dynamodb": {
            "ApproximateCreationDateTime": int(now.timestamp()),
            "Keys": keys,
            "NewImage": image,
            "SequenceNumber": str(time.time_ns()),
            "SizeBytes": size,
            "StreamViewType": "NEW_IMAGE",
        },
        "eventSourceARN": stream,
    }
    event: Json = json.loads(json.dumps({"Records": [record]}))
    return event


# ------------------------------------------------------------------------------------ schedule


def schedule_event(rule_name: str = f"{STACK}-SweeperFunctionSchedule") -> Json:
    """The sweeper's event: what its EventBridge schedule sends (the local stack's schedule's, which
    needs the [dev] extra: PyYAML, for the template)."""
    from .schedule_pollers import scheduled_event

    return scheduled_event(rule_name, region=REGION)


# ------------------------------------------------------------------------------------- command


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``event`` to ``commands`` (``ArgumentParser.add_subparsers()``); return its parser."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "event",
        help="write a function's test event (for sam local invoke --event)",
        description="Write the event a function's source would send it, with the kit's own message bodies, "
        "as JSON: for `sam local invoke FUNCTION --event FILE` (sam local generate-event knows no kit message).",
    )
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    task = argparse.ArgumentParser(add_help=False)
    task.add_argument("--task-id", required=True, help="the task's id")
    task.add_argument("--owner", default="anonymous", help="the caller who owns the task (default: %(default)s)")
    task.add_argument("--tenant", default="", help="the task's tenant (default: none)")
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument("--out", metavar="FILE", type=Path, help="write it to FILE (default: standard output)")
    work = argparse.ArgumentParser(add_help=False, parents=[task])
    work.add_argument("--message-id", required=True, help="the id of the message whose turn the item runs")
    work.add_argument(
        "--configuration",
        default="",
        metavar="JSON",
        help="the request's configuration as SendMessage queued it (ProtoJSON), e.g. '{\"returnImmediately\":true}'",
    )
    work.add_argument(
        "--turn", type=int, default=0, help="the task's last event number when it took the message (default: 0)"
    )
    received = argparse.ArgumentParser(add_help=False)
    received.add_argument("--receive-count", type=int, default=1, help="SQS's receive count (default: %(default)s)")
    kinds.add_parser(
        "worker", parents=[work, received, out], help="WorkerFunction: the SQS event of a queued task's work item"
    )
    kinds.add_parser(
        "durable-worker",
        parents=[work, out],
        help="DurableWorkerFunction: the input of a task's durable execution (ExecutionMode Durable)",
    )
    kinds.add_parser(
        "dead-letter", parents=[work, received, out], help="DeadLetterFunction: a work item SQS gave up on"
    )
    dispatcher = kinds.add_parser(
        "push-dispatcher",
        parents=[task, out],
        help="PushDispatcherFunction: the table's stream record of a new push config or task event",
    )
    what = dispatcher.add_mutually_exclusive_group(required=True)
    what.add_argument("--config-id", help="a push config written for the task (queues the task's events so far)")
    what.add_argument("--seq", type=int, help="the task's event with this number was logged (queues it)")
    delivery = kinds.add_parser(
        "push-delivery",
        parents=[task, received, out],
        help="PushDeliveryFunction: a delivery item the dispatcher queued",
    )
    delivery.add_argument("--config-id", required=True, help="the push config to deliver to")
    delivery.add_argument("--up-to-seq", type=int, required=True, help="deliver the task's events up to this one")
    kinds.add_parser("sweeper", parents=[out], help="SweeperFunction: its schedule's event")
    request = argparse.ArgumentParser(add_help=False)
    request.add_argument("--method", default="POST", help="the HTTP method of the call (default: %(default)s)")
    request.add_argument(
        "--path",
        default="/message:send",
        help="the route, with its parameters as {name=value}, e.g. /tasks/{id=T} (default: %(default)s)",
    )
    request.add_argument("--tenant", default="", help="call the tenant's route, /{tenant}/... (default: none)")
    request.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", help="a request header")
    authorizer = kinds.add_parser(
        "authorizer", parents=[request, out], help="AuthorizerFunction: a REQUEST authorizer's event"
    )
    authorizer.add_argument("--token", help="the bearer token (default: no Authorization header)")
    api = kinds.add_parser("api", parents=[request, out], help="an API function: API Gateway's proxy event for a route")
    api.add_argument("--body", help="the request's body (JSON text)")
    api.add_argument("--principal", default="anonymous", help="whom the authorizer let in (default: %(default)s)")
    api.add_argument("--query", action="append", default=[], metavar="NAME=VALUE", help="a query parameter")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the event ``args`` asks for; 0, or 2 with one line on standard error."""
    try:
        event = _event(args)
    except ValueError as exc:
        return fail(str(exc), code=2, command=f"event {args.kind}")
    except ImportError as exc:  # the base install: no PyYAML
        missing = (exc.name or "a dependency").split(".")[0]
        return fail(f"needs the [dev] extra ({missing} is not installed)", code=2, command=f"event {args.kind}")
    text = json.dumps(event, indent=2) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


def _event(args: argparse.Namespace) -> Json:
    if args.kind in ("worker", "durable-worker", "dead-letter"):
        item = WorkItem(
            args.tenant, args.owner, args.task_id, args.message_id, configuration=args.configuration, turn=args.turn
        )
        if args.kind == "durable-worker":
            return durable_event(item)
        make = worker_event if args.kind == "worker" else dead_letter_event
        return make(item, receive_count=args.receive_count)
    if args.kind == "push-dispatcher":
        scope = Scope(args.tenant, args.owner)
        return dispatcher_event(scope, args.task_id, config_id=args.config_id or "", seq=args.seq or 0)
    if args.kind == "push-delivery":
        delivery = DeliveryItem(args.tenant, args.owner, args.task_id, args.config_id, up_to_seq=args.up_to_seq)
        return delivery_event(delivery, receive_count=args.receive_count)
    if args.kind == "sweeper":
        return schedule_event()
    headers = dict(_pair(h, ":") for h in args.header)
    if args.kind == "authorizer":
        return authorizer_event(args.method, args.path, token=args.token, tenant=args.tenant, headers=headers)
    query = dict(_pair(q, "=") for q in args.query)
    return api_event(
        args.method,
        args.path,
        body=args.body,
        principal=args.principal,
        tenant=args.tenant,
        headers=headers,
        query=query,
    )


def _pair(text: str, separator: str) -> tuple[str, str]:
    name, found, value = text.partition(separator)
    if not found or not name.strip():
        raise ValueError(f"{text!r} is not NAME{separator}VALUE")
    return name.strip(), value.strip()
