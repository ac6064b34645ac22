"""The agent's public base URL as the template tells it (``A2A_PUBLIC_URL``): a signed card is built
only from it or from what API Gateway says a request came to, never from the request's ``Host``.

``PublicUrl`` (a custom domain) reaches every function, the ones that serve cards included; empty,
the card functions find the API's URL in each request's event (they cannot be told it: the API,
whose events they are, depends on them, and a ``!Sub`` of its id would close a cycle), while the
functions outside the API's events (the durable worker, push delivery) are told the API's stage
URL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cloudformation import PSEUDO, Deployed, evaluate
from modes import PUBLIC_URL

from a2a_serverless.methods import GET_EXTENDED_CARD
from a2a_serverless_dev.resources import load_template

CARD_PATHS = {
    "/.well-known/agent-card.json",
    "/.well-known/jwks.json",
    "/",
    *(r.path for r in GET_EXTENDED_CARD.routes),
}
STAGE_URL = "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1"


def _variables(deployed: Deployed, function: str) -> dict[str, Any]:
    variables: dict[str, Any] = deployed.resources[function]["Properties"]["Environment"]["Variables"]
    return variables


def _card_functions() -> set[str]:
    """The functions an API route that serves a card (or JSON-RPC, GetExtendedAgentCard's) reaches."""
    resources = load_template()["Resources"]
    return {
        name
        for name, resource in resources.items()
        if resource["Type"] == "AWS::Serverless::Function"
        for event in resource["Properties"].get("Events", {}).values()
        if event["Type"] == "Api" and event["Properties"]["Path"] in CARD_PATHS
    }


def test_the_card_functions_are_the_three_that_serve_cards() -> None:
    assert _card_functions() == {"AgentCardFunction", "GatewayFunction", "GetExtendedCardFunction"}


@pytest.mark.parametrize("public_url", ["", PUBLIC_URL], ids=["api-url", "custom-domain"])
@pytest.mark.parametrize("execution_mode", ["Queue", "Durable"])
def test_every_function_is_told_the_public_url_when_there_is_one(
    translate: Callable[[dict[str, str]], dict[str, Any]], public_url: str, execution_mode: str
) -> None:
    # Given the template deployed with or without a custom domain's URL
    chosen = {"PublicUrl": public_url, "ExecutionMode": execution_mode}
    deployed = Deployed(translate(chosen), **chosen)
    outside_the_api = {"PushDeliveryFunction"} | ({"DurableWorkerFunction"} if execution_mode == "Durable" else set())

    for function in deployed.functions():
        told = _variables(deployed, function)["A2A_PUBLIC_URL"]
        if told == {"Ref": "PublicUrl"}:
            told = deployed.parameters["PublicUrl"]
        if function in outside_the_api and not public_url:
            # Then a function outside the API's events is told the API's stage URL
            assert evaluate(told, {**PSEUDO, "Api": "abc123defg"}) == STAGE_URL, function
        else:
            # and every other, the card functions first, PublicUrl itself: empty, the card is built
            # from API Gateway's event (a2a_serverless.transport._http.gateway_base_url)
            assert told == public_url, function
    assert _card_functions() <= set(deployed.functions())
