#!/bin/sh
# The gateway function's entry point: the AWS Lambda Web Adapter (AWS_LAMBDA_EXEC_WRAPPER) runs this
# script, then forwards each API Gateway request to the app on AWS_LWA_PORT and streams the response.
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT:-/var/task}:${PYTHONPATH:-}"
exec python3 -m uvicorn --host 127.0.0.1 --port "${AWS_LWA_PORT:-8080}" --no-access-log \
  --factory a2a_serverless.transport.app:create_app
