"""What the push suites share: the production webhook sender, allowed to POST to 127.0.0.1 (the
receiver these tests run), as in local development."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from a2a_serverless.push.sender import WebhookSender


@pytest.fixture
def sender() -> Iterator[WebhookSender]:
    with WebhookSender(timeout=2.0, allow_private=True) as s:
        yield s
