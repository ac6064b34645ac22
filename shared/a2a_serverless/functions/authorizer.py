"""Lambda entry point for the API's REQUEST authorizer (A2A_AUTHORIZER_MODE: none or jwt)."""

from a2a_serverless.lambda_.authorizer import authorizer_handler as handler

__all__ = ["handler"]
