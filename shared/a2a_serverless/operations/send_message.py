"""SendMessage (A2A specification, sections 3.1.1 Send Message, 3.4 Multi-Turn Interactions, 3.2.4 History Length
Semantics).

* A message without ``taskId`` creates a task (server-generated id; the client's ``contextId`` is
  kept, or one is generated) in one transaction with its first event and the idempotency key
  (scope, messageId); then one work item is queued.
* A message with ``taskId`` continues an interrupted (INPUT_REQUIRED / AUTH_REQUIRED) task. Unknown
  or foreign task: TaskNotFound. Terminal task: UnsupportedOperation. Still running:
  UnsupportedOperation (wait for it to ask for input). ``contextId`` must match the task's.
* Re-sending a ``messageId`` the caller already sent, with the same message and configuration
  (see :func:`request_fingerprint`), returns that task and runs nothing again (if the task still
  waits for that message, its work item is queued again, which heals a first attempt that stored
  the task but could not queue it). Once the caller has continued or canceled that task (so it had
  the first answer), the same message again is a new one: a new task, which takes the key over
  (:func:`answered`). The same ``messageId`` with anything else is a new message,
  processed as if the id were fresh (a new task, or a new turn), and logged once at INFO;
  ``A2A_MESSAGE_ID_REUSE=reject`` refuses it instead (InvalidParams naming it; nothing is stored).
  No read comes before the write: the key's conditional write detects a re-send (see *Send keys* below).
  ``A2A_IDEMPOTENT_SEND=false`` turns de-duplication off: every SendMessage is then a new message,
  as in the reference servers.
* An ``Idempotency-Key`` header (ahead of the spec: a2aproject/A2A issue 1987) keys the request
  instead of its messageId: the same key with the same request is a re-send as above (a stream
  resumes the first task's events); with another request it is InvalidParams naming the header.
  Keys are per tenant and caller, and expire with the task.
* If the agent answers with a Message alone, a blocking call returns ``{"message": ...}`` and the
  task that carried the work is completed with it and left out of ListTasks. (A caller that chose
  ``returnImmediately`` got the task id, and GetTask shows the reply as the completed status.)
* Blocking is the default: the call waits until the run of *this* message left the task terminal
  or interrupted, or until ``blocking_wait_seconds`` passed; then it returns the task as it is
  (check ``status.state``: it may still be WORKING). ``returnImmediately`` returns at once. A task
  that settled and has webhooks is answered once the push of the state it answers with was
  delivered or tried, within ``push_wait_seconds`` (:mod:`._push_wait`).
* If the work item cannot be queued, the task is failed (never left SUBMITTED) and the caller gets
  an internal error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from dataclasses import dataclass, replace
from functools import partial

from .. import telemetry
from ..blobs import check_no_references
from ..config import Settings
from ..errors import (
    ContentUnavailableError,
    FieldViolation,
    InternalError,
    InvalidParamsError,
    TaskNotFoundError,
)
from ..lifecycle import with_history_length
from ..models import (
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    utc_now,
)
from ..mutation import mutate
from ..ports import (
    AcceptedMessage,
    BlobError,
    DuplicateMessage,
    ItemTooLarge,
    KeyKind,
    Scope,
    SendKey,
    TaskHead,
    TaskRecord,
    WorkItem,
)
from ..ports.queue import MAX_WORK_ITEM_BYTES, TRACE_FIELD_BYTES
from ..runtime import Runtime
from ..transitions import SCHEDULE_FAILED_TEXT, continue_with, fail_unscheduled, refuse_message
from ._context import IDEMPOTENCY_KEY_HEADER, MAX_ID_LENGTH, CallContext, check_id_length, resolve_scope
from ._push import prepare_config, require_push_capability
from ._push_wait import wait_for_pushes

__all__ = ["SCHEDULE_FAILED_TEXT", "Submitted", "request_fingerprint", "send_message", "submit_message"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Submitted:
    """What :func:`submit_message` did with the message."""

    record: TaskRecord
    """The task's record right after the submission."""
    accepted: bool
    """True if this call accepted the message for the first time (the task was created, or the
    message continued it); False for a re-send of a messageId the task already has."""

    @property
    def task(self) -> Task:
        """Shorthand for ``record.task``."""
        return self.record.task


