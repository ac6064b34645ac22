"""Send keys: what the store writes with a task or a message so a send is not processed twice
(their use: :mod:`a2a_serverless.operations._send_keys`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

__all__ = ["AcceptedMessage", "KeyKind", "SendKey"]


@dataclass(frozen=True, slots=True)
class AcceptedMessage:
    """A send key as stored: the task the request created or continued, and the fingerprint of
    the request (its message and configuration), which tells an identical re-send from a reuse of
    the key for something else."""

    task_id: str
    fingerprint: str = ""


class KeyKind(StrEnum):
    """What names a send key."""

    MESSAGE = "message"
    """The messageId: the first request that used it in the scope."""
    REUSED_MESSAGE = "reused-message"
    """The messageId and the fingerprint together: a request that reused a messageId for another
    message, processed as new (so its own re-sends are still recognised)."""
    HEADER = "header"
    """The ``Idempotency-Key`` request header's value."""


@dataclass(frozen=True, slots=True)
class SendKey:
    """A send's idempotency key: written in the same atomic step as the task it creates or the
    message it adds to one, only if it does not exist yet (else :class:`DuplicateMessage`), and it
    expires with the task. It is addressed by scope, kind and ``name`` (and by ``fingerprint`` too
    for :attr:`KeyKind.REUSED_MESSAGE`), and holds the task's id and ``fingerprint``.

    With ``replaces`` (a task id) the key is written only if it does not exist or still names that
    task: a messageId sent again after the client answered its first task takes the key over for
    the new task it creates (:func:`~a2a_serverless.operations._send_keys.answered`)."""

    kind: KeyKind
    name: str
    fingerprint: str = ""
    replaces: str = ""

    @classmethod
    def message(cls, message_id: str, fingerprint: str = "") -> SendKey:
        return cls(KeyKind.MESSAGE, message_id, fingerprint)

    @classmethod
    def header(cls, value: str, fingerprint: str = "") -> SendKey:
        return cls(KeyKind.HEADER, value, fingerprint)

    def reused(self) -> SendKey:
        """The key of a messageId's reuse for this request."""
        return replace(self, kind=KeyKind.REUSED_MESSAGE)

    def taking_over(self, task_id: str) -> SendKey:
        """This key, to be written over the one that names ``task_id`` (see ``replaces``)."""
        return replace(self, replaces=task_id)
