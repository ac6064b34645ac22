"""Lambda entry point for CreateTaskPushNotificationConfig (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import CREATE_PUSH_CONFIG

handler = http_handler(CREATE_PUSH_CONFIG)