def send_message(request: SendMessageRequest, ctx: CallContext, runtime: Runtime) -> SendMessageResponse:
    config = request.configuration or SendMessageConfiguration()
    started = time.monotonic()
    record = submit_message(request, ctx, runtime).record
    response = SendMessageResponse(task=with_history_length(record.task, config.history_length))
    if not config.return_immediately:
        record = wait_until_settled(runtime, record, request.message.message_id)
        if is_settled(record.head, request.message.message_id) or record.state.is_terminal:
            deadline = started + runtime.settings.blocking_wait_seconds
            wait_for_pushes(runtime, request, record, deadline=deadline)
        if record.reply is not None:
            response = SendMessageResponse(message=record.reply)
        else:
            response = SendMessageResponse(task=with_history_length(record.task, config.history_length))
    return runtime.parts.present(response, record.scope, record.task_id, runtime.settings.inline_response_bytes)


def submit_message(request: SendMessageRequest, ctx: CallContext, runtime: Runtime) -> Submitted:
    """Create or continue the task and queue its work; returns the record right after that, and
    whether this call was the one that accepted the message."""
    scope = resolve_scope(ctx, runtime, creating=not request.message.task_id)
    config = request.configuration or SendMessageConfiguration()
    if config.task_push_notification_config is not None:
        require_push_capability(runtime)
    message = request.message
    _check_ids(message, config)
    check_no_references(message)
    work = _checked_work_item(scope, request, ctx)
    key = send_key(request, runtime.settings, ctx.idempotency_key)
    try:
        if message.task_id:
            push = _inline_config(runtime, scope, message.task_id, config)  # validated before anything changes
            record, queued, accepted = _continue_task(runtime, scope, message, key)
            if push is not None and accepted:
                # Registered on a task that already has a log: it gets the events of this turn on.
                runtime.store.put_push_config(
                    scope, push, start_after_seq=record.last_seq, protocol_version=ctx.version
                )
        else:
            record, queued, accepted = _create_task(runtime, scope, message, config, ctx, key)
    except ItemTooLarge:
        raise InvalidParamsError(
            violations=[FieldViolation("message", "too large: the task would exceed what one task can store")]
        ) from None
    except BlobError:
        logger.exception("could not store the message's large parts; nothing was written")
        raise ContentUnavailableError(
            "The message's large parts could not be stored; nothing was written; try again"
        ) from None
    if queued:
        _enqueue(runtime, replace(work, task_id=record.task.id, turn=record.last_seq))
    return Submitted(record, accepted)


def _check_ids(message: Message, config: SendMessageConfiguration) -> None:
    push = config.task_push_notification_config
    for field, value in (
        ("message.messageId", message.message_id),
        ("message.contextId", message.context_id),
        ("message.taskId", message.task_id),
        ("configuration.taskPushNotificationConfig.id", push.id if push is not None else ""),
    ):
        check_id_length(field, value)


def _checked_work_item(scope: Scope, request: SendMessageRequest, ctx: CallContext) -> WorkItem:
    """The work item for this request, built before anything is written, its task id a stand-in of
    the same length when the task is yet to be created (a UUID, like the one it will get), and its
    turn as long as a turn can be.

    It carries the request's metadata, configuration and extensions to the worker, JSON in JSON,
    ASCII-escaped: a body under the size limit can make more than one queue message holds (``\\``
    doubles, an emoji becomes 14 bytes). Found out at enqueue, after the task was stored, that
    failed the task with a 500; refused before anything is written instead."""
    item = replace(_work_item(scope, request.message.task_id or str(uuid.uuid4()), request, ctx), turn=2**31)
    if len(item.to_json()) + TRACE_FIELD_BYTES <= MAX_WORK_ITEM_BYTES:  # ASCII: characters are bytes
        return item
    sizes = {
        "metadata": len(item.metadata),
        "configuration": len(item.configuration),
        "A2A-Extensions": sum(len(e) for e in item.extensions),
    }
    field = max(sizes, key=sizes.__getitem__)
    limit = f"too large: metadata, configuration and extensions must fit {MAX_WORK_ITEM_BYTES} bytes as JSON"
    raise InvalidParamsError(violations=[FieldViolation(field, limit)])


