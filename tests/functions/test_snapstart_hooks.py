"""SnapStart's restore hooks (a2a_serverless.lambda_.snapstart), called as Lambda's Python runtime
calls them: an entry point is imported (its init, which registers them through
``snapshot_restore_py``), then the before-snapshot hooks run, then, in each environment restored
from the snapshot, the after-restore hooks. ``snapshot_restore_py`` exists only in Lambda's runtime:
here a module of that name records what is registered, and moto serves the AWS calls in process."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from lambda_events import EVENTS, body, invoke

import a2a_serverless
from a2a_serverless.aws import dynamodb_client
from a2a_serverless.lambda_ import snapstart
from a2a_serverless.lambda_.authorizer import authorizer_services, reset_authorizer_services
from a2a_serverless.lambda_.push import push_services
from a2a_serverless.wiring import get_runtime

Hook = Callable[[], None]


@dataclass
class LambdaRuntimeHooks:
    """What the entry points registered with ``snapshot_restore_py``, in order."""

    before_snapshot: list[Hook] = field(default_factory=list)
    after_restore: list[Hook] = field(default_factory=list)

    def snapshot(self) -> None:
        for hook in self.before_snapshot:
            hook()

    def restore(self) -> None:
        for hook in self.after_restore:
            hook()


@pytest.fixture
def hooks(lambda_aws: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[LambdaRuntimeHooks]:
    recorded = LambdaRuntimeHooks()
    runtime_module = types.ModuleType("snapshot_restore_py")
    runtime_module.register_before_snapshot = recorded.before_snapshot.append  # type: ignore[attr-defined]
    runtime_module.register_after_restore = recorded.after_restore.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", runtime_module)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "a2a-test")
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")
    yield recorded
    reset_authorizer_services()


def init(module: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The entry point imported afresh, as in a new execution environment's init phase."""
    name = f"a2a_serverless.functions.{module}"
    monkeypatch.delitem(sys.modules, name, raising=False)
    __import__(name)
    return sys.modules[name]


@pytest.mark.parametrize(
    "module",
    [
        pytest.param("worker", id="worker"),
        pytest.param("dead_letter", id="dead-letter"),
        pytest.param("sweeper", id="sweeper"),
        pytest.param("push_dispatcher", id="push-dispatcher"),
        pytest.param("push_delivery", id="push-delivery"),
        pytest.param("authorizer", id="authorizer"),
        pytest.param("send_message", id="an-api-function"),
        pytest.param("gateway", id="gateway-buffered"),
    ],
)
def test_each_entry_point_registers_the_hooks_at_its_init(
    hooks: LambdaRuntimeHooks, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    # When the entry point is imported in Lambda's runtime
    init(module, monkeypatch)
    # Then the kit's two hooks are registered with it, once each
    assert hooks.before_snapshot == [snapstart.before_snapshot]
    assert hooks.after_restore == [snapstart.after_restore]


def test_outside_lambdas_runtime_nothing_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given no snapshot_restore_py (the tests, the local stack, sam local)
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)
    # Then registering says so and fails nothing
    assert snapstart.register() is False


def test_a_client_made_at_init_is_not_the_one_used_after_a_restore(
    hooks: LambdaRuntimeHooks, monkeypatch: pytest.MonkeyPatch, lambda_aws: Any
) -> None:
    # Given the worker's init (its runtime built, the executor loaded) and its table's client made
    init(module="worker", monkeypatch=monkeypatch)
    at_init = get_runtime()
    client_at_init = at_init.store.client  # type: ignore[attr-defined]
    # When Lambda snapshots it and restores an environment from the snapshot
    hooks.snapshot()
    hooks.restore()
    # Then a task still runs end to end through the functions
    sent = invoke("send_message", json.loads((EVENTS / "apigw_rest_post_message_send.json").read_text()))
    task = body(sent)["task"]
    queue = lambda_aws.resources.queue_urls["WorkQueue"]
    (message,) = lambda_aws.sqs.receive_message(QueueUrl=queue, AttributeNames=["All"])["Messages"]
    work = json.loads((EVENTS / "sqs_work_item.json").read_text())
    work["Records"][0].update(body=message["Body"], messageId=message["MessageId"])
    work["Records"][0]["attributes"]["MessageGroupId"] = task["id"]
    assert invoke("worker", work) == {"batchItemFailures": []}
    # on a runtime and a client made after the restore, not the ones of the snapshot
    after = get_runtime()
    assert after is not at_init
    assert after.store.client is not client_at_init  # type: ignore[attr-defined]
    stored = after.store.client.get_item(  # type: ignore[attr-defined]
        TableName=lambda_aws.resources.tables["TasksTable"], Key={"pk": {"S": "x"}, "sk": {"S": "x"}}
    )
    assert "Item" not in stored  # (the new client answers)


