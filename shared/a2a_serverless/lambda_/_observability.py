"""Powertools Logger and Metrics shared by every entry point (created once per cold start).

An invocation's log keys (the Lambda context's ``function_request_id``..., ``cold_start``, and the
``task_id`` an entry point adds) are the invocation's own: :func:`per_invocation` and
:func:`append_invocation_keys` put them in Logger's thread-safe keys (a context variable, seen by the
invocation's thread and what it starts in its context: its asyncio tasks, ``asyncio.to_thread``),
never in the keys of the formatter every thread shares, as ``inject_lambda_context`` and
``append_keys`` do. On Lambda one invocation runs at a time in a process and the lines are the same;
the local stack runs as many invocations of a function as its event source allows, as threads of
one process, and each line still names the invocation that wrote it.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.lambda_context import build_lambda_context_model
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

__all__ = ["append_invocation_keys", "logger", "metrics", "per_invocation"]

_Result = TypeVar("_Result")


def _log_json(log: dict[str, object]) -> str:
    """Powertools' own serialization (compact, ``default=str``, non-ASCII kept as it is), with any
    lone surrogate written as its ``\\udXXX`` JSON escape. A bad request can put one in an error's
    text (``"\\ud800"`` is valid JSON); unescaped, writing the record to stdout raised
    UnicodeEncodeError and the line saying why a request failed was lost."""
    text = json.dumps(log, default=str, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


logger = Logger(service="a2a-serverless", json_serializer=_log_json)
metrics = Metrics(namespace="A2AServerless", service="a2a-serverless")

# The core logs through the standard library; give it the same structured JSON output and
# correlation id as the entry points.
logging.getLogger("a2a_serverless").setLevel(logger.log_level)
copy_config_to_registered_loggers(source_logger=logger, include={"a2a_serverless"})


_cold = [True]
_cold_lock = threading.Lock()


def _cold_start() -> bool:
    """True for the process's first invocation (not under provisioned concurrency, whose init ran
    before any request), as Powertools' ``cold_start`` key."""
    with _cold_lock:
        first, _cold[0] = _cold[0], False
    return first and os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != "provisioned-concurrency"


def per_invocation(handler: Callable[[Any, Any], _Result]) -> Callable[[Any, Any], _Result]:
    """``handler`` with the Lambda context's keys on every line it logs: what Powertools'
    ``inject_lambda_context(clear_state=True)`` adds (``function_name``, ``function_memory_size``,
    ``function_arn``, ``function_request_id``, ``cold_start``), as this invocation's own keys,
    cleared when it returns."""

    @functools.wraps(handler)
    def invoke(event: Any, context: Any) -> _Result:
        logger.thread_safe_clear_keys()
        logger.thread_safe_append_keys(cold_start=_cold_start(), **build_lambda_context_model(context).__dict__)
        try:
            return handler(event, context)
        finally:
            logger.thread_safe_clear_keys()

    return invoke


def append_invocation_keys(**keys: object) -> None:
    """Add ``keys`` to the lines the current invocation logs from here on (``task_id``...)."""
    logger.thread_safe_append_keys(**keys)
