"""The start-up checks (a2a_serverless.lambda_.startup): what each configured feature needs, in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from a2a_serverless.config import Settings
from a2a_serverless.lambda_.startup import FRAMEWORK_EXTRAS, StartupError, check, executor_problem

MEMORY = {"A2A_STORE": "memory"}
NEEDS_PUBLIC_URL = (
    "card signing needs A2A_PUBLIC_URL (the agent's public base URL, which the signed card names):"
    " without it the card would name whatever Host a request carried"
)


def test_a_configuration_whose_features_have_what_they_need_gives_its_settings() -> None:
    settings = check({**MEMORY, "A2A_TRACING": "memory", "A2A_EXECUTION_MODE": "durable"}, executor=True)

    assert isinstance(settings, Settings)
    assert settings.execution_mode == "durable"


def test_every_problem_is_told_at_once_in_one_line(tmp_path: Path) -> None:
    environ = {
        **MEMORY,
        "A2A_TRACING": "file",
        "A2A_CARD_SIGNING_KEY_FILE": str(tmp_path / "missing.pem"),
        "A2A_EXECUTION_MODE": "durable",
    }

    with pytest.raises(StartupError) as failed:
        check(environ, durable_function=True)

    assert str(failed.value).split("; ") == [
        "A2A_TRACING=file needs A2A_TRACING_DIR, the directory to write spans to",
        f"A2A_CARD_SIGNING_KEY_FILE {str(tmp_path / 'missing.pem')!r} is not a file",
        NEEDS_PUBLIC_URL,
        "A2A_EXECUTION_MODE=durable needs A2A_DURABLE_FUNCTION (the durable worker's qualified ARN or name:alias)"
        " to start each task's execution",
    ]


@pytest.mark.parametrize(
    ("where", "refused"),
    [
        pytest.param({}, True, id="a-local-server"),
        pytest.param({"AWS_LAMBDA_FUNCTION_NAME": "card", "AWS_SAM_LOCAL": "true"}, True, id="sam-local"),
        # API Gateway's event says which of the API's URLs a request came to
        pytest.param({"AWS_LAMBDA_FUNCTION_NAME": "card"}, False, id="lambda-behind-api-gateway"),
        pytest.param({"A2A_PUBLIC_URL": "http://127.0.0.1:8000"}, False, id="a-configured-url"),
    ],
)
def test_card_signing_without_a_url_to_trust_refuses_to_start(
    where: dict[str, str], refused: bool, tmp_path: Path
) -> None:
    # Given a card signing key, in a process whose requests' URL may come only from their Host
    key = tmp_path / "card-key.pem"
    key.write_text("a key file (read at the first card)")
    environ = {**MEMORY, "A2A_CARD_SIGNING_KEY_FILE": str(key), **where}

    # Then it does not start, in one line naming the setting; else it starts
    if refused:
        with pytest.raises(StartupError) as failed:
            check(environ)
        assert str(failed.value) == NEEDS_PUBLIC_URL
    else:
        assert check(environ).signs_cards


@pytest.mark.parametrize("framework", sorted({"pydantic_ai", "langgraph", "strands", "agents", "google.adk"}))
def test_an_executor_whose_framework_is_missing_names_the_extra_to_install(
    framework: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an agent module built on a framework that is not installed
    package = f"agent_on_{framework.replace('.', '_')}"
    (tmp_path / f"{package}.py").write_text(f"import {framework}\n\nexecutor = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, framework, None)

    # When its executor is checked
    problem = executor_problem(f"{package}:executor")

    # Then one line names the kit's extra that installs it
    assert problem == (
        f"A2A_EXECUTOR '{package}:executor' needs {framework}, which is not installed: "
        f"pip install 'a2a-serverless[{FRAMEWORK_EXTRAS[framework]}]'"
    )


def test_an_executor_that_fails_otherwise_says_why() -> None:
    assert executor_problem("no_such_pkg.agent:Agent") == (
        "executor 'no_such_pkg.agent:Agent': cannot import module 'no_such_pkg.agent' "
        "(ModuleNotFoundError: No module named 'no_such_pkg')"
    )
    assert executor_problem("a2a_serverless.execution.demo:DemoAgentExecutor") is None
