"""Send keys: how SendMessage tells a retry from a new message without reading before it writes.

A send writes its key (:class:`~a2a_serverless.ports.SendKey`) in the same conditional step as
the task it creates or the message it adds; the key holds a fingerprint of the request. When the
key exists, the failed condition hands back what it holds, and this module decides:

* the same fingerprint: a re-send, answered with the first request's task, nothing run again;
  unless the client has since continued that task with another message or canceled it, both of
  which take the task's id, which only the first answer gave: then the message is not a retry of a
  lost answer but the same message sent again meaning a new one (the official TCK creates each of
  its prerequisite tasks so), processed as new under the same key, taken over (:func:`answered`);
* a messageId reused for a different request: processed as the new message it is, under a key of
  the messageId and the fingerprint together (so its own re-sends are recognised in turn), and
  logged once at INFO; or, with ``A2A_MESSAGE_ID_REUSE=reject``, InvalidParams naming it;
* an ``Idempotency-Key`` header used before for a different request: InvalidParams naming the
  header. A request with the header is keyed by it alone (its messageId is not looked at), whatever
  ``A2A_IDEMPOTENT_SEND`` says. The header is ahead of the A2A specification: it follows the
  proposal of a2aproject/A2A issue 1893 in the v1.1 candidates' epic, issue 1987 ("Idempotency &
  safe retries"), and the IETF draft draft-ietf-httpapi-idempotency-key-header.
"""

from __future__ import annotations

import hashlib
import json
import logging

from ..config import Settings
from ..errors import FieldViolation, InvalidParamsError
from ..models import Message, Role, SendMessageConfiguration, SendMessageRequest, TaskState
from ..ports import AcceptedMessage, KeyKind, SendKey, TaskRecord
from ._context import IDEMPOTENCY_KEY_HEADER, MAX_ID_LENGTH

__all__ = [
    "answered",
    "is_resend",
    "log_accepted",
    "log_taken_over",
    "next_key",
    "request_fingerprint",
    "reused_error",
    "send_key",
]

logger = logging.getLogger("a2a_serverless.operations.send_message")


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
