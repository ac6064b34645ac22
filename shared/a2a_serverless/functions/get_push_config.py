"""Lambda entry point for GetTaskPushNotificationConfig (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import GET_PUSH_CONFIG

handler = http_handler(GET_PUSH_CONFIG)
