"""The ``store`` fixture: every contract case runs once per ``TaskStore`` implementation.

``dynamodb`` is :class:`DynamoDBTaskStore` on moto (in process), with the table created from
``template.yaml`` by the devstack, so the keys and indexes under test are the ones that deploy.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from a2a_devstack._moto_transactions import fast_transactions
from a2a_devstack.resources import create_resources, load_template
from a2a_serverless.adapters import DynamoDBTaskStore, MemoryTaskStore
from a2a_serverless.ports import TaskStore

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
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return call


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[Any, Any]]:
    """moto for the whole module (starting it and building clients per test would dominate the
    suite's run time) with fake credentials; each test still gets a fresh table."""
    with pytest.MonkeyPatch.context() as env:
        for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
            env.delenv(key, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_DEFAULT_REGION", REGION)
        with mock_aws():
            yield boto3.client("dynamodb", region_name=REGION), boto3.client("sqs", region_name=REGION)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


_prefixes = itertools.count()


@pytest.fixture
def dynamodb_table(aws: tuple[Any, Any], template: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    """A moto DynamoDB client and a new table made from ``template.yaml``'s ``TasksTable``."""
    client, sqs = aws
    created = create_resources(client, sqs, prefix=f"contract-{next(_prefixes)}", template=template)
    table = created.tables["TasksTable"]
    yield client, table
    client.delete_table(TableName=table)


@pytest.fixture(
    params=[
        pytest.param("memory", id="memory"),
        pytest.param("dynamodb", id="dynamodb"),
        # the local stack's moto, with its two-phase TransactWriteItems (a2a_devstack)
        pytest.param("dynamodb-devstack", id="dynamodb-devstack"),
    ]
)
def store(request: pytest.FixtureRequest) -> Iterator[TaskStore]:
    if request.param == "memory":
        yield MemoryTaskStore()
        return
    client, table = request.getfixturevalue("dynamodb_table")
    if request.param == "dynamodb":
        yield DynamoDBTaskStore(table, client=SerializedClient(client))
        return
    with fast_transactions():
        yield DynamoDBTaskStore(table, client=SerializedClient(client))
