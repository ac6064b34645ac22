#!/bin/sh
# The image's entrypoint, as in AWS's base images: the one argument is the handler. Outside Lambda
# (no AWS_LAMBDA_RUNTIME_API) the Runtime Interface Emulator serves the invoke API on port 8080
# and runs the bootstrap; inside Lambda the bootstrap talks to the real runtime API.
if [ $# -ne 1 ]; then
    echo "lambda-entrypoint.sh: the handler (module.function) must be the one argument" >&2
    exit 142
fi
export _HANDLER="$1"
if [ -z "${AWS_LAMBDA_RUNTIME_API}" ]; then
    exec /usr/local/bin/aws-lambda-rie /var/runtime/bootstrap
fi
exec /var/runtime/bootstrap