def _resent(runtime: Runtime, scope: Scope, task_id: str, message: Message) -> tuple[TaskRecord, bool, bool]:
    """(record, queue its work?, accepted: False) for a re-send of the message that ``task_id``
    accepted. If the task still waits for it, its work is queued again: the first attempt may have
    stored it and then failed to queue it (SQS deduplication and the worker's conditional claim keep
    the executor from running twice)."""
    record = runtime.store.get_task(scope, task_id)
    if record is None:
        raise TaskNotFoundError(metadata={"taskId": task_id})
    return _resend_of(record, message)


def _resend_of(record: TaskRecord, message: Message) -> tuple[TaskRecord, bool, bool]:
    """:func:`_resent`'s answer from the task's record as just read."""
    return record, record.pending_message_id == message.message_id, False


def _create_task(
    runtime: Runtime,
    scope: Scope,
    message: Message,
    config: SendMessageConfiguration,
    ctx: CallContext,
    key: SendKey | None,
) -> tuple[TaskRecord, bool, bool]:
    """(record, queue its work?, created by this call?). ``key`` None: the send is not de-duplicated."""
    record, push = _new_task(runtime, scope, message, config, ctx)
    while True:
        task = record.task
        try:
            stored = runtime.store.create_task(record, [StreamResponse(task=task)], key=key, push_config=push)
        except DuplicateMessage as dup:
            # A re-send, a concurrent duplicate that won the race, or this very write landed but its
            # response was lost and the retry found it: answer with that task. Or a reuse of the
            # messageId for another message: a new task under the reuse's own key, or refused.
            assert key is not None  # (no key, no duplicate)
            if not is_resend(dup.accepted, key, ""):
                key = next_key(key, runtime.settings)
                continue
            first = runtime.store.get_task(scope, dup.task_id)
            if first is None:
                # The key names a task that does not exist: a create that died after its key (or one
                # still on its way, given a moment), or one whose task expired first. Once it can
                # never appear, the key is this request's, for a task of a new id.
                if _never_created(runtime, scope, dup.task_id):
                    key = key.taking_over(dup.task_id)
                    record, push = _new_task(runtime, scope, message, config, ctx)
                continue
            if not answered(first, message, key, runtime.settings):
                return _resend_of(first, message)
            key = key.taking_over(first.task_id)  # the same message again, meant as a new one
            continue
        if key is not None and key.replaces:
            log_taken_over(key, key.replaces, task.id)
        else:
            log_accepted(key, task.id)
        return stored, True, True


def _new_task(
    runtime: Runtime, scope: Scope, message: Message, config: SendMessageConfiguration, ctx: CallContext
) -> tuple[TaskRecord, TaskPushNotificationConfig | None]:
    """A new task for ``message`` (SUBMITTED, a new id) and its inline push config, as created."""
    task_id = str(uuid.uuid4())
    context_id = message.context_id or str(uuid.uuid4())
    user_message = message.model_copy(update={"task_id": task_id, "context_id": context_id})
    now = utc_now()
    task = Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED, timestamp=now),
        history=[user_message],
    )
    push = _inline_config(runtime, scope, task_id, config)
    record = TaskRecord(
        scope=scope, task=task, pending_message_id=message.message_id, created_at=now, protocol_version=ctx.version
    )
    return record, push


_CREATE_PATIENCE = (0.05, 0.1, 0.2, 0.4)
"""How long a request waits (seconds, between reads) for a task its key names to appear before it
abandons that task's create: a create writes its head moments after its key."""


