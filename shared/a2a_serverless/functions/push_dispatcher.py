"""Lambda entry point fed by the table's DynamoDB stream: queues push deliveries for new events."""

from a2a_serverless.lambda_.push import dispatcher_handler as handler

__all__ = ["handler"]
