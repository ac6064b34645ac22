"""One function per A2A operation: ``(request, CallContext, Runtime) -> response``.

No HTTP and no boto3 here: transports parse and render, ports store and queue. The method table
(:mod:`a2a_serverless.methods`) maps each A2A method to its function.
"""

from ._context import IDEMPOTENCY_KEY_HEADER, CallContext, resolve_scope
from .cancel_task import cancel_task
from .extended_card import get_extended_card
from .get_task import get_task
from .list_tasks import list_tasks
from .push_configs import create_push_config, delete_push_config, get_push_config, list_push_configs
from .send_message import send_message
from .streaming import EventStream, open_message_stream, open_subscription

__all__ = [
    "IDEMPOTENCY_KEY_HEADER",
    "CallContext",
    "EventStream",
    "cancel_task",
    "create_push_config",
    "delete_push_config",
    "get_extended_card",
    "get_push_config",
    "get_task",
    "list_push_configs",
    "list_tasks",
    "open_message_stream",
    "open_subscription",
    "resolve_scope",
    "send_message",
]
