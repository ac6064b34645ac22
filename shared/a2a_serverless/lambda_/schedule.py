"""The scheduled sweeper's entry point (an EventBridge rule): no batch, so no Powertools batch
processing and no SQS record types at its cold start."""

from __future__ import annotations

from aws_lambda_powertools.utilities.typing import LambdaContext

from ..execution.sweeper import sweep
from ..json_types import Json
from ..wiring import get_runtime
from . import _metrics as m
from ._observability import metrics, per_invocation

__all__ = ["sweeper_handler"]


@per_invocation
@metrics.log_metrics
def sweeper_handler(event: Json, context: LambdaContext) -> dict[str, int]:
    """The scheduled sweeper (an EventBridge rule, every minute): fail the tasks whose run stopped
    renewing its lease (its worker died)."""
    swept = sweep(get_runtime())
    m.RUNS_SWEPT.add(swept)
    return {"swept": swept}
