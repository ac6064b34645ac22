"""The caller most operation-level tests play (``alice``, no tenant), and the SendMessage request
they send: for suites that call the operations and the worker directly, without HTTP."""

from __future__ import annotations

from a2a_serverless.auth import Principal
from a2a_serverless.models import Message, Part, Role, SendMessageConfiguration, SendMessageRequest
from a2a_serverless.operations import CallContext
from a2a_serverless.ports import Scope

__all__ = ["CTX", "SCOPE", "send_request"]

CTX = CallContext(principal=Principal("alice", authenticated=True))
"""alice's call, authenticated, no tenant."""
SCOPE = Scope("", "alice")
"""Where alice's tasks are stored."""


def send_request(
    text: str, message_id: str = "m-1", *, task_id: str = "", return_immediately: bool | None = True
) -> SendMessageRequest:
    """alice's message ``text`` (on ``task_id`` when given); ``returnImmediately`` unless None."""
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)
    configuration = (
        SendMessageConfiguration(return_immediately=return_immediately) if return_immediately is not None else None
    )
    return SendMessageRequest(message=message, configuration=configuration)
