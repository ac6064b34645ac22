"""Lambda entry point for the scheduled sweeper: fails tasks whose run stopped renewing its lease."""

from a2a_serverless.lambda_.schedule import sweeper_handler as handler

__all__ = ["handler"]
