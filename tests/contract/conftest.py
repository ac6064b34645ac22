"""The ``store`` fixture: every contract case runs once per ``TaskStore`` implementation.

``dynamodb`` is :class:`DynamoDBTaskStore` on moto (in process), with the table created from
``template.yaml`` by the devstack, so the keys and indexes under test are the ones that deploy.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from a2a_serverless.adapters import DynamoDBTaskStore, MemoryTaskStore
from a2a_serverless.ports import TaskStore
from a2a_serverless_dev.moto_fixes import fast_transactions, partition_queries
from a2a_serverless_dev.resources import create_resources, load_template
from testkit.aws import SerializedClient, moto_clients


@pytest.fixture(scope="module")
def aws() -> Iterator[tuple[Any, Any]]:
    """moto for the whole module (starting it and building clients per test would dominate the
    suite's run time) with fake credentials; each test still gets a fresh table."""
    with moto_clients() as clients:
        yield clients


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
        # the local stack's moto, with its two-phase TransactWriteItems and partition queries (a2a_serverless_dev)
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
    with fast_transactions(), partition_queries():
        yield DynamoDBTaskStore(table, client=SerializedClient(client))
