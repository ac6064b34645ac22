"""Lambda entry point for the push delivery FIFO queue: POSTs notifications to webhooks."""

from a2a_serverless.lambda_.preload import cold_start
from a2a_serverless.lambda_.push import delivery_handler as handler

# A missing package or a bad setting fails the init phase, in one line (a2a_serverless.lambda_.startup).
cold_start()

__all__ = ["handler"]
