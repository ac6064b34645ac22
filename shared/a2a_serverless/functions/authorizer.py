"""Lambda entry point for the API's REQUEST authorizer (A2A_AUTHORIZER_MODE: none or jwt)."""

from a2a_serverless.lambda_.authorizer import authorizer_handler as handler
from a2a_serverless.lambda_.preload import cold_start

# A missing package or a bad setting fails the init phase, in one line (a2a_serverless.lambda_.startup).
cold_start()

__all__ = ["handler"]
