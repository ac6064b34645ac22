"""Each function's cold start on Lambda checks what its settings turn on (a2a_serverless.lambda_.startup):
a missing package or a bad setting fails the init phase (importing the handler module, as Lambda's
runtime does) with one line naming what to install or set, never each request."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import a2a_serverless.telemetry as telemetry
from a2a_serverless.lambda_.startup import StartupError

FUNCTIONS = [
    "agent_card",
    "authorizer",
    "create_push_config",
    "dead_letter",
    "delete_push_config",
    "durable_worker",
    "gateway",
    "get_extended_card",
    "get_push_config",
    "list_push_configs",
    "list_tasks",
    "push_delivery",
    "push_dispatcher",
    "send_message",
    "sweeper",
    "worker",
]


@pytest.fixture
def on_lambda(monkeypatch: pytest.MonkeyPatch, lambda_aws: Any) -> Iterator[Any]:
    """The environment of a deployed function (moto's table and queues); each handler module is
    imported afresh, as a new execution environment would."""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "a2a-Function")
    monkeypatch.delenv("A2A_TRACING", raising=False)
    yield lambda_aws
    for name in FUNCTIONS:
        sys.modules.pop(f"a2a_serverless.functions.{name}", None)
    telemetry.reset()


def _cold_start(function: str) -> object:
    sys.modules.pop(f"a2a_serverless.functions.{function}", None)
    return importlib.import_module(f"a2a_serverless.functions.{function}")


def _without_opentelemetry_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if only the base install were there: ``import opentelemetry.sdk`` fails."""
    for name in [n for n in sys.modules if n.startswith("opentelemetry.sdk")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    monkeypatch.delitem(sys.modules, "a2a_serverless.telemetry._sdk", raising=False)
    monkeypatch.delattr(telemetry, "_sdk", raising=False)
    telemetry.reset()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_tracing_without_the_sdk_fails_every_functions_init_in_one_line(
    function: str, on_lambda: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given tracing turned on where the OpenTelemetry SDK is not installed
    _without_opentelemetry_sdk(monkeypatch)
    on_lambda.configure(A2A_TRACING="otlp")

    # When Lambda initialises the function
    with pytest.raises(StartupError) as failed:
        _cold_start(function)

    # Then the init fails with one line naming the extra, logged at ERROR
    line = str(failed.value)
    assert line.startswith("A2A_TRACING=otlp needs the OpenTelemetry SDK, which is not installed (no module ")
    assert line.endswith("): pip install 'a2a-serverless[tracing]'")
    assert "\n" not in line
    (logged,) = [r for r in caplog.records if r.getMessage().startswith("cannot start")]
    assert logged.levelname == "ERROR"
    assert logged.getMessage() == f"cannot start the function: {line}"


@pytest.mark.parametrize(
    ("function", "settings", "line"),
    [
        pytest.param(
            "authorizer",
            {"A2A_AUTHORIZER_MODE": "jwt", "A2A_JWT_ISSUER": "https://issuer.example"},
            "A2A_JWT_AUDIENCE is required when A2A_AUTHORIZER_MODE=jwt",
            id="jwt-without-audience",
        ),
        pytest.param(
            "agent_card",
            {"A2A_CARD_SIGNING_KEY_FILE": "/nonexistent/card-key.pem"},
            "A2A_CARD_SIGNING_KEY_FILE '/nonexistent/card-key.pem' is not a file",
            id="card-signing-key-file-missing",
        ),
        pytest.param(
            "send_message",
            {"A2A_EXECUTION_MODE": "durable", "A2A_DURABLE_FUNCTION": ""},
            "A2A_EXECUTION_MODE=durable needs A2A_DURABLE_FUNCTION",
            id="durable-without-its-function",
        ),
        pytest.param(
            "gateway",
            {"A2A_TRACING": "file"},
            "A2A_TRACING=file needs A2A_TRACING_DIR",
            id="file-tracing-without-a-directory",
        ),
        pytest.param(
            "push_delivery",
            {"A2A_TRACING": "otlp", "A2A_TRACING_SIGV4": "xray", "AWS_REGION": "", "AWS_DEFAULT_REGION": ""},
            r"A2A_TRACING_SIGV4=xray needs the region to sign for \(AWS_REGION\)",
            id="signed-exports-without-a-region",
        ),
        pytest.param(
            "worker",
            {"A2A_EXECUTOR": "no_such_pkg.agent:Agent"},
            "executor 'no_such_pkg.agent:Agent': cannot import module 'no_such_pkg.agent'",
            id="executor-that-does-not-import",
        ),
        pytest.param(
            "sweeper",
            {"A2A_RUN_LEASE_SECONDS": "1"},
            "A2A_RUN_LEASE_SECONDS: must be at least 3",
            id="a-setting-out-of-bounds",
        ),
    ],
)
def test_a_bad_setting_fails_the_init_naming_what_to_set(
    function: str, settings: dict[str, str], line: str, on_lambda: Any
) -> None:
    on_lambda.configure(**settings)

    with pytest.raises(StartupError, match=line) as failed:
        _cold_start(function)

    assert "\n" not in str(failed.value)


@pytest.mark.parametrize(
    ("function", "settings"),
    [
        pytest.param("authorizer", {"A2A_EXECUTION_MODE": "durable", "A2A_DURABLE_FUNCTION": ""}, id="authorizer"),
        pytest.param("list_tasks", {"A2A_EXECUTION_MODE": "durable", "A2A_DURABLE_FUNCTION": ""}, id="list-tasks"),
        pytest.param("worker", {"A2A_TRACING": "memory"}, id="worker-tracing"),
    ],
)
def test_a_function_starts_without_what_only_others_need(
    function: str, settings: dict[str, str], on_lambda: Any
) -> None:
    # Durable mode: only the functions that start executions need the durable worker's name
    on_lambda.configure(**settings)

    assert callable(getattr(_cold_start(function), "handler", None))


def test_off_lambda_importing_a_handler_checks_nothing(monkeypatch: pytest.MonkeyPatch, on_lambda: Any) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME")
    on_lambda.configure(A2A_TRACING="bogus")

    assert callable(getattr(_cold_start("send_message"), "handler", None))
