"""The ``DurableRuns`` port: starts and resumes the durable execution that runs a task
(``A2A_EXECUTION_MODE=durable``, the mode of :mod:`a2a_serverless.durable`; see
``docs/durable-tasks.md``).

On AWS this is Lambda's durable-execution API (:mod:`a2a_serverless.adapters.lambda_durable`);
locally and in tests, the official local runner of durable executions
(:mod:`a2a_serverless_dev.local_durable`).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["DurableRuns"]


class DurableRuns(Protocol):
    def start(self, name: str, payload: str) -> None:
        """Start the durable execution called ``name`` with ``payload`` (JSON). Starting a name
        that exists is harmless: the execution that has it goes on, nothing else starts."""
        ...

    def resume(self, callback_id: str, payload: str) -> None:
        """Complete the callback an execution waits on, with ``payload`` (JSON) as its result. A
        callback already completed is left as it is (a re-send delivers nothing twice)."""
        ...

    def abandon(self, callback_id: str, reason: str) -> None:
        """Fail the callback an execution waits on (the task ended without it: canceled); the
        execution wakes and ends. A callback already completed is left as it is."""
        ...
