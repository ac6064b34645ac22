"""Calling other A2A agents from an executor (``docs/executors.md``, "Calling other agents").

:class:`RemoteAgent` is another agent, by its card URL: its card picks the binding (JSON-RPC or
HTTP+JSON), calls carry only the credentials you configure (:mod:`.credentials`), time out, and are
retried without ever making a second remote task. :func:`delegate` hands it a message and relays
its events into our task (artifacts chunk by chunk, WORKING messages), cancels the remote task when
our run is canceled or out of time, and returns a :class:`Delegation` saying how it ended.

In queue mode the worker holds the run while the remote works (:mod:`.relay`). In durable mode, for
an executor with ``durable_steps``, nothing runs while it works: the remote's push (verified by the
token we gave it, :mod:`.hook`) or a poll at a durable wait's end resumes the run
(:mod:`a2a_serverless.durable.delegation`).

The names are imported on first use: the API's functions import :mod:`.hook` alone (the push
receiver), without the HTTP client the rest needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._common import Delegation, Outcome
    from .credentials import Credentials, api_key, bearer
    from .relay import delegate
    from .remote import RemoteAgent, RemoteAgentError

__all__ = [
    "Credentials",
    "Delegation",
    "Outcome",
    "RemoteAgent",
    "RemoteAgentError",
    "api_key",
    "bearer",
    "delegate",
]

_MODULES = {
    "Credentials": ".credentials",
    "api_key": ".credentials",
    "bearer": ".credentials",
    "Delegation": "._common",
    "Outcome": "._common",
    "delegate": ".relay",
    "RemoteAgent": ".remote",
    "RemoteAgentError": ".remote",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
