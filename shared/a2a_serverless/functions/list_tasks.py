"""Lambda entry point for ListTasks (REST binding; routes in template.yaml)."""

from a2a_serverless.lambda_.http import http_handler
from a2a_serverless.methods import LIST_TASKS

handler = http_handler(LIST_TASKS)
