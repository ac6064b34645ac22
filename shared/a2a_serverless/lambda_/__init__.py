"""Adapters from Lambda events to the core: API Gateway (buffered, via mangum) and SQS."""

from .http import http_handler

__all__ = ["http_handler"]
