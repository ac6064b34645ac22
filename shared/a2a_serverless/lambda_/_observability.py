"""Powertools Logger and Metrics shared by every entry point (created once per cold start)."""

from __future__ import annotations

import json
import logging

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

__all__ = ["logger", "metrics"]


def _log_json(log: dict[str, object]) -> str:
    """Powertools' own serialization (compact, ``default=str``, non-ASCII kept as it is), with any
    lone surrogate written as its ``\\udXXX`` JSON escape. A bad request can put one in an error's
    text (``"\\ud800"`` is valid JSON); unescaped, writing the record to stdout raised
    UnicodeEncodeError and the line saying why a request failed was lost."""
    text = json.dumps(log, default=str, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


logger = Logger(service="a2a-serverless", json_serializer=_log_json)
metrics = Metrics(namespace="A2AServerless", service="a2a-serverless")

# The core logs through the standard library; give it the same structured JSON output and
# correlation id as the entry points.
logging.getLogger("a2a_serverless").setLevel(logger.log_level)
copy_config_to_registered_loggers(source_logger=logger, include={"a2a_serverless"})