def _never_created(runtime: Runtime, scope: Scope, task_id: str) -> bool:
    """Whether the task ``task_id`` will never exist (its create abandoned now, or before); False
    when it appeared meanwhile."""
    for pause in _CREATE_PATIENCE:
        time.sleep(pause)
        if runtime.store.get_head(scope, task_id) is not None:
            return False
    return runtime.store.abandon_create(scope, task_id)


def _inline_config(
    runtime: Runtime, scope: Scope, task_id: str, config: SendMessageConfiguration
) -> TaskPushNotificationConfig | None:
    if config.task_push_notification_config is None:
        return None
    return prepare_config(
        config.task_push_notification_config,
        scope,
        task_id,
        runtime,
        field="configuration.taskPushNotificationConfig.url",
    )


def _continue_task(
    runtime: Runtime, scope: Scope, message: Message, key: SendKey | None
) -> tuple[TaskRecord, bool, bool]:
    """Add ``message`` to an interrupted task. Returns the record, whether its work must be queued,
    and whether this call accepted the message (False for a re-send)."""
    while True:
        rule = partial(continue_with, message=message, max_history=runtime.settings.max_history, key=key)
        try:
            committed = mutate(runtime.store, scope, message.task_id, rule)
        except DuplicateMessage as dup:
            # The task took the message, but the key exists: a re-send (the task asked again since),
            # or the messageId of another message, this task's or another's.
            assert key is not None
            if is_resend(dup.accepted, key, message.task_id):
                return _resent(runtime, scope, message.task_id, message)
            key = next_key(key, runtime.settings)
            continue
        if committed.result:
            log_accepted(key, message.task_id)
            return committed.record, True, True
        assert key is not None  # (the rule says "perhaps a re-send" only with a key)
        if _sent_before(runtime, scope, message.task_id, key):
            return _resend_of(committed.record, message)  # the task as just read: not read again
        refuse_message(committed.record)  # not this request's: a message the task cannot take now


def _sent_before(runtime: Runtime, scope: Scope, task_id: str, key: SendKey) -> bool:
    """Whether the task took this very request before: its key, or its reuse's, names the task with
    the same fingerprint (two reads, on the path of a task that cannot take a message). A key that
    holds another request is refused when reuse is (an ``Idempotency-Key`` always), else the task's
    own error follows."""
    stored = runtime.store.find_key(scope, key)
    if stored is not None and is_resend(stored, key, task_id):
        return True
    if key.kind is KeyKind.MESSAGE and runtime.settings.message_id_reuse == "new":
        return runtime.store.find_key(scope, key.reused()) is not None
    if stored is not None:
        next_key(key, runtime.settings)  # raises: reuse is refused
    return False


def _work_item(scope: Scope, task_id: str, request: SendMessageRequest, ctx: CallContext) -> WorkItem:
    """The work item for this request's message; the configuration travels without the push
    config (its credentials have no business on the queue, and the executor does not need them)."""
    configuration = ""
    if request.configuration is not None:
        configuration = request.configuration.model_copy(update={"task_push_notification_config": None}).to_json()
    return WorkItem(
        tenant=scope.tenant,
        owner=scope.owner,
        task_id=task_id,
        message_id=request.message.message_id,
        configuration=configuration,
        metadata=json.dumps(request.metadata, separators=(",", ":")) if request.metadata else "",
        extensions=tuple(sorted(ctx.extensions)),
    )


def _enqueue(runtime: Runtime, item: WorkItem) -> None:
    scope = Scope(item.tenant, item.owner)
    try:
        with telemetry.enqueue(item.task_id, item.message_id) as trace:
            runtime.queue.enqueue(replace(item, trace=trace))
    except Exception:
        logger.exception("could not queue work; failing the task", extra={"task_id": item.task_id})
        _fail_unscheduled(runtime, scope, item)
        raise InternalError() from None


def _fail_unscheduled(runtime: Runtime, scope: Scope, item: WorkItem) -> None:
    rule = partial(fail_unscheduled, message_id=item.message_id, max_history=runtime.settings.max_history)
    try:
        mutate(runtime.store, scope, item.task_id, rule)
    except Exception:
        logger.exception("could not fail unscheduled task", extra={"task_id": item.task_id})


