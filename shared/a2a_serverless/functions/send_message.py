"""Lambda entry point for SendMessage (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import SEND_MESSAGE

handler = http_handler(SEND_MESSAGE)
