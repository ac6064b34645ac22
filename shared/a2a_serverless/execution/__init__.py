"""Running the user's agent: the executor API, the task updater and the worker."""

from .api import AgentExecutor, Event, EventQueue, RequestContext
from .updater import TaskUpdater

__all__ = ["AgentExecutor", "Event", "EventQueue", "RequestContext", "TaskUpdater"]
