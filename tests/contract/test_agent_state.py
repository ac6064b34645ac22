"""The ``AgentStateStore`` contract, against every implementation (memory; DynamoDB on moto, with
the table ``template.yaml`` deploys), and ``context.state``'s large entries stored as objects."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from a2a_serverless.adapters.dynamodb.agent_state import DynamoDBAgentStateStore
from a2a_serverless.adapters.memory_agent_state import MemoryAgentStateStore
from a2a_serverless.adapters.memory_blobs import MemoryBlobStore
from a2a_serverless.execution.agent_state import INLINE_STATE_BYTES, AgentState
from a2a_serverless.ports import Scope
from a2a_serverless.ports.agent_state import MAX_STATE_BYTES, AgentStateStore, StateConflict
from testkit.aws import SerializedClient

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")


@pytest.fixture(params=[pytest.param("memory", id="memory"), pytest.param("dynamodb", id="dynamodb")])
def states(request: pytest.FixtureRequest) -> Iterator[AgentStateStore]:
    if request.param == "memory":
        yield MemoryAgentStateStore()
        return
    client, table = request.getfixturevalue("dynamodb_table")
    yield DynamoDBAgentStateStore(table, client=SerializedClient(client))


def test_a_saved_entry_loads_back_with_its_version(states: AgentStateStore) -> None:
    assert states.load_state(ALICE, "ctx/1") is None
    assert states.save_state(ALICE, "ctx/1", b"memory one", version=0) == 1
    assert states.save_state(ALICE, "ctx/1", b"memory two", version=1) == 2

    saved = states.load_state(ALICE, "ctx/1")
    assert saved is not None
    assert (saved.data, saved.version) == (b"memory two", 2)


def test_an_entry_is_its_owners_alone(states: AgentStateStore) -> None:
    states.save_state(ALICE, "ctx/shared", b"alice's", version=0)

    assert states.load_state(BOB, "ctx/shared") is None
    assert states.load_state(Scope("other-tenant", "alice"), "ctx/shared") is None
    states.save_state(BOB, "ctx/shared", b"bob's", version=0)  # his own entry, not a conflict
    alices = states.load_state(ALICE, "ctx/shared")
    assert alices is not None
    assert alices.data == b"alice's"


@pytest.mark.parametrize("version", [pytest.param(0, id="new-over-existing"), pytest.param(2, id="stale")])
def test_a_save_from_a_version_that_is_not_stored_conflicts_and_writes_nothing(
    states: AgentStateStore, version: int
) -> None:
    states.save_state(ALICE, "ctx/1", b"first", version=0)
    states.save_state(ALICE, "ctx/1", b"second", version=1)
    states.save_state(ALICE, "ctx/1", b"third", version=2)

    with pytest.raises(StateConflict):
        states.save_state(ALICE, "ctx/1", b"lost", version=version)
    saved = states.load_state(ALICE, "ctx/1")
    assert saved is not None
    assert (saved.data, saved.version) == (b"third", 3)


def test_an_entry_over_the_limit_is_refused(states: AgentStateStore) -> None:
    with pytest.raises(ValueError, match="over"):
        states.save_state(ALICE, "big", bytes(MAX_STATE_BYTES + 1), version=0)
    assert states.load_state(ALICE, "big") is None


def test_a_large_entry_is_stored_as_an_object_under_its_scope(states: AgentStateStore) -> None:
    blobs = MemoryBlobStore()
    alice = AgentState(states, blobs, ALICE)
    large = bytes(range(256)) * (INLINE_STATE_BYTES // 256 + 10)

    version = asyncio.run(alice.save("ctx/long", large, version=0))
    loaded = asyncio.run(alice.load("ctx/long"))

    assert loaded is not None
    assert (loaded.data, loaded.version) == (large, version)
    assert len(blobs.keys()) == 1
    assert asyncio.run(AgentState(states, blobs, BOB).load("ctx/long")) is None


def test_the_dynamodb_entry_is_keyed_by_scope_and_a_digest_of_the_key(dynamodb_table: tuple[Any, str]) -> None:
    client, table = dynamodb_table
    DynamoDBAgentStateStore(table, client=client).save_state(ALICE, "x" * 5000, b"data", version=0)

    (item,) = client.scan(TableName=table)["Items"]
    assert item["pk"]["S"].startswith("STATE#acme#alice#")
    assert len(item["pk"]["S"]) < 100
    assert item["sk"]["S"] == "STATE"
    assert "ttl" in item
