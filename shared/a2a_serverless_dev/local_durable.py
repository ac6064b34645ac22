"""``DurableRuns`` without AWS: the official local runner of durable executions
(``aws-durable-execution-sdk-python-testing``, in the ``dev`` extra), in this process.

It keeps the semantics the durable worker relies on: every step is checkpointed, an invocation
that ends (its timeout, a crash) is followed by another that replays the checkpoints (completed
steps return their recorded results, never run again), waits and callback waits use no
invocation, a callback completes once. The runner starts a new execution for every start, so the
names are kept here: a second start of a name is harmless, as on Lambda.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ._loggers import kit_logger

__all__ = ["LocalDurableRuns"]

logger = kit_logger(__name__)


class LocalDurableRuns:
    def __init__(
        self,
        handler: Callable[[Any, Any], Any],
        *,
        invocation_timeout: int = 900,
        execution_timeout: int = 86400,
        skip_time: bool = False,
    ) -> None:
        """``handler``: the durable worker's handler (decorated with ``durable_execution``).
        ``invocation_timeout``: an invocation's time limit (Lambda's function timeout), after which
        the execution goes on in a new one. ``skip_time``: waits end at once (tests)."""
        from aws_durable_execution_sdk_python_testing.runner import DurableFunctionTestRunner

        self.runner = DurableFunctionTestRunner(
            handler=handler,
            poll_interval=0.05,
            execution_timeout=execution_timeout,
            invocation_timeout=invocation_timeout,
            skip_time=skip_time,
        )
        self._execution_timeout = execution_timeout
        self._names: dict[str, str] = {}
        self._lock = threading.Lock()

    def execution_arn(self, name: str) -> str | None:
        with self._lock:
            return self._names.get(name)

    def started(self) -> int:
        """How many executions were started (one per name)."""
        with self._lock:
            return len(self._names)

    def start(self, name: str, payload: str) -> None:
        with self._lock:
            if name in self._names:
                logger.info("durable execution already started", extra={"execution_name": name})
                return
            self._names[name] = self.runner.run_async(
                input=payload, execution_name=name, execution_timeout=self._execution_timeout
            )

    def resume(self, callback_id: str, payload: str) -> None:
        self._complete(lambda: self.runner.send_callback_success(callback_id, payload.encode("utf-8")))

    def abandon(self, callback_id: str, reason: str) -> None:
        from aws_durable_execution_sdk_python.lambda_service import ErrorObject

        error = ErrorObject(message=reason[:256], type="TaskEnded", data=None, stack_trace=None)
        self._complete(lambda: self.runner.send_callback_failure(callback_id, error))

    @staticmethod
    def _complete(call: Callable[[], None]) -> None:
        from aws_durable_execution_sdk_python_testing.exceptions import (
            CallbackTimeoutException,
            InvalidParameterValueException,
            ResourceNotFoundException,
        )

        try:
            call()
        except (InvalidParameterValueException, ResourceNotFoundException, CallbackTimeoutException) as exc:
            logger.info("callback already complete: %s", exc)

    def close(self) -> None:
        self.runner.close()  # type: ignore[no-untyped-call]
