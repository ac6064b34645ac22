"""The process environment the local stack sets up, as Lambda would, before anything reads it."""

from __future__ import annotations

import os

from a2a_serverless_dev._environment import LocalEnvironment, apply_environment
from a2a_serverless_dev._template import FunctionEnvironment

ENDPOINT = "http://127.0.0.1:5555"


def _spec(executor: str | None = None) -> LocalEnvironment:
    return LocalEnvironment(
        endpoint_url=ENDPOINT,
        template_env=FunctionEnvironment(
            values={
                "A2A_TABLE_NAME": "local-table",
                "A2A_QUEUE_URL": "local-queue",
                "A2A_AUTH_MODE": "apigateway",
                "A2A_AGENT_NAME": "template name",
                "POWERTOOLS_SERVICE_NAME": "a2a-serverless",
            },
            resource_keys=frozenset({"A2A_TABLE_NAME", "A2A_QUEUE_URL"}),
        ),
        public_url="http://127.0.0.1:8000",
        executor=executor,
    )


def test_points_every_client_at_moto_with_fake_credentials() -> None:
    # Given: a shell configured for a real AWS account
    env = {
        "AWS_PROFILE": "prod",
        "AWS_DEFAULT_PROFILE": "prod",
        "AWS_ACCESS_KEY_ID": "AKIAREAL",
        "AWS_ENDPOINT_URL_SQS": "https://sqs.example",
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
        "AWS_REGION": "eu-west-1",
    }

    # When
    apply_environment(_spec(), env)

    # Then: nothing can reach past the local endpoint
    assert "AWS_PROFILE" not in env
    assert "AWS_DEFAULT_PROFILE" not in env
    assert "AWS_ENDPOINT_URL_SQS" not in env
    assert "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS" not in env
    assert env["AWS_ENDPOINT_URL"] == ENDPOINT
    assert env["AWS_ACCESS_KEY_ID"] == "testing"
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert env["AWS_CONFIG_FILE"] == env["AWS_SHARED_CREDENTIALS_FILE"] == os.devnull


def test_template_values_with_local_deviations() -> None:
    env: dict[str, str] = {}

    apply_environment(_spec(), env)

    assert env["A2A_STORE"] == "dynamodb"
    assert env["A2A_TABLE_NAME"] == "local-table"
    assert env["A2A_QUEUE_URL"] == "local-queue"
    assert env["A2A_PUBLIC_URL"] == "http://127.0.0.1:8000"
    assert env["A2A_AGENT_NAME"] == "template name"
    assert env["POWERTOOLS_SERVICE_NAME"] == "a2a-serverless"
    # No API Gateway authorizer runs locally
    assert env["A2A_AUTH_MODE"] == "none"
    assert "A2A_EXECUTOR" not in env


def test_the_shell_tunes_settings_but_not_resources() -> None:
    # Given: a developer's own settings, and stale resource names
    env = {
        "A2A_AUTH_MODE": "api-key",
        "A2A_AGENT_NAME": "mine",
        "A2A_TABLE_NAME": "stale",
        "A2A_STORE": "memory",
        "A2A_EXECUTOR": "from.shell:Agent",
    }

    # When
    apply_environment(_spec(executor="from.flag:Agent"), env)

    # Then
    assert env["A2A_AUTH_MODE"] == "api-key"
    assert env["A2A_AGENT_NAME"] == "mine"
    assert env["A2A_TABLE_NAME"] == "local-table"
    assert env["A2A_STORE"] == "dynamodb"
    assert env["A2A_EXECUTOR"] == "from.flag:Agent"


def test_the_push_signing_key_set_exists_before_the_first_notification() -> None:
    # Given the local stack's moto and the environment its functions get (signing on, as the
    # template's PushSigning default)
    from a2a_serverless.push.signing import SsmKeySource
    from a2a_serverless_dev._environment import moto_session, prepare_push_signing_keys
    from a2a_serverless_dev._moto import moto_server

    env = {"A2A_PUSH_SIGNING": "true", "A2A_PUSH_SIGNING_KEY_PARAMETER": "/a2a-local/push-signing-keys"}
    with moto_server() as endpoint:
        source = SsmKeySource(
            env["A2A_PUSH_SIGNING_KEY_PARAMETER"], client=moto_session().client("ssm", endpoint_url=endpoint)
        )
        assert source.load() is None
        # When the stack starts: the key set is created then, once
        assert prepare_push_signing_keys(endpoint, env) is True
        stored = source.load()
        assert stored is not None
        assert '"kid"' in stored
        # And a restart keeps it (the functions keep signing with the key receivers have)
        assert prepare_push_signing_keys(endpoint, env) is False
        assert source.load() == stored
        # And with signing off nothing is created
        other = {"A2A_PUSH_SIGNING": "false", "A2A_PUSH_SIGNING_KEY_PARAMETER": "/a2a-local/other"}
        assert prepare_push_signing_keys(endpoint, other) is False
        assert SsmKeySource("/a2a-local/other", client=source.client).load() is None
