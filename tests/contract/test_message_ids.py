"""A messageId names one message: an identical re-send is answered from the first, a reuse of the
id for anything else is InvalidParams and stores nothing; ``A2A_IDEMPOTENT_SEND=false`` makes every
SendMessage a new message (as in the reference servers).

Through the operations, on every store of the contract suite (``store`` fixture: memory, DynamoDB
on moto, the local stack's moto)."""

from __future__ import annotations

import pytest

from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.errors import InvalidParamsError
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_serverless.operations import CallContext
from a2a_serverless.operations.list_tasks import list_tasks
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import Scope, TaskStore, WorkItem
from a2a_serverless.runtime import Runtime
from a2a_serverless.wiring import build_runtime

CTX = CallContext(principal=Principal("alice", authenticated=True))
SCOPE = Scope("", "alice")
HOOK = "https://example.com/hook"


class _Queue:
    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def enqueue(self, item: WorkItem) -> None:
        self.items.append(item)


def _runtime(store: TaskStore, queue: _Queue, *, idempotent: bool = True) -> Runtime:
    settings = Settings(store="memory", push_notifications=True, idempotent_send=idempotent)
    return build_runtime(settings, store=store, queue=queue)


def _request(
    text: str, message_id: str, task_id: str = "", *, config: SendMessageConfiguration | None = None
) -> SendMessageRequest:
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)
    return SendMessageRequest(
        message=message, configuration=config or SendMessageConfiguration(return_immediately=True)
    )


def _task_count(runtime: Runtime) -> int:
    return list_tasks(ListTasksRequest(), CTX, runtime).total_size


def _assert_reused(info: pytest.ExceptionInfo[InvalidParamsError], message_id: str) -> None:
    assert message_id in info.value.message
    assert [v.field for v in info.value.violations] == ["message.messageId"]


def test_an_identical_resend_returns_the_same_task_and_runs_nothing(store: TaskStore) -> None:
    queue = _Queue()
    runtime = _runtime(store, queue)
    first = submit_message(_request("hello", "m-1"), CTX, runtime)
    process_work_item(runtime, queue.items[-1])
    queued = len(queue.items)

    again = submit_message(_request("hello", "m-1"), CTX, runtime)

    assert again.task.id == first.task.id
    assert not again.accepted
    assert len(queue.items) == queued
    assert again.task.status.state is TaskState.TASK_STATE_COMPLETED
    assert _task_count(runtime) == 1
    # How the answer is shaped may change between attempts (a blocking retry, a shorter history)
    reshaped = SendMessageConfiguration(return_immediately=False, history_length=0)
    assert submit_message(_request("hello", "m-1", config=reshaped), CTX, runtime).task.id == first.task.id


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param(_request("something else", "m-1"), id="other-text"),
        pytest.param(
            _request("hello", "m-1", config=SendMessageConfiguration(accepted_output_modes=["application/json"])),
            id="other-output-modes",
        ),
        pytest.param(
            _request(
                "hello",
                "m-1",
                config=SendMessageConfiguration(
                    return_immediately=True,
                    task_push_notification_config=TaskPushNotificationConfig(url=HOOK, id="late"),
                ),
            ),
            id="added-push-config",
        ),
    ],
)
def test_a_reused_message_id_with_a_different_request_is_invalid_params_and_stores_nothing(
    store: TaskStore, changed: SendMessageRequest
) -> None:
    queue = _Queue()
    runtime = _runtime(store, queue)
    first = submit_message(_request("hello", "m-1"), CTX, runtime)
    before = store.get_task(SCOPE, first.task.id)
    queued = len(queue.items)

    with pytest.raises(InvalidParamsError) as info:
        submit_message(changed, CTX, runtime)

    _assert_reused(info, "m-1")
    assert len(queue.items) == queued
    assert _task_count(runtime) == 1
    after = store.get_task(SCOPE, first.task.id)
    assert after is not None
    assert before is not None
    assert after.version == before.version
    assert store.list_push_configs(SCOPE, first.task.id) == ([], "")


def test_a_continuation_resent_identically_is_not_run_again_and_one_changed_is_refused(store: TaskStore) -> None:
    queue = _Queue()
    runtime = _runtime(store, queue)
    task_id = submit_message(_request("ask me", "m-1"), CTX, runtime).task.id
    process_work_item(runtime, queue.items[-1])
    submit_message(_request("Ann", "m-2", task_id), CTX, runtime)
    process_work_item(runtime, queue.items[-1])
    done = store.get_task(SCOPE, task_id)
    assert done is not None
    queued = len(queue.items)

    again = submit_message(_request("Ann", "m-2", task_id), CTX, runtime)
    assert not again.accepted
    assert len(queue.items) == queued

    with pytest.raises(InvalidParamsError) as info:
        submit_message(_request("Bob", "m-2", task_id), CTX, runtime)
    _assert_reused(info, "m-2")
    after = store.get_task(SCOPE, task_id)
    assert after is not None
    assert after.version == done.version


def test_a_message_id_of_one_task_cannot_continue_another(store: TaskStore) -> None:
    queue = _Queue()
    runtime = _runtime(store, queue)
    other = submit_message(_request("hello", "m-other"), CTX, runtime).task.id
    asking = submit_message(_request("ask me", "m-1"), CTX, runtime).task.id
    for item in list(queue.items):
        process_work_item(runtime, item)
    before = store.get_task(SCOPE, asking)
    assert before is not None
    assert before.state is TaskState.TASK_STATE_INPUT_REQUIRED

    # The id of the other task's first message, as an answer to this one: refused, nothing written
    with pytest.raises(InvalidParamsError) as info:
        submit_message(_request("Ann", "m-other", asking), CTX, runtime)

    _assert_reused(info, "m-other")
    after = store.get_task(SCOPE, asking)
    assert after is not None
    assert (after.version, after.state) == (before.version, TaskState.TASK_STATE_INPUT_REQUIRED)
    assert store.get_task(SCOPE, other) is not None
    # and a first message reusing an answer's id is refused the same way
    submit_message(_request("Ann", "m-answer", asking), CTX, runtime)
    with pytest.raises(InvalidParamsError):
        submit_message(_request("Ann", "m-answer"), CTX, runtime)


def test_without_idempotency_every_send_is_a_new_message(store: TaskStore) -> None:
    queue = _Queue()
    runtime = _runtime(store, queue, idempotent=False)

    first = submit_message(_request("ask me", "same"), CTX, runtime)
    second = submit_message(_request("hello", "same"), CTX, runtime)

    assert first.accepted
    assert second.accepted
    assert first.task.id != second.task.id
    assert store.find_message(SCOPE, "same") is None
    for item in list(queue.items):
        process_work_item(runtime, item)
    # Two turns of one task with one messageId: both run (their queue items differ)
    answer = submit_message(_request("Ann", "same", first.task.id), CTX, runtime)
    assert answer.accepted
    item = queue.items[-1]
    assert item.deduplication_id != queue.items[0].deduplication_id
    process_work_item(runtime, item)
    record = store.get_task(SCOPE, first.task.id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
    assert [m.message_id for m in record.task.history].count("same") == 2