def is_settled(head: TaskHead, message_id: str) -> bool:
    """True once the run for ``message_id`` is over and the task is terminal or interrupted."""
    return (
        head.pending_message_id != message_id
        and head.running_message_id != message_id
        and (head.state.is_terminal or head.state.is_interrupted)
    )


def wait_until_settled(runtime: Runtime, record: TaskRecord, message_id: str) -> TaskRecord:
    """Poll the task's head (one small read) until the run of ``message_id`` is over or the
    blocking cap passed, then read the whole task once."""
    settings = runtime.settings
    start = time.monotonic()
    deadline = start + settings.blocking_wait_seconds
    delay = settings.poll_interval_seconds
    head = record.head
    while not is_settled(head, message_id) and not head.state.is_terminal:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        runtime.store.wait_for_change(record.scope, record.task.id, head.version, min(delay, remaining))
        # Quick answers are the common case: poll at the base interval for the first second, then
        # back off to at most two reads a second (strongly consistent reads of one small item).
        if time.monotonic() - start > 1.0:
            delay = min(delay * 1.5, 0.5)
        latest = runtime.store.get_head(record.scope, record.task.id)
        if latest is None:
            return record
        head = latest
    if head.version == record.version:
        return record
    return runtime.store.get_task(record.scope, record.task.id) or record


# --------------------------------------------------------------------------- send keys
# Send keys: how SendMessage tells a retry from a new message without reading before it writes.
#
# A send writes its key (:class:`~a2a_serverless.ports.SendKey`) in the same conditional step as
# the task it creates or the message it adds; the key holds a fingerprint of the request. When the
# key exists, the failed condition hands back what it holds, and this module decides:
#
# * the same fingerprint: a re-send, answered with the first request's task, nothing run again;
#   unless the client has since continued that task with another message or canceled it, both of
#   which take the task's id, which only the first answer gave: then the message is not a retry of a
#   lost answer but the same message sent again meaning a new one (the official TCK creates each of
#   its prerequisite tasks so), processed as new under the same key, taken over (:func:`answered`);
# * a messageId reused for a different request: processed as the new message it is, under a key of
#   the messageId and the fingerprint together (so its own re-sends are recognised in turn), and
#   logged once at INFO; or, with ``A2A_MESSAGE_ID_REUSE=reject``, InvalidParams naming it;
# * an ``Idempotency-Key`` header used before for a different request: InvalidParams naming the
#   header. A request with the header is keyed by it alone (its messageId is not looked at), whatever
#   ``A2A_IDEMPOTENT_SEND`` says. The header is ahead of the A2A specification: it follows the
#   proposal of a2aproject/A2A issue 1893 in the v1.1 candidates' epic, issue 1987 ("Idempotency &
#   safe retries"), and the IETF draft draft-ietf-httpapi-idempotency-key-header.


def request_fingerprint(request: SendMessageRequest) -> str:
    """What tells an identical re-send from a reuse of its key: a hash of the message and of the
    configuration that changes what is stored or run (``acceptedOutputModes``, the push config), as
    the caller sent them (ProtoJSON, defaults omitted; either protocol version gives the same). How
    the answer is shaped may differ between attempts (``returnImmediately``, ``historyLength``, a
    stream or not): a client may re-send on a stream to resume, or stop blocking on a retry."""
    config = request.configuration or SendMessageConfiguration()
    acting = config.model_copy(update={"history_length": None, "return_immediately": False})
    sent = {"message": request.message.to_wire(), "configuration": acting.to_wire()}
    text = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def send_key(request: SendMessageRequest, settings: Settings, header: str | None = None) -> SendKey | None:
    """The key this request writes: its ``Idempotency-Key`` header's (``header``, as sent), else its
    messageId's, or none when messageIds are not de-duplicated."""
    if header is not None:
        return SendKey.header(_header_key(header), request_fingerprint(request))
    if not settings.idempotent_send:
        return None
    return SendKey.message(request.message.message_id, request_fingerprint(request))


