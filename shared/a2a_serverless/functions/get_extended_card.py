"""Lambda entry point for GetExtendedAgentCard (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_ import http_handler

handler = http_handler({"GetExtendedAgentCard"}, name="GetExtendedAgentCard")
