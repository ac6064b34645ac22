"""The built functions in the Lambda Python 3.13 image: the layer and code `sam build` makes,
mounted where Lambda puts them, imported by the runtime interface client and invoked through
the Runtime Interface Emulator, as Lambda runs them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from functions.lambda_events import api_event

if TYPE_CHECKING:
    from conftest import StartFunction

pytestmark = pytest.mark.lambda_runtime

# What the template's Globals give every function (its parameters' defaults), where the card reads them.
CARD_ENV = {
    "A2A_STORE": "dynamodb",
    "A2A_TABLE_NAME": "a2a-tasks",
    "A2A_AUTH_MODE": "apigateway",
    "A2A_API_AUTH": "Open",
    "A2A_AGENT_NAME": "agent in a Lambda runtime",
    "POWERTOOLS_SERVICE_NAME": "a2a-serverless",
}


def test_the_agent_card_function_answers_with_the_card(start_function: StartFunction) -> None:
    # Given the built agent card function in the image
    function = start_function("AgentCardFunction", CARD_ENV)

    # When API Gateway sends it the public card's request
    response = function.invoke(api_event("GET", "/.well-known/agent-card.json"))

    # Then it answers 200 with the card, its interfaces at the API stage's URL
    assert response["statusCode"] == 200, function.logs()
    card = json.loads(response["body"])
    assert card["name"] == "agent in a Lambda runtime"
    urls = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert urls == {
        "JSONRPC": "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1/",
        "HTTP+JSON": "https://abc123defg.execute-api.us-east-1.amazonaws.com/v1",
    }
