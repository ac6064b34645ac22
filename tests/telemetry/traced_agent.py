"""An agent that traces its own step with the standard OpenTelemetry API, as a user's would."""

from __future__ import annotations

from opentelemetry import trace

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part


class TracedAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        with trace.get_tracer("my-agent").start_as_current_span("look things up"):
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.add_artifact([Part(text="found")], name="answer")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None
