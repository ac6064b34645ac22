from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from a2a_serverless_dev.resources import LocalResources, create_resources, load_template


@pytest.fixture(scope="session")
def template() -> dict[str, Any]:
    return load_template()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        yield


@pytest.fixture
def sqs(aws: None) -> Any:
    return boto3.client("sqs", region_name="us-east-1")


@pytest.fixture
def resources(aws: None, sqs: Any, template: dict[str, Any]) -> LocalResources:
    return create_resources(boto3.client("dynamodb", region_name="us-east-1"), sqs, template=template)
