"""Powertools Logger and Metrics shared by every entry point (created once per cold start)."""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

__all__ = ["logger", "metrics"]

logger = Logger(service="a2a-serverless")
metrics = Metrics(namespace="A2AServerless", service="a2a-serverless")

# The core logs through the standard library; give it the same structured JSON output and
# correlation id as the entry points.
logging.getLogger("a2a_serverless").setLevel(logger.log_level)
copy_config_to_registered_loggers(source_logger=logger, include={"a2a_serverless"})
