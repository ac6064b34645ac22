"""What an executor's RequestContext holds: the request's configuration, metadata and requested
extensions travel with the work item (through its JSON, as over SQS), and referenced tasks are
resolved in the caller's scope."""

from __future__ import annotations

from typing import Any, ClassVar

from a2a_serverless.adapters.memory_store import MemoryTaskStore
from a2a_serverless.auth import Principal
from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.execution.worker import process_work_item
from a2a_serverless.models import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a_serverless.operations import CallContext
from a2a_serverless.operations.send_message import submit_message
from a2a_serverless.ports import WorkItem
from a2a_serverless.wiring import build_runtime


class RecordingExecutor(AgentExecutor):
    seen: ClassVar[list[RequestContext]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        RecordingExecutor.seen.append(context)
        await TaskUpdater(event_queue, context.task_id, context.context_id).complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class SqsLikeQueue:
    """Keeps each item as the JSON SQS would carry."""

    def __init__(self) -> None:
        self.bodies: list[str] = []

    def enqueue(self, item: WorkItem) -> None:
        self.bodies.append(item.to_json())


def test_the_executor_sees_the_requests_configuration_metadata_extensions_and_related_tasks() -> None:
    queue = SqsLikeQueue()
    settings = Settings(store="memory", executor=f"{__name__}:RecordingExecutor", allow_private_webhooks=True)
    runtime = build_runtime(settings, store=MemoryTaskStore(), queue=queue)
    alice = CallContext(principal=Principal("alice", authenticated=True), extensions=("urn:ext:b", "urn:ext:a"))
    bob = CallContext(principal=Principal("bob", authenticated=True))

    def send(ctx: CallContext, text: str, **request: Any) -> str:
        message = Message(
            message_id=text, role=Role.ROLE_USER, parts=[Part(text=text)], **request.pop("message_fields", {})
        )
        return submit_message(SendMessageRequest(message=message, **request), ctx, runtime).task.id

    # Given an earlier task of alice's and one of bob's
    earlier = send(alice, "earlier")
    bobs = send(bob, "bobs")
    # When alice sends a message with a configuration, request metadata, extensions and references
    configuration = SendMessageConfiguration(
        accepted_output_modes=["text/plain"],
        history_length=3,
        return_immediately=True,
        task_push_notification_config=TaskPushNotificationConfig(url="http://127.0.0.1:9/hook", token="sekrit"),
    )
    send(
        alice,
        "now",
        configuration=configuration,
        metadata={"trace": "abc", "n": 1},
        message_fields={"reference_task_ids": [earlier, bobs, "no-such-task"]},
    )
    RecordingExecutor.seen.clear()
    process_work_item(runtime, WorkItem.from_json(queue.bodies[-1]))

    # Then the executor's context carries them; bob's task and the unknown id are not there
    (context,) = RecordingExecutor.seen
    assert context.configuration is not None
    assert context.configuration.accepted_output_modes == ["text/plain"]
    assert context.configuration.history_length == 3
    assert context.configuration.task_push_notification_config is None  # credentials stay off the queue
    assert "sekrit" not in queue.bodies[-1]
    assert context.metadata == {"trace": "abc", "n": 1}
    assert context.requested_extensions == ("urn:ext:a", "urn:ext:b")
    assert [t.id for t in context.related_tasks] == [earlier]
    assert context.caller == "alice"
