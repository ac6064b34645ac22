"""Lambda entry point of the durable worker (``ExecutionMode: Durable``): each task runs as one
durable execution (:mod:`a2a_serverless.durable.turns`), started by SendMessage."""

from aws_durable_execution_sdk_python.context import DurableContext
from aws_durable_execution_sdk_python.execution import durable_execution
from aws_lambda_powertools import Logger

from a2a_serverless.durable.turns import run_task
from a2a_serverless.execution.run_report import RunReport
from a2a_serverless.json_types import Json
from a2a_serverless.lambda_._metrics import record_run
from a2a_serverless.lambda_._observability import metrics
from a2a_serverless.lambda_.preload import cold_start
from a2a_serverless.wiring import get_runtime

logger = Logger()

# A bad A2A_EXECUTOR, a missing package or a bad setting fails the cold start, with the reason in
# the init log.
cold_start(executor=True)


@durable_execution
def _execution(event: Json, context: DurableContext) -> Json:
    return run_task(event, context, get_runtime(), on_run=_record)


def _record(report: RunReport) -> None:
    """A run's metrics (the worker's: RunDuration, TaskLatency, the cost counts), written as the
    run ends: most invocations of a durable execution replay or wait, and run nothing."""
    record_run(report)
    metrics.flush_metrics()


handler = logger.inject_lambda_context(_execution, clear_state=True)

__all__ = ["handler"]
