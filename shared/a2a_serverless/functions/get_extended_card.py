"""Lambda entry point for GetExtendedAgentCard (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import GET_EXTENDED_CARD

handler = http_handler(GET_EXTENDED_CARD)
