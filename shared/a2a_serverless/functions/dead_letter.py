"""Lambda entry point for the work dead-letter queue: fails tasks whose work SQS gave up on."""

from a2a_serverless.lambda_.preload import cold_start
from a2a_serverless.lambda_.sqs import dead_letter_handler as handler

# A missing package or a bad setting fails the init phase, in one line (a2a_serverless.lambda_.startup).
cold_start()

__all__ = ["handler"]
