"""Lambda entry points, one module per function in template.yaml. Each is a few lines over
:mod:`a2a_serverless.lambda_`; all logic lives in the shared core."""
