"""``DurableRuns`` on AWS Lambda's durable executions (boto3 ``lambda``).

* start: ``Invoke`` (``InvocationType=Event``) of the durable worker's alias with a
  ``DurableExecutionName``. Lambda returns the existing execution for a name it knows with the
  same payload, and ``DurableExecutionAlreadyStartedException`` for another payload: either way
  the execution of that name goes on, which is what a duplicate start wants.
* resume / abandon: ``SendDurableExecutionCallbackSuccess`` / ``...Failure``. A callback that is
  already complete or timed out answers ``InvalidParameterValueException`` /
  ``CallbackTimeoutException`` (a re-send's second delivery): nothing to do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from ..aws import lambda_client
from ..config import ConfigError

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_lambda.type_defs import ErrorObjectTypeDef

__all__ = ["LambdaDurableRuns"]

logger = logging.getLogger(__name__)

_ALREADY_STARTED = "DurableExecutionAlreadyStartedException"
_CALLBACK_GONE = frozenset({"InvalidParameterValueException", "CallbackTimeoutException", "ResourceNotFoundException"})


class LambdaDurableRuns:
    def __init__(self, function: str, *, client: LambdaClient | None = None) -> None:
        """``function``: the durable worker's alias ARN (``A2A_DURABLE_FUNCTION``). The durable
        worker itself has none (it never starts executions; naming its own alias would be a cycle in
        the template): :meth:`start` then raises, the callbacks still work."""
        self._function = function
        self._client = client

    @property
    def client(self) -> LambdaClient:
        if self._client is None:
            self._client = lambda_client()
        return self._client

    def start(self, name: str, payload: str) -> None:
        if not self._function:
            raise ConfigError("durable mode needs A2A_DURABLE_FUNCTION (the durable worker's alias ARN) to start tasks")
        try:
            self.client.invoke(
                FunctionName=self._function,
                InvocationType="Event",
                DurableExecutionName=name,
                Payload=payload.encode("utf-8"),
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != _ALREADY_STARTED:
                raise
            logger.info("durable execution already started", extra={"execution_name": name})

    def resume(self, callback_id: str, payload: str) -> None:
        self._complete(
            callback_id,
            lambda: self.client.send_durable_execution_callback_success(
                CallbackId=callback_id, Result=payload.encode("utf-8")
            ),
        )

    def abandon(self, callback_id: str, reason: str) -> None:
        error: ErrorObjectTypeDef = {"ErrorType": "TaskEnded", "ErrorMessage": reason[:256]}
        self._complete(
            callback_id,
            lambda: self.client.send_durable_execution_callback_failure(CallbackId=callback_id, Error=error),
        )

    @staticmethod
    def _complete(callback_id: str, call: Callable[[], object]) -> None:
        try:
            call()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in _CALLBACK_GONE:
                raise
            logger.info("callback already complete", extra={"code": exc.response.get("Error", {}).get("Code")})
