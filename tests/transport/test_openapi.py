"""The generated OpenAPI description of the REST binding: valid, and exactly the routes served."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openapi_spec_validator import validate
from starlette.routing import Route

from a2a_serverless.config import Settings
from a2a_serverless.delegation.hook import HOOK_PATH
from a2a_serverless.methods import METHODS
from a2a_serverless.transport import CARD_PATH
from a2a_serverless.transport.app import JWKS_PATH, create_app
from a2a_serverless.transport.openapi import openapi_document
from a2a_serverless.wiring import build_runtime

NOT_REST_V1 = {"/", CARD_PATH, JWKS_PATH, HOOK_PATH}  # HOOK_PATH: delegation's push receiver, not A2A


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document()


def served_v1_routes() -> set[tuple[str, str]]:
    """(verb, path) of every v1.0 REST route the app serves: not JSON-RPC, the card, the JWKS, or
    the v0.3 ``/v1`` binding."""
    app = create_app(build_runtime(Settings(store="memory")))
    served = set()
    for route in app.routes:
        assert isinstance(route, Route)
        if route.path in NOT_REST_V1 or (route.name or "").endswith("/v0.3"):
            continue
        assert route.methods is not None
        served |= {(verb, route.path) for verb in route.methods}
    return served


def test_is_a_valid_openapi_31_document(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    validate(document)
    json.dumps(document, allow_nan=False)  # JSON as it is, no post-processing needed


def test_describes_every_served_route_and_nothing_else(document: dict[str, Any]) -> None:
    described = {(verb.upper(), path) for path, item in document["paths"].items() for verb in item}
    assert described == served_v1_routes()


def test_every_method_has_a_root_and_a_tenant_operation(document: dict[str, Any]) -> None:
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    for method in METHODS:
        for route in method.routes:
            for path in (route.path, "/{tenant}" + route.path):
                operation = document["paths"][path][route.verb.lower()]
                assert operation["tags"] == [method.name]
                params = {(p["in"], p["name"]) for p in operation["parameters"]}
                assert ("header", "A2A-Version") in params
                assert ("path", "tenant") in params if path.startswith("/{tenant}") else True


def test_query_parameters_are_the_request_fields_in_camel_case(document: dict[str, Any]) -> None:
    listing = document["paths"]["/tasks"]["get"]
    query = {p["name"] for p in listing["parameters"] if p["in"] == "query"}
    assert query == {
        "contextId",
        "status",
        "pageSize",
        "pageToken",
        "historyLength",
        "statusTimestampAfter",
        "includeArtifacts",
    }
    get = document["paths"]["/tasks/{id}"]["get"]
    assert {p["name"] for p in get["parameters"] if p["in"] == "query"} == {"historyLength"}
    configs = document["paths"]["/tasks/{task_id}/pushNotificationConfigs"]["get"]
    assert {p["name"] for p in configs["parameters"] if p["in"] == "query"} == {"pageSize", "pageToken"}


def test_bodies_and_responses_come_from_the_models(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    send = document["paths"]["/message:send"]["post"]
    assert send["requestBody"]["required"] is True
    assert send["requestBody"]["content"]["application/a2a+json"]["schema"]["$ref"].endswith("/SendMessageRequest")
    assert send["responses"]["200"]["content"]["application/a2a+json"]["schema"]["$ref"].endswith(
        "/SendMessageResponse"
    )
    assert send["responses"]["default"]["content"]["application/a2a+json"]["schema"]["$ref"].endswith("/Error")
    cancel = document["paths"]["/tasks/{id}:cancel"]["post"]
    assert cancel["requestBody"]["required"] is False  # the id is in the path; the body may be empty
    stream = document["paths"]["/message:stream"]["post"]["responses"]["200"]["content"]
    assert stream["text/event-stream"]["schema"]["$ref"].endswith("/StreamResponse")
    delete = document["paths"]["/tasks/{task_id}/pushNotificationConfigs/{id}"]["delete"]
    assert delete["responses"]["200"]["content"]["application/a2a+json"]["schema"]["maxProperties"] == 0
    # ProtoJSON: camelCase names, enums by name, bytes as base64, a required oneof as oneOf.
    assert set(schemas["Message"]["required"]) == {"messageId", "role", "parts"}
    assert "TASK_STATE_INPUT_REQUIRED" in schemas["TaskState"]["enum"]
    assert schemas["Part"]["properties"]["raw"]["anyOf"][0]["format"] == "byte"
    assert [branch["required"] for branch in schemas["Part"]["oneOf"]] == [["text"], ["raw"], ["url"], ["data"]]
    assert set(schemas["ListTasksResponse"]["required"]) == {"tasks", "nextPageToken", "pageSize", "totalSize"}