def test_no_credentials_are_cached_in_the_snapshot(hooks: LambdaRuntimeHooks, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an init that made an AWS client: boto3's default session then holds the credentials
    init(module="sweeper", monkeypatch=monkeypatch)
    dynamodb_client()
    assert boto3.DEFAULT_SESSION is not None
    assert boto3.DEFAULT_SESSION.get_credentials() is not None
    get_runtime()
    # When Lambda is about to snapshot the environment
    hooks.snapshot()
    # Then no session (and no credentials it resolved) is left for the snapshot to keep
    assert boto3.DEFAULT_SESSION is None
    # and a client made after the restore resolves credentials of its own session
    hooks.restore()
    dynamodb_client()
    assert boto3.DEFAULT_SESSION is not None


def test_push_services_made_before_the_snapshot_are_made_again(
    hooks: LambdaRuntimeHooks, monkeypatch: pytest.MonkeyPatch, lambda_aws: Any
) -> None:
    # Given the push delivery function's init, with its services (HTTP client, queues) made
    lambda_aws.configure_push()
    init(module="push_delivery", monkeypatch=monkeypatch)
    before = push_services()
    # When it is snapshotted and restored
    hooks.snapshot()
    hooks.restore()
    # Then the services (and their connections) are new
    assert push_services() is not before


def test_each_restored_environment_draws_its_own_random_numbers(
    hooks: LambdaRuntimeHooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an init, and the state of Python's random in the snapshot
    init(module="worker", monkeypatch=monkeypatch)
    hooks.snapshot()
    in_snapshot = random.getstate()
    draws = []
    for _environment in range(2):
        # When an environment is restored from that snapshot (the same random state) and its hooks run
        random.setstate(in_snapshot)
        hooks.restore()
        draws.append(random.getrandbits(128))
    # Then the two environments draw different numbers, neither the snapshot's next one
    random.setstate(in_snapshot)
    from_snapshot = random.getrandbits(128)
    assert len({*draws, from_snapshot}) == 3


def test_the_authorizers_key_fetcher_made_before_the_snapshot_is_made_again(
    hooks: LambdaRuntimeHooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the JWT authorizer's init, with its services (the issuer's key fetcher, whose HTTP
    # client keeps its connections) made
    monkeypatch.setenv("A2A_AUTHORIZER_MODE", "jwt")
    monkeypatch.setenv("A2A_JWT_ISSUER", "https://issuer.example.com")
    monkeypatch.setenv("A2A_JWT_AUDIENCE", "a2a-clients")
    init(module="authorizer", monkeypatch=monkeypatch)
    before = authorizer_services()
    assert before.keys is not None
    # When it is snapshotted and restored
    hooks.snapshot()
    hooks.restore()
    # Then its services are new
    after = authorizer_services()
    assert after is not before
    assert after.keys is not before.keys


def deployed_environment(**more: str) -> dict[str, str]:
    """A deployed function's environment, for an entry point's init in a process of its own."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(Path(a2a_serverless.__file__).parents[1]),
        "AWS_LAMBDA_FUNCTION_NAME": "a2a-test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "A2A_STORE": "dynamodb",
        "A2A_TABLE_NAME": "tasks",
        "A2A_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/work.fifo",
        **more,
    }


# Run in a process of its own, so the kit's modules are imported afresh: each call that makes an id
# or a temporary file is recorded from before the first import.
_RECORD_INIT = """
import importlib, json, secrets, sys, tempfile, uuid
made = []
def recorded(module, name):
    real = getattr(module, name)
    def call(*args, **kwargs):
        made.append(name)
        return real(*args, **kwargs)
    setattr(module, name, call)
for name in ("uuid1", "uuid4"):
    recorded(uuid, name)
for name in ("token_bytes", "token_hex", "token_urlsafe"):
    recorded(secrets, name)
for name in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile", "TemporaryDirectory"):
    recorded(tempfile, name)
importlib.import_module("a2a_serverless.functions." + sys.argv[1])
print(json.dumps(made))
"""


@pytest.mark.parametrize("module", ["worker", "gateway", "send_message", "authorizer", "push_delivery", "sweeper"])
def test_no_id_or_temporary_file_is_made_at_init(module: str, tmp_path: Path) -> None:
    # Given a deployed function's environment
    environment = deployed_environment(A2A_AUTH_MODE="apigateway", TMPDIR=str(tmp_path))
    # When the entry point's init runs (its import: the kit's modules and its cold start)
    done = subprocess.run(
        [sys.executable, "-c", _RECORD_INIT, module], env=environment, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # Then it made no id and no temporary file: nothing a snapshot would give every environment alike
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert list(tmp_path.iterdir()) == []


# Run in a process of its own: which modules a restored environment's first clients import shows
# only where the kit's modules (and boto3) were not imported before the entry point's init.
_RESTORED_CLIENTS = """
import importlib, json, sys, types
hooks = {"before": [], "after": []}
runtime = types.ModuleType("snapshot_restore_py")
runtime.register_before_snapshot = hooks["before"].append
runtime.register_after_restore = hooks["after"].append
sys.modules["snapshot_restore_py"] = runtime
importlib.import_module("a2a_serverless.functions." + sys.argv[1])
for hook in hooks["before"]:
    hook()
import boto3
session_kept = boto3.DEFAULT_SESSION is not None
snapshot = set(sys.modules)
for hook in hooks["after"]:
    hook()
"""
# Then a restored environment's first DynamoDB and SQS clients: which modules they import (beyond
# ``snapshot``, the modules the snapshot holds) and which data files they read.
_FIRST_CLIENTS = """
from botocore.loaders import JSONFileLoader
read = []
real_load_file = JSONFileLoader.load_file
def load_file(self, file_path):
    read.append(file_path)
    return real_load_file(self, file_path)
JSONFileLoader.load_file = load_file
from a2a_serverless.aws import dynamodb_client, sqs_client
dynamodb_client(), sqs_client()
imported = sorted(set(sys.modules) - snapshot)
print(json.dumps({"session_kept": session_kept, "imported": imported, "read": read}))
"""


@pytest.mark.parametrize("module", ["worker", "send_message", "sweeper"])
def test_the_snapshot_keeps_what_the_first_clients_import_and_read_but_no_session(module: str) -> None:
    # Given a function's init in Lambda's runtime, then its before-snapshot hooks
    environment = deployed_environment()
    done = subprocess.run(
        [sys.executable, "-c", _RESTORED_CLIENTS + _FIRST_CLIENTS, module],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    # Then the snapshot holds no boto3 session (no credentials), and a restored environment's
    # first DynamoDB and SQS clients import nothing and read no service data (models, endpoint
    # rules): boto3, a client's machinery and the data it read are in the snapshot
    assert seen["session_kept"] is False
    assert seen["imported"] == []
    assert seen["read"] == []


# The streaming gateway under the Lambda Web Adapter: uvicorn builds the app (functions/run.sh) in a
# process where Lambda's Python runtime, and so ``snapshot_restore_py``, is absent: no hook runs.
_WEB_ADAPTER_INIT = """
import json, sys
from a2a_serverless.transport.app import create_app
create_app()
if "boto3" not in sys.modules:
    print(json.dumps("boto3 not imported"))
    raise SystemExit
session_kept = sys.modules["boto3"].DEFAULT_SESSION is not None
snapshot = set(sys.modules)
"""


@pytest.mark.parametrize(
    ("initialization", "expected"),
    [
        # A SnapStart version's init: boto3 imported and the clients' service data read, no session
        # (no credentials): a restored gateway's first DynamoDB and SQS clients import and read nothing
        pytest.param("snap-start", {"session_kept": False, "imported": [], "read": []}, id="snap-start"),
        # An on-demand init (no snapshot to keep it for): boto3 waits for the first AWS call
        pytest.param("on-demand", "boto3 not imported", id="on-demand"),
    ],
)
def test_the_gateway_under_the_web_adapter_loads_its_first_clients_needs_in_a_snapstart_init_only(
    initialization: str, expected: object
) -> None:
    # Given the gateway's init under the Web Adapter (no hook runs), of this initialization type
    environment = deployed_environment(AWS_LAMBDA_INITIALIZATION_TYPE=initialization)
    done = subprocess.run(
        [sys.executable, "-c", _WEB_ADAPTER_INIT + _FIRST_CLIENTS],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Then what it loaded is what that initialization needs
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == expected
