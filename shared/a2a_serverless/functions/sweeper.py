"""Lambda entry point for the scheduled sweeper: fails tasks whose run stopped renewing its lease."""

from a2a_serverless.lambda_.preload import cold_start
from a2a_serverless.lambda_.schedule import sweeper_handler as handler

# A missing package or a bad setting fails the init phase, in one line (a2a_serverless.lambda_.startup).
cold_start()

__all__ = ["handler"]
