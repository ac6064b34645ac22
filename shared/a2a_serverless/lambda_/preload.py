"""A function's cold start on Lambda: the start-up checks (:mod:`a2a_serverless.lambda_.startup`) and, for
the workers, the executor loaded, so a missing package or a bad setting fails the init phase with
one line instead of every request or work item."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..config import ConfigError, Settings
from ._observability import logger
from .snapstart import register as register_snapstart_hooks
from .startup import StartupError, check, executor_failure

__all__ = ["cold_start"]


def cold_start(
    *, executor: bool = False, durable_function: bool = False, environ: Mapping[str, str] = os.environ
) -> None:
    """On Lambda (the init phase), check what the configured features need (``executor``: this
    function runs the executor; ``durable_function``: it starts or signals durable executions) and
    raise :class:`~a2a_serverless.lambda_.startup.StartupError` after logging its one line at ERROR: Lambda
    then reports an init error with it. Elsewhere (tests, the local stack, which checks before it
    starts its processes) nothing happens. First, SnapStart's restore hooks are registered where
    Lambda's runtime offers them (:mod:`a2a_serverless.lambda_.snapstart`); last, in the init of a
    SnapStart version, what the first AWS clients need is loaded for the snapshot to keep."""
    register_snapstart_hooks()
    if not environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        return
    try:
        settings = check(environ, durable_function=durable_function)
        if executor:
            _load_executor(settings)
    except StartupError as exc:
        logger.error("cannot start the function: %s", exc)
        raise
    if environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "snap-start":
        # A version's init, before its snapshot: what the restored environments' first AWS clients
        # need (boto3, the service data) is loaded into it now. The before-snapshot hook does it
        # too, but under the Web Adapter (the streaming gateway) no hook runs.
        from ..aws import load_client_code

        load_client_code()


def _load_executor(settings: Settings) -> None:
    """The process's runtime, built from the checked ``settings`` (not read again), and its
    executor made now (the first work item then does not pay for it)."""
    from ..wiring import get_runtime  # the workers' (the authorizer's cold start does without the core)

    try:
        get_runtime(settings).executor  # noqa: B018 - loading it is the point
    except ConfigError as exc:
        raise StartupError(executor_failure(settings.executor, exc)) from None
