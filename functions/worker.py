"""Lambda entry point for the SQS worker that runs the configured AgentExecutor."""

from a2a_serverless.lambda_.sqs import worker_handler as handler

__all__ = ["handler"]
