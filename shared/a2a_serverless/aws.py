"""The AWS clients the code calls, typed and built in one place.

Each factory returns the service's boto3 client typed by boto3-stubs (``mypy_boto3_*``, a
type-checking dependency only: the Lambda layer ships no stubs), with the standard retry mode
(throttling and transient errors retried with backoff). Adapters build theirs on first use and
keep it for warm invocations; tests pass their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botocore.config import Config
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_ssm import SSMClient

__all__ = ["dynamodb_client", "lambda_client", "s3_client", "sqs_client", "ssm_client"]


def _config(max_attempts: int) -> Config:
    from botocore.config import Config

    return Config(retries={"mode": "standard", "max_attempts": max_attempts})


def dynamodb_client() -> DynamoDBClient:
    import boto3

    return boto3.client("dynamodb", config=_config(8))


def sqs_client() -> SQSClient:
    import boto3

    return boto3.client("sqs", config=_config(8))


def s3_client() -> S3Client:
    """SigV4 for presigned URLs (botocore's default for S3 presigning is SigV2, which buckets
    created since 2020 refuse), path style so a URL works on any endpoint."""
    import boto3
    from botocore.config import Config

    path_style = Config(signature_version="s3v4", s3={"addressing_style": "path"})
    return boto3.client("s3", config=_config(8).merge(path_style))


def lambda_client() -> LambdaClient:
    import boto3

    return boto3.client("lambda", config=_config(5))


def ssm_client() -> SSMClient:
    import boto3

    return boto3.client("ssm")
