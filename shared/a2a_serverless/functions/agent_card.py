"""Lambda entry point for the public agent card (GET /.well-known/agent-card.json)."""

from a2a_serverless.lambda_.http import http_handler

handler = http_handler(card=True)
