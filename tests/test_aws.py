"""The AWS clients' endpoint: ``A2A_AWS_ENDPOINT_URL`` (what ``sam local --env-vars`` can set, since
the template declares it) when not empty, else boto3's own lookup."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from a2a_serverless import aws

CLIENTS = [
    pytest.param(aws.dynamodb_client, id="dynamodb"),
    pytest.param(aws.sqs_client, id="sqs"),
    pytest.param(aws.s3_client, id="s3"),
    pytest.param(aws.lambda_client, id="lambda"),
    pytest.param(aws.ssm_client, id="ssm"),
]


@pytest.fixture(autouse=True)
def _region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "A2A_AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("make", CLIENTS)
def test_a2a_aws_endpoint_url_points_every_client_at_a_local_endpoint(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[], Any]
) -> None:
    # Given: the endpoint an --env-vars file gives the functions (a moto server in a container)
    monkeypatch.setenv("A2A_AWS_ENDPOINT_URL", "http://moto:5000")
    # Then: the client calls it
    assert make().meta.endpoint_url == "http://moto:5000"


@pytest.mark.parametrize("make", CLIENTS)
def test_the_templates_empty_value_leaves_boto3s_own_endpoint(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[], Any]
) -> None:
    # Given: the value deployed functions get (declared empty)
    monkeypatch.setenv("A2A_AWS_ENDPOINT_URL", "")
    # Then: the service's regional endpoint
    endpoint = make().meta.endpoint_url
    assert endpoint.startswith("https://")
    assert "eu-west-1" in endpoint
    # And: boto3's own AWS_ENDPOINT_URL (the local stack's) still applies
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5555")
    assert make().meta.endpoint_url == "http://127.0.0.1:5555"
