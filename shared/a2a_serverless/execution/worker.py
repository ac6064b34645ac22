"""Runs one work item: claim the task, run the executor, make sure the task ends settled.

Lifecycle of a run (every step a conditional write through :func:`lifecycle.mutate`):

1. **Claim.** Only the work item whose message is the task's ``pending_message_id`` may start it:
   the claim moves it to ``running_message_id`` and the task to WORKING. A duplicate delivery finds
   nothing pending and does nothing, so the executor runs once per message.
2. **Run.** The executor's events are appended to the task's log as they come. A watcher polls the
   head for ``cancel_requested`` and, when set, calls the executor's ``cancel`` and stops it.
3. **Settle.** Whatever happened, the task leaves the run terminal or interrupted: an exception
   fails it with a generic message; returning early completes it; a cancel ends it CANCELED.

A redelivered item whose run was already claimed (the worker died: SQS only redelivers after the
visibility timeout, which is longer than the worker's timeout) fails the task with a clear message
rather than leaving it WORKING forever.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace

from ..errors import A2AError, InvalidAgentResponseError
from ..lifecycle import CANCELED_TEXT, apply_event, end_task, mutate, status_event
from ..models import Message, Role, SendMessageConfiguration, StreamResponse, Task, TaskState, TaskStatus, utc_now
from ..ports import Scope, TaskRecord, WorkItem
from ..runtime import Runtime
from .api import RequestContext
from .store_queue import StoreEventQueue

__all__ = ["process_work_item", "run_work_item"]

logger = logging.getLogger(__name__)

FAILED_TEXT = "The agent failed while working on this task."
INTERRUPTED_TEXT = "The agent's run was interrupted before it finished; please send the message again."
INCOMPLETE_TEXT = "The agent finished without reporting a result."
CANCEL_POLL_SECONDS = 0.25
CANCEL_GRACE_SECONDS = 5.0


def process_work_item(runtime: Runtime, item: WorkItem, *, receive_count: int = 1) -> None:
    """Synchronous entry point (the SQS handler calls this once per record)."""
    asyncio.run(run_work_item(runtime, item, receive_count=receive_count))


async def run_work_item(runtime: Runtime, item: WorkItem, *, receive_count: int = 1) -> None:
    scope = Scope(item.tenant, item.owner)
    # Load the executor before claiming: a bad import path raises ConfigError here, the item goes
    # back to SQS untouched, and after maxReceiveCount the dead-letter handler fails the task.
    executor = runtime.executor
    claimed = await asyncio.to_thread(_claim, runtime, scope, item, receive_count)
    if claimed is None:
        return
    before, user_message = claimed
    context = RequestContext(
        task_id=before.task.id,
        context_id=before.task.context_id,
        message=user_message,
        current_task=before.task,
        configuration=SendMessageConfiguration.model_validate_json(item.configuration) if item.configuration else None,
        metadata=json.loads(item.metadata) if item.metadata else {},
        tenant=scope.tenant,
        caller=scope.owner,
        requested_extensions=item.extensions,
        related_tasks=await asyncio.to_thread(_related_tasks, runtime, scope, user_message),
    )
    queue = StoreEventQueue(runtime, scope, before.task.id, item.message_id)
    execution = asyncio.create_task(executor.execute(context, queue))
    watcher = asyncio.create_task(_watch_for_cancel(runtime, scope, before.task.id))
    done, _ = await asyncio.wait({execution, watcher}, return_when=asyncio.FIRST_COMPLETED)
    if execution in done:
        watcher.cancel()
        exc = execution.exception()
        if exc is not None:
            _log_failure(exc, before.task.id)
            text = (
                "The agent produced an invalid response." if isinstance(exc, InvalidAgentResponseError) else FAILED_TEXT
            )
            await asyncio.to_thread(_settle, runtime, scope, item, TaskState.TASK_STATE_FAILED, text)
        else:
            await asyncio.to_thread(_settle, runtime, scope, item, None, INCOMPLETE_TEXT)
        return
    # Cancel requested: let the executor react, then stop it whatever it does.
    try:
        await asyncio.wait_for(executor.cancel(context, queue), CANCEL_GRACE_SECONDS)
    except (Exception, TimeoutError) as exc:
        _log_failure(exc, before.task.id)
    execution.cancel()
    await asyncio.gather(execution, return_exceptions=True)
    await asyncio.to_thread(_settle, runtime, scope, item, TaskState.TASK_STATE_CANCELED, "")


def _claim(
    runtime: Runtime, scope: Scope, item: WorkItem, receive_count: int
) -> tuple[TaskRecord, Message | None] | None:
    outcome: dict[str, TaskRecord] = {}

    def change(record: TaskRecord) -> tuple[TaskRecord, list[StreamResponse]] | None:
        task = record.task
        if task.status.state.is_terminal:
            return None
        if record.pending_message_id == item.message_id:
            outcome["before"] = record
            status = TaskStatus(state=TaskState.TASK_STATE_WORKING, timestamp=utc_now())
            event = status_event(task, status)
            new_task = apply_event(task, event, max_history=runtime.settings.max_history)
            return replace(record, task=new_task, pending_message_id="", running_message_id=item.message_id), [event]
        if record.running_message_id == item.message_id and receive_count > 1:
            outcome["interrupted"] = record
            return _settled(runtime, record, TaskState.TASK_STATE_FAILED, INTERRUPTED_TEXT)
        return None

    try:
        mutate(runtime.store, scope, item.task_id, change)
    except A2AError:
        logger.warning("work item for a task that no longer exists", extra={"task_id": item.task_id})
        return None
    if "before" not in outcome:
        if "interrupted" in outcome:
            logger.error("run was interrupted; task failed", extra={"task_id": item.task_id})
        else:
            logger.info("duplicate or stale work item skipped", extra={"task_id": item.task_id})
        return None
    before = outcome["before"]
    user_message = next((m for m in reversed(before.task.history) if m.message_id == item.message_id), None)
    return before, user_message


def _settled(
    runtime: Runtime, record: TaskRecord, state: TaskState, text: str
) -> tuple[TaskRecord, list[StreamResponse]]:
    ended, events = end_task(record, state, text, max_history=runtime.settings.max_history)
    return ended, list(events)


def _settle(runtime: Runtime, scope: Scope, item: WorkItem, state: TaskState | None, text: str) -> None:
    """Leave the task terminal or interrupted after a run. ``state`` None means "the executor
    returned": complete it, unless it already settled."""

    def change(record: TaskRecord) -> tuple[TaskRecord, list[StreamResponse]] | None:
        task = record.task
        current = task.status.state
        if current.is_interrupted and record.cancel_requested:
            # CancelTask marked the run, which then stopped for input before the watcher saw the
            # mark: the cancel was accepted, so it wins over the interruption.
            return _settled(runtime, record, TaskState.TASK_STATE_CANCELED, CANCELED_TEXT)
        if current.is_terminal or (state is None and current.is_interrupted):
            if record.running_message_id or record.cancel_requested:
                return replace(record, running_message_id="", cancel_requested=False), []
            return None
        if state is not None:
            return _settled(runtime, record, state, text)
        last = _last_agent_message(task)
        if last is not None:
            event = status_event(
                task, TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=last, timestamp=utc_now())
            )
            return replace(record, task=apply_event(task, event), running_message_id=""), [event]
        if task.artifacts:
            return _settled(runtime, record, TaskState.TASK_STATE_COMPLETED, "")
        return _settled(runtime, record, TaskState.TASK_STATE_FAILED, text)

    try:
        mutate(runtime.store, scope, item.task_id, change)
    except A2AError:
        logger.exception("could not settle task", extra={"task_id": item.task_id})


MAX_RELATED_TASKS = 20


def _related_tasks(runtime: Runtime, scope: Scope, message: Message | None) -> list[Task]:
    """The caller's tasks the message refers to (``referenceTaskIds``); unknown ones are skipped."""
    if message is None:
        return []
    records = (runtime.store.get_task(scope, task_id) for task_id in message.reference_task_ids[:MAX_RELATED_TASKS])
    return [record.task for record in records if record is not None]


def _last_agent_message(task: Task) -> Message | None:
    if task.history and task.history[-1].role is Role.ROLE_AGENT:
        return task.history[-1]
    return None


async def _watch_for_cancel(runtime: Runtime, scope: Scope, task_id: str) -> None:
    while True:
        await asyncio.sleep(CANCEL_POLL_SECONDS)
        record = await asyncio.to_thread(runtime.store.get_task, scope, task_id)
        if record is None or record.cancel_requested:
            return


def _log_failure(exc: BaseException, task_id: str) -> None:
    logger.error("executor failed", exc_info=exc, extra={"task_id": task_id})
