"""The push attempt log (``push.attempts``): one JSON line per webhook delivery attempt when
``A2A_PUSH_ATTEMPT_LOG`` names a file, nothing otherwise, never a secret. Real HTTP to a receiver on
127.0.0.1, the in-memory store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from a2a_serverless.adapters import MemoryTaskStore
from a2a_serverless.config import Settings
from a2a_serverless.models import AuthenticationInfo, TaskPushNotificationConfig
from a2a_serverless.ports import Scope
from a2a_serverless.push.attempts import ATTEMPT_LOG_VARIABLE, Attempt, AttemptLog, read_attempts
from a2a_serverless.push.delivery import DeliveryItem, deliver
from a2a_serverless.push.sender import WebhookSender
from a2a_serverless.push.signing import MemoryKeySource, NotificationSigner
from testkit.tasks import a_task_with_events

if TYPE_CHECKING:
    from conftest import WebhookReceiver  # tests/conftest.py (the fixture's type)

SCOPE = Scope("acme", "alice")
SECRETS = ("sekrit-token", "sekrit-credentials", "sekrit-query")


@pytest.fixture
def store() -> MemoryTaskStore:
    store = MemoryTaskStore()
    a_task_with_events(store, SCOPE, 2)
    return store


def _config(store: MemoryTaskStore, receiver: WebhookReceiver) -> None:
    config = TaskPushNotificationConfig(
        id="p1",
        task_id="t1",
        url=f"{receiver.url}/p1?key=sekrit-query",
        token="sekrit-token",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="sekrit-credentials"),
    )
    store.put_push_config(SCOPE, config)


def _deliver(store: MemoryTaskStore, sender: WebhookSender, attempt: int, log: AttemptLog | None = None) -> None:
    deliver(
        DeliveryItem(SCOPE.tenant, SCOPE.owner, "t1", "p1", up_to_seq=2),
        store=store,
        sender=sender,
        signer=NotificationSigner(MemoryKeySource(), issuer="https://agent.example"),
        attempt=attempt,
        max_attempts=2,
        timeout_seconds=2.0,
        attempt_log=log,
    )


def test_every_attempt_is_one_line_with_ids_status_latency_and_outcome(
    store: MemoryTaskStore,
    sender: WebhookSender,
    webhook_receiver: WebhookReceiver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the setting naming a file, and a webhook that fails its first answer
    path = tmp_path / "attempts.jsonl"
    log = AttemptLog(Settings.from_env({"A2A_STORE": "memory", ATTEMPT_LOG_VARIABLE: str(path)}).push_attempt_log)
    _config(store, webhook_receiver)
    webhook_receiver.fail_next(1, status=500)

    # When the delivery fails, then is retried and goes through
    _deliver(store, sender, attempt=1, log=log)
    _deliver(store, sender, attempt=2, log=log)

    # Then each POST left one line, in order, with what the console shows
    rows = list(read_attempts(path))
    assert [(r["seq"], r["attempt"], r["status"], r["outcome"]) for r in rows] == [
        (1, 1, 500, "retrying"),
        (1, 2, 204, "delivered"),
        (2, 2, 204, "delivered"),
    ]
    assert rows[0]["error"] == "HTTP 500"
    for row in rows:
        assert (row["tenant"], row["owner"], row["taskId"], row["configId"]) == ("acme", "alice", "t1", "p1")
        assert isinstance(row["latencyMs"], float)
        assert row["latencyMs"] >= 0
        assert row["time"].endswith("+00:00")
    # And no secret, no URL: not the query, the token, the credentials or the signed JWT
    text = path.read_text()
    jwts = {r.headers["x-a2a-notification-signature"] for r in webhook_receiver.requests}
    for secret in (*SECRETS, *jwts, webhook_receiver.url):
        assert secret not in text


def test_a_spent_budget_and_an_error_class_are_recorded(
    store: MemoryTaskStore, sender: WebhookSender, webhook_receiver: WebhookReceiver, tmp_path: Path
) -> None:
    # Given a webhook that is down, and then one nobody listens at
    log = AttemptLog(str(tmp_path / "attempts.jsonl"))
    _config(store, webhook_receiver)
    webhook_receiver.set_down(503)
    _deliver(store, sender, attempt=2, log=log)
    closed = TaskPushNotificationConfig(id="p2", task_id="t1", url="http://127.0.0.1:9/x")
    store.put_push_config(SCOPE, closed)
    deliver(
        DeliveryItem(SCOPE.tenant, SCOPE.owner, "t1", "p2", up_to_seq=1),
        store=store,
        sender=sender,
        signer=None,
        attempt=1,
        max_attempts=2,
        timeout_seconds=2.0,
        attempt_log=log,
    )
    # Then the last attempt is dead-lettered, and a connection failure names its class, with no status
    rows = list(read_attempts(log.path))
    assert (rows[0]["status"], rows[0]["outcome"]) == (503, "dead-lettered")
    assert (rows[1]["status"], rows[1]["outcome"]) == (None, "retrying")
    assert rows[1]["error"] == "connection failed (ConnectError)"


def test_nothing_is_written_when_the_setting_is_empty(
    store: MemoryTaskStore,
    sender: WebhookSender,
    webhook_receiver: WebhookReceiver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the setting empty (its default), in a working directory of its own
    monkeypatch.setenv(ATTEMPT_LOG_VARIABLE, "")
    monkeypatch.chdir(tmp_path)
    assert Settings.from_env({"A2A_STORE": "memory"}).push_attempt_log == ""
    _config(store, webhook_receiver)
    # When a delivery goes through
    _deliver(store, sender, attempt=1)
    # Then it was delivered and no file appeared
    assert len(webhook_receiver.accepted()) == 2
    assert list(tmp_path.iterdir()) == []


def test_the_setting_is_read_from_the_environment() -> None:
    settings = Settings.from_env({"A2A_STORE": "memory", "A2A_PUSH_ATTEMPT_LOG": "/tmp/x.jsonl"})
    assert settings.push_attempt_log == "/tmp/x.jsonl"


def test_processes_appending_at_once_never_tear_a_line(tmp_path: Path) -> None:
    # Given four processes appending 200 lines each to one log
    path = tmp_path / "attempts.jsonl"
    script = (
        "import sys\n"
        "from a2a_serverless.push.attempts import Attempt, AttemptLog\n"
        "log = AttemptLog(sys.argv[1])\n"
        "for n in range(200):\n"
        "    log.record(Attempt('', 'o', 't' * 500, sys.argv[2], n, 1, 204, '', 1.0, 'delivered'))\n"
    )
    children = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(k)], env=dict(os.environ)) for k in range(4)
    ]
    assert [child.wait(timeout=60) for child in children] == [0, 0, 0, 0]
    # Then every line is whole
    lines = path.read_bytes().splitlines()
    assert len(lines) == 800
    assert sorted({json.loads(line)["configId"] for line in lines}) == ["0", "1", "2", "3"]


def test_a_log_that_cannot_be_written_does_not_stop_the_delivery(tmp_path: Path) -> None:
    log = AttemptLog(str(tmp_path / "missing-dir" / "attempts.jsonl"))
    log.record(Attempt("", "o", "t1", "p1", 1, 1, 204, "", 1.0, "delivered"))  # logged, not raised
    assert list(read_attempts(log.path)) == []
