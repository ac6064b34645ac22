"""The AWS clients the code calls, typed and built in one place.

Each factory returns the service's boto3 client typed by boto3-stubs (``mypy_boto3_*``, a
type-checking dependency only: the Lambda layer ships no stubs), with the standard retry mode
(throttling and transient errors retried with backoff). Adapters build theirs on first use and
keep it for warm invocations; tests pass their own.

Each goes to ``A2A_AWS_ENDPOINT_URL`` when it is set and not empty: the template declares it empty,
because ``sam local`` passes a function only the variables the template declares, and a
``--env-vars`` file sets it to a local endpoint (a moto server). Otherwise boto3 finds the endpoint
as usual (its own ``AWS_ENDPOINT_URL`` included, which the local stack sets).

The clients come from boto3's default session (``boto3.DEFAULT_SESSION``, which resolves and caches
the credentials). Under SnapStart, the before-snapshot hook reads the clients' service data once
(:func:`load_client_code`) and the default session a restored environment makes reads through it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import boto3.session
    from botocore.config import Config
    from botocore.loaders import Loader
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_ssm import SSMClient

__all__ = [
    "dynamodb_client",
    "kms_client",
    "lambda_client",
    "load_client_code",
    "s3_client",
    "sqs_client",
    "ssm_client",
]

_PLACEHOLDER_KEY = "placeholder"
"""The keys of the clients :func:`load_client_code` builds and drops: never sent anywhere."""


def _endpoint_url() -> str | None:
    return os.environ.get("A2A_AWS_ENDPOINT_URL") or None


def _config(max_attempts: int) -> Config:
    from botocore.config import Config

    return Config(retries={"mode": "standard", "max_attempts": max_attempts})


_service_data: Loader | None = None
"""botocore's data loader as :func:`load_client_code` left it: the DynamoDB and SQS service models,
the endpoint rules and partitions, read from the SDK's files and parsed. It holds no credentials and
nothing of one environment, so a snapshot may keep it; the default session :func:`_default_session`
makes reads through it (a restored environment's first client: 7-8 ms of CPU instead of 45-64 in
the Lambda image, bench/README.md)."""


def load_client_code() -> None:
    """Import what making the kit's clients imports (boto3, a client's machinery, the retry mode)
    and read the service data they need, without making a client that could be used: a DynamoDB and
    an SQS client built in a session of their own, with placeholder keys (no credentials are looked
    up) and no call made, then dropped, their session's data loader kept. SnapStart's before-snapshot
    hook calls it, so a restored environment's first AWS call neither imports boto3 nor reads the
    service models again (:mod:`a2a_serverless.lambda_.snapstart`). Once done, it does nothing."""
    global _service_data
    if _service_data is not None:
        return
    import boto3
    import botocore.session

    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    core = botocore.session.get_session()
    session = boto3.session.Session(
        aws_access_key_id=_PLACEHOLDER_KEY,
        aws_secret_access_key=_PLACEHOLDER_KEY,
        region_name=region,
        botocore_session=core,
    )
    for service in ("dynamodb", "sqs"):
        session.client(service, config=_config(8))
    _service_data = core.get_component("data_loader")


def _default_session() -> boto3.session.Session:
    """boto3's default session (which ``boto3.client`` uses); when there is none yet and the service
    data was read (:func:`load_client_code`), one made to read through it."""
    import boto3

    if boto3.DEFAULT_SESSION is None:
        if _service_data is None:
            boto3.setup_default_session()
        else:
            import botocore.session

            core = botocore.session.get_session()
            core.register_component("data_loader", _service_data)
            boto3.setup_default_session(botocore_session=core)
    assert boto3.DEFAULT_SESSION is not None  # (made above)
    return boto3.DEFAULT_SESSION


def dynamodb_client() -> DynamoDBClient:
    return _default_session().client("dynamodb", config=_config(8), endpoint_url=_endpoint_url())


def sqs_client() -> SQSClient:
    return _default_session().client("sqs", config=_config(8), endpoint_url=_endpoint_url())


def s3_client() -> S3Client:
    """SigV4 for presigned URLs (botocore's default for S3 presigning is SigV2, which buckets
    created since 2020 refuse), path style so a URL works on any endpoint."""
    from botocore.config import Config

    path_style = Config(signature_version="s3v4", s3={"addressing_style": "path"})
    return _default_session().client("s3", config=_config(8).merge(path_style), endpoint_url=_endpoint_url())


def lambda_client() -> LambdaClient:
    return _default_session().client("lambda", config=_config(5), endpoint_url=_endpoint_url())


def ssm_client() -> SSMClient:
    return _default_session().client("ssm", endpoint_url=_endpoint_url())


def kms_client() -> KMSClient:
    return _default_session().client("kms", config=_config(5), endpoint_url=_endpoint_url())
