"""What the local stack tells its processes about tracing: on, into its own directory, unless the
shell says otherwise; ``--otlp-endpoint`` adds the OTLP exporter and names the collector."""

from __future__ import annotations

import pytest

from a2a_serverless_dev._environment import LocalEnvironment, apply_environment
from a2a_serverless_dev._template import FunctionEnvironment


def environment(shell: dict[str, str], otlp: str = "") -> dict[str, str]:
    spec = LocalEnvironment(
        endpoint_url="http://127.0.0.1:5000",
        template_env=FunctionEnvironment(values={}, resource_keys=frozenset()),
        public_url="http://127.0.0.1:8000",
        tracing_dir="/run/a2a-dev/spans",
        otlp_endpoint=otlp,
    )
    env = dict(shell)
    apply_environment(spec, env)
    return env


def test_the_stack_traces_into_its_own_directory() -> None:
    env = environment({})
    assert (env["A2A_TRACING"], env["A2A_TRACING_DIR"]) == ("file", "/run/a2a-dev/spans")
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in env


def test_an_otlp_endpoint_adds_the_collector() -> None:
    env = environment({}, otlp="http://127.0.0.1:4318")
    assert env["A2A_TRACING"] == "file,otlp"
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:4318"


@pytest.mark.parametrize("shell", [pytest.param("off", id="off"), pytest.param("memory", id="memory")])
def test_the_shell_s_own_choice_wins(shell: str) -> None:
    assert environment({"A2A_TRACING": shell})["A2A_TRACING"] == shell
