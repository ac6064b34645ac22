"""What a Lambda function's cold start imports: only what the function uses (issue 29's cold start).

Each handler module is imported in a fresh interpreter, as Lambda's runtime does, and the modules it
loaded are read from ``sys.modules``. bench/README.md ("`lambda_import_times.py`: cold start in the Lambda
image") measures what these cuts are worth; this keeps them from silently coming back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# The app, its method table, the operations, the store port and the models: the HTTP functions' core.
HTTP_CORE = (
    "a2a_serverless.lambda_.http",
    "a2a_serverless.transport",
    "a2a_serverless.methods",
    "a2a_serverless.operations",
    "mangum",
    "starlette",
)


def loaded_by(module: str, then: str = "") -> set[str]:
    """The modules a fresh interpreter holds after importing ``module`` (off Lambda: nothing
    preloaded), and running ``then`` if given."""
    environment = {k: v for k, v in os.environ.items() if k != "AWS_LAMBDA_FUNCTION_NAME"}
    code = f"import json, sys\nimport {module}\n{then}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment)
    return set(json.loads(out.stdout.splitlines()[-1]))  # the last line: what ran may log before it


def under(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


# What the authorizer's jwt mode loads on its first request (lambda_.oidc), never at import.
JWT_STACK = ("a2a_serverless.jwt", "a2a_serverless.lambda_.oidc", "joserfc", "cryptography", "httpx")


def test_the_authorizer_loads_neither_the_app_nor_the_models() -> None:
    # Given the authorizer's entry point, when a cold start imports it
    loaded = loaded_by("a2a_serverless.functions.authorizer")

    # Then it has what it runs in every mode (settings, logging) and none of the app's core, nor
    # pydantic (the settings are plain data), nor the JWT stack (jwt mode loads it on first use)
    assert {"a2a_serverless.config", "a2a_serverless.lambda_.authorizer"} <= loaded
    for package in (*HTTP_CORE, "a2a_serverless.models", "a2a_serverless.ports", "a2a_serverless.wiring"):
        assert under(loaded, package) == [], f"the authorizer imports {package}"
    for package in ("pydantic", "pydantic_core", *JWT_STACK):
        assert under(loaded, package) == [], f"the authorizer imports {package} at its cold start"


def test_the_authorizer_in_jwt_mode_loads_the_jwt_stack_on_its_first_request() -> None:
    # Given the authorizer in jwt mode, when its first request builds its services
    code = (
        "from a2a_serverless.config import Settings\n"
        "from a2a_serverless.lambda_.authorizer import AuthorizerServices\n"
        "AuthorizerServices.from_settings(Settings(store='memory', authorizer_mode='jwt',"
        " jwt_issuer='https://issuer.example', jwt_audience='app'))"
    )
    loaded = loaded_by("a2a_serverless.functions.authorizer", then=code)

    # Then the JWT stack and the HTTP client for the issuer's keys are loaded (what the mode's first
    # request pays, bench/README.md), still without the app's core
    for package in JWT_STACK:
        assert under(loaded, package) != [], f"jwt mode does not load {package}"
    assert under(loaded, "a2a_serverless.models") == []


@pytest.mark.parametrize(
    "function",
    [
        pytest.param("dead_letter", id="dead-letter"),
        pytest.param("sweeper", id="sweeper"),
        pytest.param("worker", id="worker"),
        pytest.param("push_delivery", id="push-delivery"),
        pytest.param("push_dispatcher", id="push-dispatcher"),
    ],
)
def test_event_functions_do_not_load_the_http_app(function: str) -> None:
    # Given a function driven by SQS, a stream or a schedule, when a cold start imports it
    loaded = loaded_by(f"a2a_serverless.functions.{function}")

    # Then the API's app (Starlette under mangum, the method table) is not loaded with it
    assert f"a2a_serverless.functions.{function}" in loaded
    for package in HTTP_CORE:
        assert under(loaded, package) == [], f"{function} imports {package}"


def test_the_sweeper_loads_no_batch_processing_nor_asyncio() -> None:
    # Given the scheduled sweeper (no batch to process, no agent to run), when a cold start imports it
    loaded = loaded_by("a2a_serverless.functions.sweeper")

    # Then neither Powertools' batch processing (SQS records) nor the executor API and asyncio load
    for package in ("aws_lambda_powertools.utilities.batch", "a2a_serverless.execution.api", "asyncio"):
        assert under(loaded, package) == [], f"the sweeper imports {package}"


def test_the_durable_worker_loads_no_sqs_batch_processing() -> None:
    # Given the durable worker (one durable execution per invocation, no SQS batch), when a cold
    # start imports it
    loaded = loaded_by("a2a_serverless.functions.durable_worker")

    # Then the SQS entry points and Powertools' batch processing are not loaded with it
    for package in ("a2a_serverless.lambda_.sqs", "aws_lambda_powertools.utilities.batch"):
        assert under(loaded, package) == [], f"the durable worker imports {package}"


@pytest.mark.parametrize(
    "function",
    [
        pytest.param("dead_letter", id="dead-letter"),
        pytest.param("sweeper", id="sweeper"),
        pytest.param("worker", id="worker"),
        pytest.param("durable_worker", id="durable-worker"),
        pytest.param("push_delivery", id="push-delivery"),
        pytest.param("push_dispatcher", id="push-dispatcher"),
    ],
)
def test_functions_that_handle_no_card_do_not_create_the_card_models(function: str) -> None:
    # Given a function that never handles an agent card, when a cold start imports it
    loaded = loaded_by(f"a2a_serverless.functions.{function}")

    # Then the card's models (created on first use) are not loaded with the others
    assert "a2a_serverless.models.core" in loaded
    assert "a2a_serverless.models.card" not in loaded


def test_the_models_package_exports_every_card_model() -> None:
    # The card's models are exported by name before they are created, then are the card module's
    from a2a_serverless import models
    from a2a_serverless.models import card

    assert sorted(models._CARD_ALL) == sorted(card.__all__)
    assert all(getattr(models, name) is getattr(card, name) for name in card.__all__)


# An API function's first request, on the in-memory store, through its handler as Lambda calls it.
FIRST_REQUEST = """
import json, os
os.environ["A2A_STORE"] = "memory"
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "f", 512, "r"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:f"
    def get_remaining_time_in_millis(self): return 30_000
