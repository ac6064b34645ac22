"""A blocking SendMessage answers once the push of the state it answers with was delivered or tried.

Webhooks are served apart from the call: the table's stream feeds the dispatcher, which queues a
delivery per config, and the delivery function POSTs (``docs/push-notifications.md``). Left alone,
the last event reaches the webhook a few hundred milliseconds after the blocking answer, and a
client that reads its webhook as soon as it has the answer (as test kits do: the A2A SDK's
reference server POSTs before it answers) finds nothing there yet.

So once the blocking wait saw the task settle, :func:`wait_for_pushes` polls how far each of the
task's configs got (:meth:`~a2a_serverless.ports.TaskStore.push_progress`: one small Query, ids and
delivery marks only, in the caller's scope) until every one reached the answer's last event:
delivered (the cursor moved), dead-lettered (the cursor moved past it), or tried: the delivery
function marks the event an attempt failed on (``tried_seq``), and while that mark is past the
cursor, every later event of the config waits behind it for the retry, the answer's included
(:class:`~a2a_serverless.ports.push_marks.PushProgress`). A config deleted meanwhile drops out, one
created meanwhile is waited for too. It polls as the blocking wait does (the store's
``wait_for_change``, from ``poll_interval_seconds`` backing off to a tenth of a second: a few
small reads per answer).

**Bounded.** At most ``push_wait_seconds`` (``A2A_PUSH_WAIT_SECONDS``, 5 by default; 0 turns the wait
off), and never past ``blocking_wait_seconds`` from the call's start, so the whole blocking call stays
within the cap that keeps it under API Gateway's 29 s. A webhook that refuses connections costs
one failed attempt; one that hangs costs the bound; a delivery pipeline that is slow or down costs
the bound. Whatever happens here, the answer is the task as settled: a failed read is logged and
the answer goes out.

**Nothing is sent from here.** The delivery function stays the only sender: the wait reads what it
records, so no webhook gets an event twice, or out of order, on account of it.

**No cost without webhooks.** Nothing is read when push notifications are off, when no delivery
queue is configured (``A2A_PUSH_QUEUE_URL``: the in-memory store of protocol tests has no delivery
pipeline), or for a new task sent without an inline config (nobody could register one on it before
the answer named it; a config another call adds in the meantime is delivered all the same, just not
waited for). A message that continues a task reads the task's configs once, and answers at once if
it has none.
"""

from __future__ import annotations

import logging
import time

from ..models import SendMessageRequest
from ..ports import TaskRecord
from ..runtime import Runtime

__all__ = ["wait_for_pushes"]

logger = logging.getLogger(__name__)

_SLOWEST_POLL_SECONDS = 0.1


def may_have_webhooks(runtime: Runtime, request: SendMessageRequest) -> bool:
    """Whether the task this request answers with can have push configs to wait for."""
    settings = runtime.settings
    if not settings.push_notifications or not settings.push_queue_url or settings.push_wait_seconds <= 0:
        return False
    inline = request.configuration is not None and request.configuration.task_push_notification_config is not None
    return inline or bool(request.message.task_id)


def wait_for_pushes(runtime: Runtime, request: SendMessageRequest, record: TaskRecord, *, deadline: float) -> None:
    """Return once every push config of ``record``'s task got (or was tried with) the events up to
    the record's last one, or ``push_wait_seconds`` passed, or ``deadline`` (``time.monotonic()``)
    came. ``record`` is the settled task the call answers with."""
    if not may_have_webhooks(runtime, request):
        return
    settings = runtime.settings
    end = min(time.monotonic() + settings.push_wait_seconds, deadline)
    delay = settings.poll_interval_seconds
    target = record.last_seq
    while True:
        try:
            progress = runtime.store.push_progress(record.scope, record.task_id)
        except Exception:
            logger.warning("could not read the task's push progress; answering", exc_info=True)
            return
        behind = sum(1 for marks in progress.values() if not marks.tried(target))
        if not behind:
            return
        remaining = end - time.monotonic()
        if remaining <= 0:
            logger.info(
                "answering before every push of the task was delivered or tried",
                extra={"task_id": record.task_id, "seq": target, "configs_behind": behind},
            )
            return
        runtime.store.wait_for_change(record.scope, record.task_id, record.version, min(delay, remaining))
        delay = min(delay * 1.5, _SLOWEST_POLL_SECONDS)
