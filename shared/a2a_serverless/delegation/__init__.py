"""Calling other A2A agents from an executor (``docs/executors.md``, "Calling other agents").

:class:`RemoteAgent` is another agent, by its card URL: its card picks the binding (JSON-RPC or
HTTP+JSON), calls carry only the credentials you configure (:mod:`.credentials`), time out, and are
retried without ever making a second remote task. :func:`delegate` hands it a message and relays
its events into our task (artifacts chunk by chunk, WORKING messages), cancels the remote task when
our run is canceled or out of time, and returns a :class:`Delegation` saying how it ended.

In queue mode, the only one built so far, the worker holds the run while the remote works.
"""

from .credentials import Credentials, api_key, bearer
from .relay import Delegation, Outcome, delegate
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
