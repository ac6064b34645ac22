"""The executor, loaded at a worker's cold start on Lambda (the SQS worker and the durable worker)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..config import ConfigError
from ..wiring import get_runtime
from ._observability import logger

__all__ = ["preload_executor"]


def preload_executor(environ: Mapping[str, str] = os.environ) -> None:
    """Import and create the executor now when running on Lambda (the init phase), so a bad import
    path fails the cold start with a clear message. Elsewhere (tests, the local stack, which checks
    it at start-up) nothing happens at import."""
    if environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        try:
            get_runtime().executor  # noqa: B018 - loading it is the point
        except ConfigError as exc:
            logger.error("cannot start the worker: %s", exc)
            raise
