"""moto in process, for the suites that run the DynamoDB store against it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from moto import mock_aws

__all__ = ["REGION", "SerializedClient", "fake_credentials", "moto_clients"]

REGION = "us-east-1"


class SerializedClient:
    """A boto3 client whose calls run one at a time.

    moto's in-process backend is not thread-safe (a cancelled transaction restores a deep copy of
    the whole table taken before it started, dropping writes other threads made meanwhile). DynamoDB
    applies each request atomically; serializing the calls gives moto the same guarantee, so the
    concurrency cases test the store's conditions, not moto's races.
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self.lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return attr(*args, **kwargs)

        return call


@contextmanager
def fake_credentials() -> Iterator[None]:
    """Fake credentials and the region, and no profile or endpoint from the environment: nothing a
    client built meanwhile does can reach AWS."""
    with pytest.MonkeyPatch.context() as env:
        for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
            env.delenv(key, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_DEFAULT_REGION", REGION)
        yield


@contextmanager
def moto_clients() -> Iterator[tuple[Any, Any]]:
    """moto with fake credentials (nothing from the environment can reach AWS): DynamoDB and SQS
    clients on it."""
    with fake_credentials(), mock_aws():
        yield boto3.client("dynamodb", region_name=REGION), boto3.client("sqs", region_name=REGION)
