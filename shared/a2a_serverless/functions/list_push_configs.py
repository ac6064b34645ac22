"""Lambda entry point for ListTaskPushNotificationConfigs (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import LIST_PUSH_CONFIGS

handler = http_handler(LIST_PUSH_CONFIGS)
