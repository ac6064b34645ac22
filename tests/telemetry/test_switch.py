"""The switch: off by default, and then no OpenTelemetry import at all; ``A2A_TRACING`` names the
exporters, and a wrong value says what is allowed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from a2a_serverless.telemetry._switch import TracingConfigError, parse

# What the traced code paths call, run once each with tracing in whatever state the environment says.
CALLS = """
import asyncio
from a2a_serverless import telemetry
import a2a_serverless.functions.worker, a2a_serverless.functions.push_delivery, a2a_serverless.transport.app
with telemetry.server_call("SendMessage", {}) as call:
    call.request(version="1.0", tenant="", fields={"message": {"messageId": "m"}})
with telemetry.enqueue("t", "m") as carried:
    pass
with telemetry.commit(1, 10) as note:
    note.stored(1)
with telemetry.dispatch(carried, task_id="t", up_to_seq=1, records=1, links=[]):
    pass
telemetry.traceparent()
"""


def modules_after_calls(environment: dict[str, str]) -> set[str]:
    code = CALLS + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment)
    return set(json.loads(out.stdout.splitlines()[-1]))


def opentelemetry_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m == "opentelemetry" or m.startswith("opentelemetry."))


def test_tracing_off_imports_no_opentelemetry() -> None:
    # Given an environment that does not switch tracing on (a fresh interpreter, as a cold start)
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_TRACING", "AWS_LAMBDA"))}

    # When the functions are imported and every traced code path runs once
    loaded = modules_after_calls(environment)

    # Then no OpenTelemetry module was imported
    assert "a2a_serverless.telemetry" in loaded
    assert opentelemetry_modules(loaded) == []


def test_tracing_on_loads_the_sdk_on_first_use() -> None:
    # Given tracing switched on (the same check, so it can tell the two apart)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_LAMBDA")}
    environment["A2A_TRACING"] = "memory"

    # When the same code paths run, then the SDK is loaded
    assert "opentelemetry.sdk.trace" in modules_after_calls(environment)


@pytest.mark.parametrize(
    ("value", "modes"),
    [
        pytest.param("", frozenset(), id="unset"),
        pytest.param("off", frozenset(), id="off"),
        pytest.param("OTLP", frozenset({"otlp"}), id="otlp"),
        pytest.param("file, otlp", frozenset({"file", "otlp"}), id="two"),
    ],
)
def test_a2a_tracing_names_the_exporters(value: str, modes: frozenset[str]) -> None:
    assert parse({"A2A_TRACING": value, "A2A_TRACING_DIR": "/tmp/x"}).modes == modes


def test_an_unknown_exporter_is_refused_by_name() -> None:
    with pytest.raises(TracingConfigError, match="xray"):
        parse({"A2A_TRACING": "otlp,xray"})


def test_file_needs_its_directory() -> None:
    with pytest.raises(TracingConfigError, match="A2A_TRACING_DIR"):
        parse({"A2A_TRACING": "file"})


def test_content_is_off_unless_asked_for() -> None:
    assert parse({"A2A_TRACING": "memory"}).content is False
    assert parse({"A2A_TRACING": "memory", "A2A_TRACING_CONTENT": "true"}).content is True


def test_tracing_on_without_the_sdk_says_which_extra_to_install() -> None:
    # Given tracing switched on where the SDK cannot be imported (a layer built without the extra)
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"  # what a missing package looks like to an import
        "from a2a_serverless import telemetry\n"
        "try:\n"
        "    telemetry.tracing_on()\n"
        "except telemetry.TracingConfigError as exc:\n"
        "    print(exc)\n"
    )
    environment = {**os.environ, "A2A_TRACING": "otlp"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment)

    # Then the first traced call says what to install
    assert "a2a-serverless[tracing]" in out.stdout
