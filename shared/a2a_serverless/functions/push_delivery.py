"""Lambda entry point for the push delivery FIFO queue: POSTs notifications to webhooks."""

from a2a_serverless.lambda_.push import delivery_handler as handler

__all__ = ["handler"]
