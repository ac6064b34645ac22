"""Lambda entry point for the work dead-letter queue: fails tasks whose work SQS gave up on."""

from a2a_serverless.lambda_.sqs import dead_letter_handler as handler

__all__ = ["handler"]
