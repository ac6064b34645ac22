"""A messageId: an identical re-send is answered from the first and runs nothing; a reuse of the id
for anything else is processed as the new message it is (a new task or turn, logged once at INFO),
or, with ``A2A_MESSAGE_ID_REUSE=reject``, InvalidParams that stores nothing;
``A2A_IDEMPOTENT_SEND=false`` makes every SendMessage a new message (as in the reference servers).
An ``Idempotency-Key`` header keys its request instead, per caller: the same request is a re-send,
another one InvalidParams naming the header.

Through the operations, on every store of the contract suite (``store`` fixture: memory, DynamoDB
on moto, the local stack's moto)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest

from a2a_serverless.adapters import DynamoDBTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.errors import InvalidParamsError, UnsupportedOperationError
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    CancelTaskRequest,
    GetTaskRequest,
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
from a2a_serverless.operations.cancel_task import cancel_task
from a2a_serverless.operations.get_task import get_task
from a2a_serverless.operations.list_tasks import list_tasks
from a2a_serverless.operations.send_message import Submitted, request_fingerprint, submit_message
from a2a_serverless.ports import Scope, SendKey, TaskStore
from a2a_serverless.runtime import Runtime
from a2a_serverless.wiring import build_runtime
from testkit.calls import CTX, SCOPE
from testkit.queues import RecordingQueue

T = TypeVar("T")
HOOK = "https://example.com/hook"


def _runtime(store: TaskStore, queue: RecordingQueue, *, idempotent: bool = True, reuse: str = "new") -> Runtime:
    settings = Settings(store="memory", push_notifications=True, idempotent_send=idempotent, message_id_reuse=reuse)
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
    queue = RecordingQueue()
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


_CHANGED = [
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
]


def _reuse_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "processed as a new message" in r.getMessage()]


@pytest.mark.parametrize("changed", _CHANGED)
def test_a_reused_message_id_with_a_different_request_is_a_new_message(
    store: TaskStore, changed: SendMessageRequest, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a task made from message m-1, run
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = submit_message(_request("hello", "m-1"), CTX, runtime)
    process_work_item(runtime, queue.items[-1])

    # When m-1 is sent again with something else
    with caplog.at_level(logging.INFO, logger="a2a_serverless"):
        second = submit_message(changed, CTX, runtime)

    # Then it is a new task of its own, queued and run, and one INFO line says so
    assert second.accepted
    assert second.task.id != first.task.id
    assert [i.task_id for i in queue.items] == [first.task.id, second.task.id]
    process_work_item(runtime, queue.items[-1])
    done = store.get_task(SCOPE, second.task.id)
    assert done is not None
    assert done.state is TaskState.TASK_STATE_COMPLETED
    assert _task_count(runtime) == 2
    (line,) = _reuse_lines(caplog)
    assert line.levelno == logging.INFO
    assert "m-1" in line.getMessage()
    # and each of the two is a re-send of itself from now on: nothing new, no other line
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="a2a_serverless"):
        assert submit_message(changed, CTX, runtime).task.id == second.task.id
        assert submit_message(_request("hello", "m-1"), CTX, runtime).task.id == first.task.id
    assert len(queue.items) == 2
    assert _reuse_lines(caplog) == []


@pytest.mark.parametrize("changed", _CHANGED)
def test_with_reuse_rejected_a_reused_message_id_is_invalid_params_and_stores_nothing(
    store: TaskStore, changed: SendMessageRequest
) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue, reuse="reject")
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


def _asking(runtime: Runtime, queue: RecordingQueue, message_id: str = "m-1") -> str:
    """A task of the demo agent waiting for a name."""
    task_id = submit_message(_request("ask me", message_id), CTX, runtime).task.id
    process_work_item(runtime, queue.items[-1])
    return task_id


def test_a_continuation_resent_identically_is_not_run_again(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    task_id = _asking(runtime, queue)
    submit_message(_request("Ann", "m-2", task_id), CTX, runtime)
    process_work_item(runtime, queue.items[-1])
    done = store.get_task(SCOPE, task_id)
    assert done is not None
    queued = len(queue.items)

    again = submit_message(_request("Ann", "m-2", task_id), CTX, runtime)

    assert not again.accepted
    assert again.task.id == task_id
    assert len(queue.items) == queued
    after = store.get_task(SCOPE, task_id)
    assert after is not None
    assert after.version == done.version


def test_an_answer_reusing_the_question_s_message_id_is_a_new_turn(store: TaskStore) -> None:
    # Given the demo agent asking for a name after message m-1 (as clients that reuse one id do)
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    task_id = _asking(runtime, queue)

    # When the answer comes with the same messageId
    answer = submit_message(_request("Ann", "m-1", task_id), CTX, runtime)

    # Then it is the task's next turn, run once, and a retry of it runs nothing more
    assert answer.accepted
    assert answer.task.id == task_id
    process_work_item(runtime, queue.items[-1])
    done = store.get_task(SCOPE, task_id)
    assert done is not None
    assert done.state is TaskState.TASK_STATE_COMPLETED
    assert [a.parts[0].text for a in done.task.artifacts] == ["Nice to meet you, Ann!"]
    queued = len(queue.items)
    again = submit_message(_request("Ann", "m-1", task_id), CTX, runtime)
    assert (again.accepted, again.task.id, len(queue.items)) == (False, task_id, queued)
    # while the task's first message, sent again as it was, is a new task: the client answered the
    # first, so it had its answer (an answer under the question's id counts as one)
    assert submit_message(_request("ask me", "m-1"), CTX, runtime).task.id != task_id
    # and a third message with the id, to a task that takes none, gets the task's own error
    with pytest.raises(UnsupportedOperationError):
        submit_message(_request("Bob", "m-1", task_id), CTX, runtime)


# ----------------------------------------------- the same message again, after its task was answered


def _answered(runtime: Runtime, queue: RecordingQueue, how: str) -> str:
    """A task of the demo agent asking for a name (first message "ask me", m-1), which the client
    then answers (``continued``: a message of its own; ``canceled``: CancelTask) or only reads."""
    task_id = _asking(runtime, queue)
    if how == "continued":
        submit_message(_request("Ann", "m-2", task_id), CTX, runtime)
        process_work_item(runtime, queue.items[-1])
    elif how == "canceled":
        cancel_task(CancelTaskRequest(id=task_id), CTX, runtime)
    else:
        assert get_task(GetTaskRequest(id=task_id), CTX, runtime).id == task_id
    return task_id


@pytest.mark.parametrize("how", ["continued", "canceled"])
def test_the_same_message_again_after_its_task_was_answered_is_a_new_task(
    store: TaskStore, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a task whose first message the client had the answer to: it continued or canceled the
    # task, which takes the task's id (the official TCK makes each prerequisite task so)
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = _answered(runtime, queue, how)
    first_before = store.get_task(SCOPE, first)
    queued = len(queue.items)

    # When the same message comes again under its messageId
    with caplog.at_level(logging.INFO, logger="a2a_serverless"):
        again = submit_message(_request("ask me", "m-1"), CTX, runtime)

    # Then it is a new task, queued and run once, the first untouched, and one INFO line says so
    assert again.accepted
    assert again.task.id != first
    assert len(queue.items) == queued + 1
    process_work_item(runtime, queue.items[-1])
    second = store.get_task(SCOPE, again.task.id)
    assert second is not None
    assert second.state is TaskState.TASK_STATE_INPUT_REQUIRED
    assert store.get_task(SCOPE, first) == first_before
    assert _task_count(runtime) == 2
    (line,) = [r for r in caplog.records if "sent again after its task" in r.getMessage()]
    assert line.levelno == logging.INFO
    assert first in line.getMessage()
    # and the key now names the new task: its retries are retries of it, nothing run again
    retry = submit_message(_request("ask me", "m-1"), CTX, runtime)
    assert (retry.accepted, retry.task.id, len(queue.items)) == (False, again.task.id, queued + 1)


def test_the_same_message_again_after_its_task_was_only_read_is_a_retry(store: TaskStore) -> None:
    # A read gives the task's id too, but leaves no mark (a read never writes): still a retry
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = _answered(runtime, queue, "read")
    queued = len(queue.items)

    again = submit_message(_request("ask me", "m-1"), CTX, runtime)

    assert (again.accepted, again.task.id, len(queue.items)) == (False, first, queued)
    assert again.task.status.state is TaskState.TASK_STATE_INPUT_REQUIRED


@pytest.mark.parametrize(
    ("reuse", "header"),
    [pytest.param("reject", "", id="reuse-rejected"), pytest.param("new", "k-1", id="idempotency-key")],
)
def test_a_strict_key_keeps_answering_with_the_first_task_after_it_was_answered(
    store: TaskStore, reuse: str, header: str
) -> None:
    # One messageId, one message (A2A_MESSAGE_ID_REUSE=reject); one Idempotency-Key, one request
    ctx = _keyed(header) if header else CTX
    queue = RecordingQueue()
    runtime = _runtime(store, queue, reuse=reuse)
    first = submit_message(_request("ask me", "m-1"), ctx, runtime).task.id
    process_work_item(runtime, queue.items[-1])
    submit_message(_request("Ann", "m-2", first), CTX, runtime)
    process_work_item(runtime, queue.items[-1])
    queued = len(queue.items)

    again = submit_message(_request("ask me", "m-1"), ctx, runtime)

    assert (again.accepted, again.task.id, len(queue.items)) == (False, first, queued)
    assert again.task.status.state is TaskState.TASK_STATE_COMPLETED


def test_concurrent_sends_of_the_same_message_after_its_task_was_answered_make_one_new_task(
    store: TaskStore,
) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = _answered(runtime, queue, "continued")
    queued = len(queue.items)

    sent = _at_once(6, lambda _: submit_message(_request("ask me", "m-1"), CTX, runtime))

    # One new task, taken by the one send that moved the key; the others are its retries
    assert len({s.task.id for s in sent}) == 1
    assert sent[0].task.id != first
    assert [s.accepted for s in sent].count(True) == 1
    assert len(queue.items) >= queued + 1
    _run_all(runtime, queue)  # every queued item: the duplicates' claims find nothing to run
    second = store.get_task(SCOPE, sent[0].task.id)
    assert second is not None
    assert second.state is TaskState.TASK_STATE_INPUT_REQUIRED
    assert [m.role for m in second.task.history].count(Role.ROLE_USER) == 1
    assert _task_count(runtime) == 2


def test_with_reuse_rejected_a_continuation_reusing_a_message_id_is_refused(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue, reuse="reject")
    task_id = _asking(runtime, queue)
    before = store.get_task(SCOPE, task_id)
    assert before is not None

    with pytest.raises(InvalidParamsError) as info:
        submit_message(_request("Ann", "m-1", task_id), CTX, runtime)

    _assert_reused(info, "m-1")
    after = store.get_task(SCOPE, task_id)
    assert after is not None
    assert (after.version, after.state) == (before.version, TaskState.TASK_STATE_INPUT_REQUIRED)


@pytest.mark.parametrize("reuse", ["new", "reject"])
def test_a_message_id_of_one_task_continuing_another(store: TaskStore, reuse: str) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue, reuse=reuse)
    other = submit_message(_request("hello", "m-other"), CTX, runtime).task.id
    asking = _asking(runtime, queue)
    for item in list(queue.items):
        process_work_item(runtime, item)
    before = store.get_task(SCOPE, asking)
    assert before is not None

    answer = _request("Ann", "m-other", asking)
    if reuse == "reject":
        with pytest.raises(InvalidParamsError) as info:
            submit_message(answer, CTX, runtime)
        _assert_reused(info, "m-other")
        after = store.get_task(SCOPE, asking)
        assert after is not None
        assert (after.version, after.state) == (before.version, TaskState.TASK_STATE_INPUT_REQUIRED)
        # and a first message reusing an answer's id is refused the same way
        submit_message(_request("Ann", "m-answer", asking), CTX, runtime)
        with pytest.raises(InvalidParamsError):
            submit_message(_request("Ann", "m-answer"), CTX, runtime)
        return
    # The id of the other task's first message, as an answer to this one: this task's next turn
    assert submit_message(answer, CTX, runtime).accepted
    process_work_item(runtime, queue.items[-1])
    after = store.get_task(SCOPE, asking)
    assert after is not None
    assert after.state is TaskState.TASK_STATE_COMPLETED
    assert store.get_task(SCOPE, other) is not None
    assert submit_message(_request("hello", "m-other"), CTX, runtime).task.id == other


def test_without_idempotency_every_send_is_a_new_message(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue, idempotent=False)

    first = submit_message(_request("ask me", "same"), CTX, runtime)
    second = submit_message(_request("hello", "same"), CTX, runtime)

    assert first.accepted
    assert second.accepted
    assert first.task.id != second.task.id
    assert store.find_key(SCOPE, SendKey.message("same")) is None
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


# ------------------------------------------------------------------------------ concurrent sends


def _at_once(count: int, send: Callable[[int], T]) -> list[T]:
    """``send(n)`` for n in range(count), on as many threads, released together."""
    start = threading.Barrier(count)

    def one(n: int) -> T:
        start.wait()
        return send(n)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def test_a_message_whose_first_create_died_after_its_key_makes_one_task(store: TaskStore) -> None:
    # Given a create of m-1 that died between its send key and its head (DynamoDB writes them one
    # after the other; in memory a create is one step, so its key is written here alone)
    if not isinstance(store, DynamoDBTaskStore):
        pytest.skip("a create of the memory store is one step: it cannot die halfway")
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    fingerprint = request_fingerprint(_request("hello", "m-1"))
    store._table.write([store._key_put(SCOPE, SendKey.message("m-1", fingerprint), "ghost", None)])

    # When the client sends it again, from six threads at once (its retries)
    sent = _at_once(6, lambda _: submit_message(_request("hello", "m-1"), CTX, runtime))

    # Then the dead create is abandoned for good, and one new task answers them all and runs once
    assert len({s.task.id for s in sent}) == 1
    assert sent[0].task.id != "ghost"
    assert [s.accepted for s in sent].count(True) == 1
    assert store.get_task(SCOPE, "ghost") is None
    assert store.abandon_create(SCOPE, "ghost") is True
    _run_all(runtime, queue)
    assert _echoes(store, sent[0].task.id) == ["Echo: hello"]
    assert _task_count(runtime) == 1


def _run_all(runtime: Runtime, queue: RecordingQueue) -> None:
    for item in list(queue.items):
        process_work_item(runtime, item)


def _echoes(store: TaskStore, task_id: str) -> list[str]:
    record = store.get_task(SCOPE, task_id)
    assert record is not None
    assert record.state is TaskState.TASK_STATE_COMPLETED
    return [p.text for a in record.task.artifacts for p in a.parts]


def test_concurrent_identical_sends_make_one_task_run_once(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)

    sent = _at_once(6, lambda _: submit_message(_request("hello", "m-1"), CTX, runtime))

    assert len({s.task.id for s in sent}) == 1
    assert [s.accepted for s in sent].count(True) == 1
    _run_all(runtime, queue)  # every queued item: the duplicates' claims find nothing to run
    assert _echoes(store, sent[0].task.id) == ["Echo: hello"]
    assert _task_count(runtime) == 1


def test_concurrent_sends_of_one_message_id_with_different_messages_each_run_once(
    store: TaskStore, caplog: pytest.LogCaptureFixture
) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    texts = [f"text {n}" for n in range(4)]

    with caplog.at_level(logging.INFO, logger="a2a_serverless"):
        sent = _at_once(4, lambda n: submit_message(_request(texts[n], "m-1"), CTX, runtime))

    # Nothing lost: four tasks, each of its own message, each run once
    assert all(s.accepted for s in sent)
    assert len({s.task.id for s in sent}) == 4
    _run_all(runtime, queue)
    assert [_echoes(store, s.task.id) for s in sent] == [[f"Echo: {t}"] for t in texts]
    assert len(_reuse_lines(caplog)) == 3  # all but the first to write the messageId's key


def test_concurrent_identical_reuses_of_a_message_id_make_one_new_task(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = submit_message(_request("hello", "m-1"), CTX, runtime)

    sent = _at_once(6, lambda _: submit_message(_request("other", "m-1"), CTX, runtime))

    assert len({s.task.id for s in sent}) == 1
    assert sent[0].task.id != first.task.id
    assert [s.accepted for s in sent].count(True) == 1
    _run_all(runtime, queue)
    assert _echoes(store, sent[0].task.id) == ["Echo: other"]
    assert _echoes(store, first.task.id) == ["Echo: hello"]
    assert _task_count(runtime) == 2


def test_concurrent_identical_answers_reusing_a_message_id_make_one_turn(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    task_id = _asking(runtime, queue)

    sent = _at_once(4, lambda _: submit_message(_request("Ann", "m-1", task_id), CTX, runtime))

    assert {s.task.id for s in sent} == {task_id}
    assert [s.accepted for s in sent].count(True) == 1
    _run_all(runtime, queue)
    assert _echoes(store, task_id) == ["Nice to meet you, Ann!"]


# ------------------------------------------------------------------------------ Idempotency-Key


def _keyed(key: str, owner: str = "alice", tenant: str = "") -> CallContext:
    return CallContext(principal=Principal(owner, authenticated=True), tenant=tenant, idempotency_key=key)


def _assert_key_reused(info: pytest.ExceptionInfo[InvalidParamsError], key: str) -> None:
    assert "Idempotency-Key" in info.value.message
    assert key in info.value.message
    assert [v.field for v in info.value.violations] == ["Idempotency-Key"]


@pytest.mark.parametrize("idempotent", [True, False], ids=["message-ids-too", "message-ids-off"])
def test_the_same_key_and_request_is_the_first_task_and_runs_nothing(store: TaskStore, idempotent: bool) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue, idempotent=idempotent)
    first = submit_message(_request("hello", "m-1"), _keyed("k-1"), runtime)
    process_work_item(runtime, queue.items[-1])

    again = submit_message(_request("hello", "m-1"), _keyed(' "k-1" '), runtime)  # also as an sf-string

    assert (again.accepted, again.task.id, len(queue.items)) == (False, first.task.id, 1)
    assert again.task.status.state is TaskState.TASK_STATE_COMPLETED


@pytest.mark.parametrize("changed", [*_CHANGED, pytest.param(_request("hello", "m-2"), id="other-message-id")])
def test_the_same_key_with_another_request_is_invalid_params_naming_the_header(
    store: TaskStore, changed: SendMessageRequest
) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = submit_message(_request("hello", "m-1"), _keyed("k-1"), runtime)
    before = store.get_task(SCOPE, first.task.id)

    with pytest.raises(InvalidParamsError) as info:
        submit_message(changed, _keyed("k-1"), runtime)

    _assert_key_reused(info, "k-1")
    assert (len(queue.items), _task_count(runtime)) == (1, 1)
    assert store.get_task(SCOPE, first.task.id) == before


def test_a_key_names_a_request_of_its_caller_only(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = build_runtime(
        Settings(store="memory", push_notifications=True, tenants=("", "acme")), store=store, queue=queue
    )
    ids = {
        submit_message(_request("hello", "m-1"), _keyed("k-1", owner, tenant), runtime).task.id
        for owner, tenant in (("alice", ""), ("bob", ""), ("alice", "acme"))
    }
    assert len(ids) == 3
    assert store.find_key(Scope("acme", "alice"), SendKey.header("k-1")) is not None


def test_the_key_de_duplicates_the_request_not_its_message_id(store: TaskStore) -> None:
    # A new key says "a new request": the same message under another key is a new task, while the
    # message re-sent without a key is de-duplicated by its messageId, as ever (the header's
    # request wrote no messageId key)
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    first = submit_message(_request("hello", "m-1"), _keyed("k-1"), runtime)
    second = submit_message(_request("hello", "m-1"), _keyed("k-2"), runtime)
    third = submit_message(_request("hello", "m-1"), CTX, runtime)
    assert len({first.task.id, second.task.id, third.task.id}) == 3
    assert submit_message(_request("hello", "m-1"), CTX, runtime).task.id == third.task.id


def test_a_keyed_answer_resent_is_not_run_again_and_the_key_with_another_answer_is_refused(
    store: TaskStore,
) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)
    task_id = _asking(runtime, queue)
    submit_message(_request("Ann", "m-2", task_id), _keyed("k-answer"), runtime)
    process_work_item(runtime, queue.items[-1])
    queued = len(queue.items)

    again = submit_message(_request("Ann", "m-2", task_id), _keyed("k-answer"), runtime)
    assert (again.accepted, again.task.id, len(queue.items)) == (False, task_id, queued)
    with pytest.raises(InvalidParamsError) as info:
        submit_message(_request("Bob", "m-2", task_id), _keyed("k-answer"), runtime)
    _assert_key_reused(info, "k-answer")


@pytest.mark.parametrize("header", ["", "  ", '""', "x" * 257, "caf\u00e9", "a\tb"])
def test_a_malformed_key_is_invalid_params_naming_the_header(store: TaskStore, header: str) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)

    with pytest.raises(InvalidParamsError) as info:
        submit_message(_request("hello", "m-1"), _keyed(header), runtime)

    assert [v.field for v in info.value.violations] == ["Idempotency-Key"]
    assert (queue.items, _task_count(runtime)) == ([], 0)


def test_concurrent_requests_under_one_key_make_one_task_or_are_refused(store: TaskStore) -> None:
    queue = RecordingQueue()
    runtime = _runtime(store, queue)

    same = _at_once(4, lambda _: submit_message(_request("hello", "m-1"), _keyed("k-1"), runtime))
    assert len({s.task.id for s in same}) == 1
    assert [s.accepted for s in same].count(True) == 1

    def other(n: int) -> Submitted | InvalidParamsError:
        try:
            return submit_message(_request(f"text {n}", "m-1"), _keyed("k-2"), runtime)
        except InvalidParamsError as exc:
            return exc

    outcomes = _at_once(4, other)
    accepted = [o for o in outcomes if isinstance(o, Submitted)]
    assert len(accepted) == 1  # the first to write the key; the others are told, none is lost silently
    assert all("Idempotency-Key" in o.message for o in outcomes if isinstance(o, InvalidParamsError))
    _run_all(runtime, queue)
    assert _task_count(runtime) == 2
