"""Settings: every A2A_ variable read and checked at cold start, with one ConfigError naming each bad
one; numbers may come as the environment's text, and are held as their type."""

from __future__ import annotations

import dataclasses

import pytest

from a2a_serverless.config import ConfigError, Settings

MEMORY = {"A2A_STORE": "memory"}


def test_numbers_and_lists_from_the_environment_are_held_as_their_types() -> None:
    # Given numbers, flags and lists as the environment holds them (text)
    env = {
        **MEMORY,
        "A2A_PUSH_MAX_ATTEMPTS": "5",
        "A2A_PUSH_TIMEOUT_SECONDS": "3",
        "A2A_STREAMING": "off",
        "A2A_TENANTS": "acme, , beta",
        "A2A_API_KEYS": '{"k1": "alice"}',
        "A2A_API_AUTH": "AWS_IAM",
    }

    # When the settings are read
    settings = Settings.from_env(env)

    # Then each is of its setting's type (an int as a float where a float is wanted)
    assert settings.push_max_attempts == 5
    assert type(settings.push_max_attempts) is int
    assert settings.push_timeout_seconds == 3.0
    assert type(settings.push_timeout_seconds) is float
    assert settings.streaming is False
    assert settings.tenants == ("acme", "beta")
    assert settings.api_keys == {"k1": "alice"}
    assert settings.api_auth == "aws_iam"  # the template's AuthMode, in any case


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        pytest.param("A2A_STORE", "sqlite", "A2A_STORE: must be one of 'dynamodb', 'memory'", id="not-a-choice"),
        pytest.param("A2A_PUSH_MAX_ATTEMPTS", "0", "A2A_PUSH_MAX_ATTEMPTS: must be at least 1", id="below-ge"),
        pytest.param("A2A_PUSH_TIMEOUT_SECONDS", "0", "A2A_PUSH_TIMEOUT_SECONDS: must be greater than 0", id="gt"),
        pytest.param("A2A_PUSH_TIMEOUT_SECONDS", "61", "A2A_PUSH_TIMEOUT_SECONDS: must be at most 60", id="above-le"),
        pytest.param("A2A_MAX_HISTORY", "1.5", "A2A_MAX_HISTORY: must be an integer, not '1.5'", id="not-an-int"),
        pytest.param("A2A_POLL_INTERVAL_SECONDS", "fast", "must be a number, not 'fast'", id="not-a-number"),
        pytest.param(
            "A2A_EXECUTOR", "my_agent.Agent", "A2A_EXECUTOR: must look like 'package.module:ClassName'", id="path"
        ),
        pytest.param("A2A_API_KEYS", '["k1"]', "A2A_API_KEYS: must be a JSON object of key -> principal", id="keys"),
    ],
)
def test_a_bad_value_fails_the_cold_start_naming_its_variable(variable: str, value: str, message: str) -> None:
    # Given one bad variable, when the settings are read, then ConfigError says which and why
    with pytest.raises(
        ConfigError, match="invalid configuration: .*" + message.replace("(", r"\(").replace(")", r"\)")
    ):
        Settings.from_env({**MEMORY, variable: value})


def test_every_bad_value_is_named_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({**MEMORY, "A2A_PUSH_MAX_ATTEMPTS": "0", "A2A_CANCEL_WAIT_SECONDS": "-1"})
    assert "A2A_PUSH_MAX_ATTEMPTS" in str(caught.value)
    assert "A2A_CANCEL_WAIT_SECONDS" in str(caught.value)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"streaming": "yes"}, id="text-for-a-flag"),
        pytest.param({"max_history": True}, id="flag-for-a-number"),
        pytest.param({"tenants": "acme"}, id="text-for-a-list"),
        pytest.param({"table_name": 7}, id="number-for-text"),
    ],
)
def test_settings_built_in_code_are_checked_as_well(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="invalid configuration"):
        Settings(store="memory", **options)  # type: ignore[arg-type]


def test_a_copy_with_changes_is_checked_again() -> None:
    settings = Settings(store="memory")
    assert dataclasses.replace(settings, cancel_wait_seconds=5).cancel_wait_seconds == 5.0
    with pytest.raises(ConfigError, match="A2A_CANCEL_WAIT_SECONDS"):
        dataclasses.replace(settings, cancel_wait_seconds=100)


@pytest.mark.parametrize(
    "url", ["agent.example.com", "ftp://agent.example.com", "https://agent.example.com/?a=1", "/a2a"]
)
def test_a_public_url_that_is_not_an_absolute_base_url_fails_the_cold_start(url: str) -> None:
    with pytest.raises(ConfigError, match="A2A_PUBLIC_URL must be the agent's absolute base URL"):
        Settings.from_env({**MEMORY, "A2A_PUBLIC_URL": url})


@pytest.mark.parametrize(
    "url", ["https://agent.example.com", "https://agent.example.com/a2a/", "http://127.0.0.1:8000"]
)
def test_a_public_url_is_an_http_or_https_base_url(url: str) -> None:
    assert Settings.from_env({**MEMORY, "A2A_PUBLIC_URL": url}).public_url == url
