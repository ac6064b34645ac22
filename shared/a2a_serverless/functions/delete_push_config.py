"""Lambda entry point for DeleteTaskPushNotificationConfig (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import DELETE_PUSH_CONFIG

handler = http_handler(DELETE_PUSH_CONFIG)
