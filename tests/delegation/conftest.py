"""Fixtures of the delegation tests: the servers of ``delegation_servers``, one per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from delegation_servers import Agent, our_agent, reference_agent


@pytest.fixture(autouse=True)
def _private_addresses_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    # As the local stack does: every server here is on 127.0.0.1.
    monkeypatch.setenv("A2A_ALLOW_PRIVATE_WEBHOOKS", "true")


@pytest.fixture(scope="module")
def chores() -> Iterator[Agent]:
    with our_agent("relay_agents:ChoreAgent") as agent:
        yield agent


@pytest.fixture(scope="module")
def reference() -> Iterator[Agent]:
    with reference_agent() as agent:
        yield agent


@pytest.fixture(scope="module")
def delegator() -> Iterator[Agent]:
    with our_agent("relay_agents:DelegatingAgent") as agent:
        yield agent
