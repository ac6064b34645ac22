"""The executor API: the one class users write.

Shaped like the reference SDK's (``a2a.server.agent_execution``) so existing executors port with
little change::

    class MyAgent(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.start_work()
            answer = await my_llm(context.get_user_input())
            await updater.add_artifact([Part(text=answer)], name="answer")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

``execute`` runs in the worker (an SQS-triggered Lambda), never in the request that sent the
message. Everything it emits goes through the event queue into the task's event log in DynamoDB,
so any instance can serve the task, its streams and its webhooks. If ``execute`` raises, the task
fails with a generic message (the exception is logged, never shown to callers). If it returns
without a terminal or interrupted state, the task completes (with the last agent message as its
status message when it sent one) so no task is left running.

The agent card can come from the class too, as ``card``: the card's fields in their JSON form (the
``A2A_CARD_FILE`` form), e.g. ``card = {"name": "Trip planner", "description": "...", "version": "1.2.0",
"skills": [{"id": "plan", "name": "Plan a trip", "description": "...", "tags": ["travel"]}]}``. A card
file, when given, wins (and the class is then not imported to render the card).
"""

from __future__ import annotations

import abc
import asyncio
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from ..json_types import Json, JsonValue
from ..models import (
    Message,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from .agent_state import AgentState

__all__ = ["AgentExecutor", "Event", "EventQueue", "PushWait", "RequestContext", "Steps"]

Event = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


class EventQueue(Protocol):
    async def enqueue_event(self, event: Event) -> None:
        """Persist ``event`` for the task (raises ``InvalidAgentResponseError`` for an event the
        task cannot take, e.g. anything after a terminal state)."""
        ...


class Steps:
    """The parts of a run an executor marks as steps (``context.steps``), for durable mode
    (``docs/durable-tasks.md``): there each step is checkpointed, so a run of several steps, each
    shorter than the function's timeout, outlives it, and a step that completed is never run again
    (nor are its events written twice) when the run goes on in a new invocation. Outside durable
    mode a step is a plain call and a sleep a plain sleep: an executor written with steps runs in
    both modes. A step's result must be JSON (it is what the checkpoint keeps), and the code
    between steps must do the same thing each time it runs (it runs again on replay).

    ``run`` takes a function without arguments, plain or ``async``; ``sleep`` waits (in durable
    mode, without a function running: an hour's sleep costs no compute)."""

    async def run(self, name: str, fn: Callable[[], JsonValue]) -> JsonValue:
        result = fn()
        if inspect.isawaitable(result):
            result = await result
        return result

    async def sleep(self, seconds: float, name: str) -> None:
        await asyncio.sleep(seconds)

    durable: ClassVar[bool] = False
    """True in durable mode, where :meth:`open_wait` waits with no function running."""
    public_url: str = ""
    """Our agent's public base URL, where a push can reach us ('' when unknown): durable mode."""

    async def open_wait(self, seconds: float, name: str, *, token_digest: str) -> PushWait:
        """A wait of at most ``seconds`` that a push can end early: the push receiver
        (``/_a2a/delegations/...``) ends it when the push carries the token whose SHA-256 (hex) is
        ``token_digest``. Durable mode only (delegation uses it: ``a2a_serverless.delegation``)."""
        raise NotImplementedError("a wait a push ends needs durable mode (A2A_EXECUTION_MODE=durable)")

    async def expect_push(self, token_digest: str, ref: str) -> None:
        """Record that pushes to the push receiver's reference ``ref`` (random, opaque), carrying
        the token whose SHA-256 (hex) is ``token_digest``, may come from now on (before any wait is
        open): the push receiver acknowledges them, and wakes the waits :meth:`open_wait` opens."""
        raise NotImplementedError("durable mode only")

    async def forget_push(self, ref: str) -> None:
        """The delegation that :meth:`expect_push` announced ended: ``ref`` stands for nothing any
        more (a push to it is answered as to any unknown reference)."""
        raise NotImplementedError("durable mode only")

    async def until_stopped(self) -> None:
        """After a wait CancelTask ended (:meth:`PushWait.result` said ``canceled``): wait for the
        run to be stopped, as it will be (the executor must not go on with its work)."""
        raise NotImplementedError("durable mode only")


class PushWait(Protocol):
    """A wait :meth:`Steps.open_wait` opened: already recorded on the task, so a push that comes
    from now on ends it; the caller may run steps before it awaits :meth:`result`."""

    async def result(self) -> Literal["push", "timeout", "canceled"]:
        """How it ended: a verified push, its time, or CancelTask."""
        ...


@dataclass
class RequestContext:
    """What the executor is asked to do, and for whom."""

    task_id: str
    context_id: str
    message: Message | None = None
    current_task: Task | None = None
    configuration: SendMessageConfiguration | None = None
    metadata: Json = field(default_factory=dict)
    tenant: str = ""
    caller: str = ""
    requested_extensions: tuple[str, ...] = ()
    related_tasks: list[Task] = field(default_factory=list)
    steps: Steps = field(default_factory=Steps)
    """Marks durable steps (see :class:`Steps`); plain calls outside durable mode."""
    state: AgentState | None = None
    """What the agent keeps between runs, scoped to ``tenant`` and ``caller``
    (:mod:`.agent_state`): given by the worker when the deployment stores agent state."""
    deadline: float | None = None
    """When the worker stops this run (``time.monotonic()``; None: no limit known): work that waits
    (a delegation, say) should end before it. Set by the worker; read it, do not change it."""

    def get_user_input(self, delimiter: str = "\n") -> str:
        """The text parts of the user's message, joined."""
        if self.message is None:
            return ""
        return delimiter.join(p.text for p in self.message.parts if p.text is not None)


class AgentExecutor(abc.ABC):
    durable_steps: ClassVar[bool] = False
    """True when ``execute`` marks its long work with ``context.steps``: in durable mode its turn
    then runs across invocations, step by step, instead of as one step bounded by the function's
    timeout (``docs/durable-tasks.md``)."""
    card: ClassVar[Mapping[str, JsonValue] | None] = None
    """This agent's card fields (name, description, version, skills, provider, iconUrl, ...) as JSON, or
    None. Read by the card functions, which import the class but never create it; checked there."""

    @abc.abstractmethod
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Do the work for ``context.message`` and report progress through ``event_queue``."""

    @abc.abstractmethod
    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Stop work on ``context.task_id``; typically emits a CANCELED status. The worker also
        cancels the running ``execute`` coroutine and makes sure the task ends CANCELED."""
