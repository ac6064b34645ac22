"""Lambda entry point for the SQS worker that runs the configured AgentExecutor."""

from a2a_serverless.lambda_.preload import cold_start
from a2a_serverless.lambda_.sqs import worker_handler as handler

# On Lambda, a bad A2A_EXECUTOR, a missing package or a bad setting fails the cold start, with the
# reason in the init log, instead of every work item (which would only reach the dead-letter queue
# hours later).
cold_start(executor=True)

__all__ = ["handler"]
