"""Framework adapters: an agent built on an agent framework, behind A2A (``docs/frameworks.md``).

Each adapter lives in its own module and imports its framework there, inside the module, so
importing this package costs nothing and needs no framework installed:

* :func:`.pydantic_ai.pydantic_ai_executor` (``pip install 'a2a-serverless[pydantic-ai]'``);
* :func:`.langgraph.langgraph_executor` (``pip install 'a2a-serverless[langgraph]'``);
* :func:`.strands.strands_executor` (``pip install 'a2a-serverless[strands]'``);
* :func:`.openai_agents.openai_agents_executor` (``pip install 'a2a-serverless[openai-agents]'``);
* :func:`.google_adk.adk_executor` (``pip install 'a2a-serverless[google-adk]'``).

What they share is here for new adapters to build on: :class:`FrameworkExecutor` (the bridge from
the events an adapter yields to the task), those events, :class:`Made` (the framework object, or
the user's factory called once) and :func:`approves` (the default reading of an approval reply).
"""

from ._bridge import FrameworkExecutor, Turn
from ._events import FrameworkEvent, Output, Pause, TextDelta, ToolCall, ToolResult, approves
from ._made import Made

__all__ = [
    "FrameworkEvent",
    "FrameworkExecutor",
    "Made",
    "Output",
    "Pause",
    "TextDelta",
    "ToolCall",
    "ToolResult",
    "Turn",
    "approves",
]
