"""The public card fits the version asked: ``A2A-Version: 1.x`` gets the v1.0 card and only its
fields; no version (or 0.x) gets the card both generations read (v1.0 plus the v0.3 top-level
fields). Each variant has its own ETag and 304, and every answer varies on ``A2A-Version``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from a2a.client.card_resolver import parse_agent_card
from a2a.types import a2a_pb2
from google.protobuf.json_format import ParseDict

from testkit.asgi import memory_app

pytestmark = pytest.mark.asyncio

CARD = "/.well-known/agent-card.json"
LEGACY_FIELDS = {"url", "preferredTransport", "additionalInterfaces", "protocolVersion"}


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with memory_app() as client:
        yield client


def _vary(response: httpx.Response) -> set[str]:
    return {v.strip().lower() for v in response.headers.get("vary", "").split(",") if v.strip()}


@pytest.mark.parametrize("asked", ["1.0", "1", "1.0.1", " 1.0 "])
async def test_a_1_0_caller_gets_only_1_0_fields(http: httpx.AsyncClient, asked: str) -> None:
    response = await http.get(CARD, headers={"A2A-Version": asked})

    card = response.json()
    assert response.status_code == 200
    assert not LEGACY_FIELDS & card.keys()
    # Every field, nested ones included, is one of the v1.0 AgentCard's (the proto refuses others)
    ParseDict(card, a2a_pb2.AgentCard(), ignore_unknown_fields=False)
    for scheme in card.get("securitySchemes", {}).values():
        assert "type" not in scheme
    versions = [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]]
    assert versions[:2] == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0")]  # the 0.3 interfaces are still listed


@pytest.mark.parametrize("headers", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": ""}], ids=["none", "0.3", "blank"])
async def test_a_caller_without_a_version_gets_the_card_of_both_generations(
    http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    response = await http.get(CARD, headers=headers)

    card = response.json()
    assert card.keys() >= LEGACY_FIELDS
    assert card["protocolVersion"] == "0.3.0"
    # the v1.x SDK resolves it (it fetches the card without A2A-Version) to the v1.0 card itself
    one_oh = (await http.get(CARD, headers={"A2A-Version": "1.0"})).json()
    assert parse_agent_card(card) == ParseDict(one_oh, a2a_pb2.AgentCard())


async def test_the_query_parameter_asks_as_the_header_does(http: httpx.AsyncClient) -> None:
    card = (await http.get(CARD, params={"A2A-Version": "1.0"})).json()
    assert not LEGACY_FIELDS & card.keys()


async def test_each_variant_has_its_own_etag_and_304(http: httpx.AsyncClient) -> None:
    # Given both variants and their ETags
    one_oh = await http.get(CARD, headers={"A2A-Version": "1.0"})
    both = await http.get(CARD)
    assert one_oh.headers["etag"] != both.headers["etag"]
    for response in (one_oh, both):
        assert {"a2a-version", "accept"} <= _vary(response)

    # When each revalidates with its own ETag: 304, naming what it varies on
    for headers, answer in (({"A2A-Version": "1.0"}, one_oh), ({}, both)):
        again = await http.get(CARD, headers={**headers, "If-None-Match": answer.headers["etag"]})
        assert again.status_code == 304
        assert again.headers["etag"] == answer.headers["etag"]
        assert {"a2a-version", "accept"} <= _vary(again)

    # and with the other variant's: that one is not the card this caller gets
    crossed = await http.get(CARD, headers={"A2A-Version": "1.0", "If-None-Match": both.headers["etag"]})
    assert crossed.status_code == 200
    assert crossed.json() == one_oh.json()
    crossed = await http.get(CARD, headers={"If-None-Match": one_oh.headers["etag"]})
    assert crossed.status_code == 200
    assert crossed.json() == both.json()