event = json.load(open({events!r}))
event["httpMethod"] = event["requestContext"]["httpMethod"] = {method!r}
event["path"] = event["resource"] = event["requestContext"]["resourcePath"] = {path!r}
event["body"] = {body!r}
answer = {module}.handler(event, Context())
assert answer["statusCode"] == {status}, answer
"""
EVENTS = os.path.join(os.path.dirname(__file__), "events", "apigw_rest_post_message_send.json")


@pytest.mark.parametrize(
    ("function", "method", "path", "body", "status"),
    [
        pytest.param("list_tasks", "GET", "/tasks", None, 200, id="list-tasks"),
        pytest.param(
            "send_message",
            "POST",
            "/message:send",
            json.dumps(
                {"message": {"messageId": "m-1", "role": "ROLE_USER", "taskId": "t-0", "parts": [{"text": "hi"}]}}
            ),
            404,
            id="send-message",
        ),
        pytest.param(
            "get_push_config", "GET", "/tasks/t-0/pushNotificationConfigs/c-1", None, 404, id="get-push-config"
        ),
    ],
)
def test_an_api_functions_first_request_does_not_load_anyios_event_loop_backend(
    function: str, method: str, path: str, body: str | None, status: int
) -> None:
    # Given an API function, when its first request runs its operation off the event loop
    module = f"a2a_serverless.functions.{function}"
    first = FIRST_REQUEST.format(events=EVENTS, method=method, path=path, body=body, module=module, status=status)
    loaded = loaded_by(module, then=first)

    # Then it has answered without anyio's asyncio backend (Starlette's run_in_threadpool loads it:
    # about 10 ms of the first call's CPU in the Lambda image, bench/README.md)
    assert "a2a_serverless.transport.rows" in loaded
    assert under(loaded, "anyio._backends") == [], f"{function}'s first request loads anyio's backend"
