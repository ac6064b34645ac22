"""A delegation ends before the worker's deadline (``RequestContext.deadline``): our task fails
with the delegation's message naming the remote, not the worker's out-of-time one, and the remote
task is canceled."""

from __future__ import annotations

import json
import time

from delegation_servers import Agent

from a2a_serverless.config import Settings
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import Message, Part, Role, SendMessageConfiguration, SendMessageRequest, TaskState
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope
from a2a_serverless.transitions import OUT_OF_TIME_TEXT
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX
from testkit.queues import RecordingQueue


def test_a_delegation_stops_before_the_run_s_deadline(chores: Agent) -> None:
    # Given our delegating agent's run, whose invocation has 6 seconds left (the worker stops it
    # 1.5 s before the end), and a remote that works until it is canceled; no limit of our own
    queue = RecordingQueue()
    runtime = build_runtime(Settings(store="memory", executor="relay_agents:DelegatingAgent"), queue=queue)
    orders = json.dumps({"to": chores.card_url, "send": "hang", "limit": None})
    request = SendMessageRequest(
        message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text=orders)]),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    task_id = submit_message(request, CTX, runtime).task.id
    ends_at = time.monotonic() + 6.0

    # When the worker runs it
    process_work_item(runtime, queue.items[0], remaining_ms=lambda: max(0, int((ends_at - time.monotonic()) * 1000)))

    # Then the delegation gave up first: our task failed with its message, naming the remote
    record = runtime.store.get_task(Scope("", "alice"), task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_FAILED
    assert record.task.status.message is not None
    text = record.task.status.message.parts[0].text or ""
    assert text != OUT_OF_TIME_TEXT
    assert "'chore agent' did not finish within the time it was given" in text
    # And the remote's task was canceled
    hung = [t for t in chores.tasks() if t["status"]["state"] != "TASK_STATE_COMPLETED"]
    assert hung
    for each in hung:
        chores.wait_for(each["id"], "TASK_STATE_CANCELED")