def _header_key(raw: str) -> str:
    """The header's key: a token, or a Structured Fields string (the IETF draft's form, quoted),
    of 1 to :data:`MAX_ID_LENGTH` printable ASCII characters; InvalidParams naming the header otherwise."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not value or len(value) > MAX_ID_LENGTH or not all(" " <= c <= "~" for c in value):
        rule = f"1 to {MAX_ID_LENGTH} printable ASCII characters"
        raise InvalidParamsError(
            f"The {IDEMPOTENCY_KEY_HEADER} header must be {rule}",
            violations=[FieldViolation(IDEMPOTENCY_KEY_HEADER, f"must be {rule}")],
        )
    return value


def is_resend(stored: AcceptedMessage, key: SendKey, task_id: str) -> bool:
    """Whether the stored key is this very request's (``task_id``: the task it continues, '' for a
    new one). A key written before fingerprints were is compared by task only."""
    if stored.fingerprint and stored.fingerprint != key.fingerprint:
        return False
    return not task_id or stored.task_id == task_id


def answered(record: TaskRecord, message: Message, key: SendKey, settings: Settings) -> bool:
    """Whether a re-send of ``message`` (which created ``record``'s task) is a new message after
    all: the client has answered the task since, with another message of its own or a cancel, and
    so had the first answer (nothing else gives a client a task's id). A read leaves no mark and
    does not count; neither does an ``Idempotency-Key`` (its retries always get the first answer)
    nor a messageId under ``A2A_MESSAGE_ID_REUSE=reject`` (one id, one message)."""
    if key.kind is KeyKind.HEADER or settings.message_id_reuse != "new":
        return False
    task = record.task
    if record.cancel_requested or task.status.state is TaskState.TASK_STATE_CANCELED:
        return True
    # Another message of the client's: one with another id, or a second one (an answer may reuse
    # the id, a retry does not add one); the history may have dropped the first
    from_client = [m for m in task.history if m.role is Role.ROLE_USER]
    return len(from_client) > 1 or any(m.message_id != message.message_id for m in from_client)


def log_taken_over(key: SendKey, first_task_id: str, task_id: str) -> None:
    """One INFO line for a messageId sent again after its task was answered (:func:`answered`)."""
    logger.info(
        "messageId %r was sent again after its task %s was continued or canceled; processed as a new message",
        key.name,
        first_task_id,
        extra={"task_id": task_id, "message_id": key.name},
    )


def next_key(key: SendKey, settings: Settings) -> SendKey:
    """The key to try once ``key`` turned out to hold another request: a reused messageId's own,
    or InvalidParams when reuse is refused (always, for an ``Idempotency-Key``)."""
    if key.kind is KeyKind.HEADER:
        raise InvalidParamsError(
            f"{IDEMPOTENCY_KEY_HEADER} {key.name!r} was already used for a different request",
            violations=[
                FieldViolation(
                    IDEMPOTENCY_KEY_HEADER,
                    "already used for a different request: a retry must repeat the request exactly"
                    " (its message and configuration); a new request needs a new key",
                )
            ],
            metadata={"idempotencyKey": key.name},
        )
    if key.kind is KeyKind.MESSAGE and settings.message_id_reuse == "new":
        return key.reused()
    raise reused_error(key.name)


def log_accepted(key: SendKey | None, task_id: str) -> None:
    """One INFO line for a reused messageId that was processed as a new message (only the request
    that wrote its key says so: its re-sends are re-sends)."""
    if key is not None and key.kind is KeyKind.REUSED_MESSAGE:
        logger.info(
            "messageId %r was used before for a different message; processed as a new message",
            key.name,
            extra={"task_id": task_id, "message_id": key.name},
        )


def reused_error(message_id: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"messageId {message_id!r} was already used for a different message",
        violations=[
            FieldViolation(
                "message.messageId",
                "already used for a different message or configuration: send a new message with a new"
                " messageId (a re-send must repeat the message and its configuration exactly)",
            )
        ],
        metadata={"messageId": message_id},
    )
