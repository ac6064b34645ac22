"""The template's bucket for large parts on the local stack: created on moto's server with the table
and queues, named to the functions as ``A2A_BLOB_BUCKET``, and reachable through presigned GET URLs
on 127.0.0.1 (moto serves S3 on the same port as DynamoDB and SQS)."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config

from a2a_serverless_dev._environment import LocalEnvironment, apply_environment
from a2a_serverless_dev._moto import moto_server
from a2a_serverless_dev._template import function_environment
from a2a_serverless_dev.resources import LocalResources, create_resources, load_template

KEY = f"tasks/{'a' * 64}/{'b' * 64}"


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    # As the local stack runs it: moto's server over HTTP.
    with moto_server() as endpoint:
        yield endpoint


_prefixes = itertools.count()


@pytest.fixture
def template() -> dict[str, Any]:
    return load_template()


@pytest.fixture
def resources(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch, template: dict[str, Any]) -> LocalResources:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "t",
        "AWS_SECRET_ACCESS_KEY": "t",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    ddb, sqs, s3 = (boto3.client(s, endpoint_url=moto_endpoint) for s in ("dynamodb", "sqs", "s3"))
    return create_resources(ddb, sqs, s3=s3, prefix=f"Blobs_{next(_prefixes)}", template=template)


@pytest.fixture
def function_env(
    moto_endpoint: str, resources: LocalResources, template: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The process environment the local stack gives the functions (a shell value loses)."""
    monkeypatch.setenv("A2A_BLOB_BUCKET", "some-bucket-of-the-shell")
    env = dict(os.environ)
    apply_environment(
        LocalEnvironment(moto_endpoint, function_environment(template, resources), public_url="http://127.0.0.1:1"),
        env,
    )
    for key in os.environ.keys() - env.keys():
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def test_every_bucket_of_the_template_is_created(moto_endpoint: str, resources: LocalResources) -> None:
    # Then: the prefixed name, as S3 takes it (lowercase, no underscores)
    (name,) = resources.buckets.values()
    assert resources.buckets == {"BlobsBucket": name}
    assert re.fullmatch(r"blobs-\d+-blobsbucket", name), name
    s3 = boto3.client("s3", endpoint_url=moto_endpoint)
    assert name in {b["Name"] for b in s3.list_buckets()["Buckets"]}


def test_the_functions_are_told_the_local_bucket(
    resources: LocalResources, template: dict[str, Any], function_env: dict[str, str]
) -> None:
    env = function_environment(template, resources)
    assert env.values["A2A_BLOB_BUCKET"] == resources.buckets["BlobsBucket"]
    assert "A2A_BLOB_BUCKET" in env.resource_keys
    assert function_env["A2A_BLOB_BUCKET"] == resources.buckets["BlobsBucket"]


def test_without_an_s3_client_no_bucket_is_created_nor_named(moto_endpoint: str, template: dict[str, Any]) -> None:
    ddb, sqs = (boto3.client(s, endpoint_url=moto_endpoint, region_name="us-east-1") for s in ("dynamodb", "sqs"))
    resources = create_resources(ddb, sqs, prefix=f"noblobs-{next(_prefixes)}", template=template)
    assert resources.buckets == {}
    assert "A2A_BLOB_BUCKET" not in function_environment(template, resources).values


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(None, id="default"),
        pytest.param(Config(signature_version="s3v4", s3={"addressing_style": "path"}), id="s3v4-path"),
        pytest.param(Config(signature_version="s3v4", s3={"addressing_style": "virtual"}), id="s3v4-virtual"),
    ],
)
def test_a_presigned_get_round_trips_a_megabyte_on_127_0_0_1(
    moto_endpoint: str, function_env: dict[str, str], config: Config | None
) -> None:
    # Given: an S3 client made as a function makes it, from the environment alone
    bucket = function_env["A2A_BLOB_BUCKET"]
    s3 = boto3.session.Session().client("s3", config=config)
    body = os.urandom(1024 * 1024)
    s3.put_object(Bucket=bucket, Key=KEY, Body=body, ContentType="application/octet-stream")

    # When
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": KEY}, ExpiresIn=900)

    # Then: path-style on moto's own address (an IP endpoint is never virtual-hosted), fetched as is
    assert url.startswith(f"{moto_endpoint}/{bucket}/{KEY}?"), url
    response = httpx.get(url)
    assert response.status_code == 200
    assert response.content == body
