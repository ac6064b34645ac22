"""moto (in process) with the template's table and queues, and the environment a deployed function
sees, for driving the Lambda entry points as Lambda would."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from a2a_serverless.lambda_.push import reset_push_services
from a2a_serverless.wiring import reset_runtime
from a2a_serverless_dev.resources import LocalResources, create_resources


@dataclass
class LambdaAws:
    dynamodb: Any
    sqs: Any
    resources: LocalResources
    monkeypatch: pytest.MonkeyPatch

    def configure(self, **settings: str) -> None:
        """Set function environment variables; the runtimes are rebuilt on the next invocation."""
        for key, value in settings.items():
            self.monkeypatch.setenv(key, value)
        reset_runtime()
        reset_push_services()

    def configure_push(self, **settings: str) -> None:
        """Push delivery wired to the template's queues: loopback webhooks allowed (the tests'
        receivers), signing on (keys bootstrapped in moto's SSM), two attempts; ``settings`` win."""
        queues = self.resources.queue_urls
        self.configure(
            **{
                "A2A_PUSH_QUEUE_URL": queues["PushDeliveryQueue"],
                "A2A_PUSH_DEAD_LETTER_QUEUE_URL": queues["PushDeadLetterQueue"],
                "A2A_ALLOW_PRIVATE_WEBHOOKS": "true",
                "A2A_PUSH_SIGNING": "true",
                "A2A_PUSH_SIGNING_KEY_PARAMETER": "/fn-test/signing-keys",
                "A2A_PUBLIC_URL": "https://agent.example/v1",
                "A2A_PUSH_MAX_ATTEMPTS": "2",
                **settings,
            }
        )


@pytest.fixture
def lambda_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[LambdaAws]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "A2ATest",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        aws = LambdaAws(dynamodb, sqs, create_resources(dynamodb, sqs, prefix="fn-test"), monkeypatch)
        aws.configure(
            A2A_STORE="dynamodb",
            A2A_TABLE_NAME=aws.resources.tables["TasksTable"],
            A2A_QUEUE_URL=aws.resources.queue_urls["WorkQueue"],
        )
        yield aws
        reset_push_services()
        reset_runtime()
