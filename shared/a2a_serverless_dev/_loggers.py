"""The kit's loggers sit in the runtime's logger tree: ``a2a_serverless.dev.<module>``, children of
``a2a_serverless``.

The kit's lines are written in the processes of the local stack, beside the runtime's: a local
function's process runs its event sources' pollers, the API process runs the console and durable
mode's local runner. There the functions' own logging set-up (Powertools' JSON lines and their
level, :mod:`a2a_serverless.lambda_._observability`) configures the ``a2a_serverless`` logger, and
the kit's lines go out through it with the function's, which the stack reads and labels. Named after
their modules (``a2a_serverless_dev...``) they would be outside that tree, unconfigured there.
"""

from __future__ import annotations

import logging

__all__ = ["kit_logger"]

_PACKAGE = __name__.partition(".")[0]


def kit_logger(module: str) -> logging.Logger:
    """The logger of the kit's ``module`` (its ``__name__``): ``a2a_serverless.dev.<its path in the kit>``."""
    return logging.getLogger(f"a2a_serverless.dev.{module.removeprefix(f'{_PACKAGE}.')}")
