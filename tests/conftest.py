"""Fixtures shared across suites: a real webhook receiver on 127.0.0.1.

The receiver is an HTTP server in a thread of the test process. It records every request (headers
and raw body) and answers by a script: ``fail_next(n, status)`` makes the next ``n`` requests fail,
``set_down(status)`` fails all of them until ``set_up()``. Push delivery tests point configs at it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class ReceivedRequest:
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: bytes
    status: int
    """What the receiver answered."""
    at: float
    """``time.time()`` when it arrived."""

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    url: str
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _requests: list[ReceivedRequest] = field(default_factory=list)
    _fail_next: list[int] = field(default_factory=list)
    _down_status: int | None = None
    _arrived: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self._arrived = threading.Condition(self._lock)

    def fail_next(self, count: int, status: int = 503) -> None:
        with self._lock:
            self._fail_next.extend([status] * count)

    def set_down(self, status: int = 503) -> None:
        with self._lock:
            self._down_status = status

    def set_up(self) -> None:
        with self._lock:
            self._down_status = None

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    def accepted(self, path: str | None = None) -> list[ReceivedRequest]:
        return [r for r in self.requests if r.status < 300 and (path is None or r.path == path)]

    def wait_for(self, condition: Callable[[list[ReceivedRequest]], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not condition(list(self._requests)):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"webhook receiver: condition not met within {timeout}s; got {self._requests}")
                self._arrived.wait(left)

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> int:
        with self._arrived:
            if self._down_status is not None:
                status = self._down_status
            elif self._fail_next:
                status = self._fail_next.pop(0)
            else:
                status = 204
            self._requests.append(ReceivedRequest(path, headers, body, status, time.time()))
            self._arrived.notify_all()
            return status


def _handler_for(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = receiver._answer(self.path, headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


@pytest.fixture
def webhook_receiver() -> Iterator[WebhookReceiver]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    receiver = WebhookReceiver(url=f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler_for(receiver)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


# ---------------------------------------------------------------------------------------------------
# What each deployed function calls on AWS: the boto3 operations its code performs. The template's
# IAM policies are checked against this list (tests/template/test_iam.py), and the list against the
# calls the functions really make when driven under moto (tests/functions/test_aws_calls.py).

_API_READ = {"dynamodb.GetItem", "dynamodb.Query", "dynamodb.BatchGetItem"}
_API_WRITE = {"dynamodb.TransactWriteItems", "dynamodb.PutItem", "dynamodb.UpdateItem"}
_BLOBS_WRITE = {"s3.PutObject", "s3.GetObject"}
# ExecutionMode Durable: start a task's durable execution (an invoke of the durable worker's alias,
# named after the task), resume its wait for input with the next message, or end it (CancelTask).
_DURABLE_START = {
    "lambda.Invoke",
    "lambda.SendDurableExecutionCallbackSuccess",
    "lambda.SendDurableExecutionCallbackFailure",
}

# CardSigning=true: the functions that serve a card sign it with the KMS key, and publish its public key.
_CARD_SIGNING = {"kms.Sign", "kms.GetPublicKey"}

AWS_CALLS: dict[str, set[str]] = {
    # The whole app: every A2A method over JSON-RPC, streaming, /tasks/{id} (get, cancel, subscribe).
    "GatewayFunction": _API_READ
    | _API_WRITE
    | _BLOBS_WRITE
    | _DURABLE_START
    | _CARD_SIGNING
    | {"dynamodb.DeleteItem", "sqs.SendMessage"},
    "AgentCardFunction": {"ssm.GetParameter", "ssm.PutParameter"} | _CARD_SIGNING,
    "SendMessageFunction": _API_READ | _API_WRITE | _BLOBS_WRITE | _DURABLE_START | {"sqs.SendMessage"},
    "ListTasksFunction": {"dynamodb.Query", "dynamodb.BatchGetItem"},
    "CreatePushConfigFunction": {"dynamodb.GetItem", "dynamodb.UpdateItem"},
    "GetPushConfigFunction": {"dynamodb.GetItem"},
    "ListPushConfigsFunction": {"dynamodb.GetItem", "dynamodb.Query"},
    "DeletePushConfigFunction": {"dynamodb.GetItem", "dynamodb.DeleteItem"},
    "GetExtendedCardFunction": _CARD_SIGNING,
    "AuthorizerFunction": set(),  # HTTPS to the token issuer only
    "WorkerFunction": _API_READ | _API_WRITE | _BLOBS_WRITE,
    # ExecutionMode Durable: the worker's calls, and the durable execution SDK's checkpoints and replay;
    # a delegation that ended deletes its push receiver's reference.
    "DurableWorkerFunction": _API_READ
    | _API_WRITE
    | _BLOBS_WRITE
    | {"dynamodb.DeleteItem", "lambda.CheckpointDurableExecution", "lambda.GetDurableExecutionState"},
    "DeadLetterFunction": {"dynamodb.GetItem", "dynamodb.Query"} | _API_WRITE | _BLOBS_WRITE,
    "SweeperFunction": {"dynamodb.GetItem", "dynamodb.Query"} | _API_WRITE | _BLOBS_WRITE,
    "PushDispatcherFunction": {"dynamodb.GetItem", "dynamodb.Query", "sqs.SendMessageBatch"},
    "PushDeliveryFunction": {
        "dynamodb.GetItem",
        "dynamodb.Query",
        "dynamodb.UpdateItem",
        "sqs.SendMessage",
        "sqs.SendMessageBatch",
        "sqs.ChangeMessageVisibility",
        "ssm.GetParameter",
        "ssm.PutParameter",
    },
}

# The IAM actions a boto3 operation needs. A transaction is authorised item by item: ours put and
# update items (never delete or condition-check alone).
IAM_ACTIONS: dict[str, set[str]] = {
    "dynamodb.TransactWriteItems": {"dynamodb:PutItem", "dynamodb:UpdateItem"},
    "sqs.SendMessageBatch": {"sqs:SendMessage"},
    "lambda.Invoke": {"lambda:InvokeFunction"},
}


def iam_actions(operations: set[str]) -> set[str]:
    actions: set[str] = set()
    for operation in operations:
        service, name = operation.split(".")
        actions |= IAM_ACTIONS.get(operation, {f"{service}:{name}"})
    return actions


@pytest.fixture(scope="session")
def aws_calls() -> dict[str, set[str]]:
    """The declared AWS calls of each function (a fixture: tests never import conftest modules,
    whose names collide across folders)."""
    return AWS_CALLS


@pytest.fixture(scope="session")
def needed_iam_actions() -> Callable[[set[str]], set[str]]:
    return iam_actions


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Name any run still alive at the end: its (non-daemon) worker thread would keep the process
    from exiting. A run left behind is a test that did not shut its queue down or release its agent.
    In a pytest-xdist worker, which has no terminal, the names go to the controller with the
    worker's output (see :func:`pytest_testnodedown`)."""
    alive = sorted(t.name for t in threading.enumerate() if t.name.startswith(("a2a-inline-worker", "a2a-run-monitor")))
    workeroutput: dict[str, object] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["runs_alive"] = alive
    else:
        _warn_runs_alive(session.config, alive)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: a worker finished; warn of the runs it left alive, and write the lines its tests
    left for the terminal (``terminal_lines``: a worker has none)."""
    output: dict[str, object] = getattr(node, "workeroutput", {})
    alive = output.get("runs_alive")
    if isinstance(alive, list):
        _warn_runs_alive(node.config, alive)
    lines = output.get("terminal_lines")
    reporter = node.config.pluginmanager.get_plugin("terminalreporter")
    if isinstance(lines, list) and reporter is not None:
        for line in lines:
            reporter.write_line(str(line))


def _warn_runs_alive(config: pytest.Config, alive: list[str]) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if alive and reporter is not None:
        message = f"runs still alive at the end of the session (the process may wait for them): {', '.join(alive)}"
        reporter.write_line(f"WARNING: {message}", yellow=True, bold=True)


# A fixture shared by many tests (a module's stack, a bench run) that fails in setup fails each of
# them with the very same exception, which pytest caches and raises again: its traceback is printed
# with the first test only, the others name that one.
_SETUP_ERRORS: dict[int, tuple[BaseException, str]] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[object]:
    report: pytest.TestReport = yield
    if call.when == "setup" and report.failed and call.excinfo is not None:
        error = call.excinfo.value
        first = _SETUP_ERRORS.setdefault(id(error), (error, item.nodeid))
        if first[0] is error and first[1] != item.nodeid:
            report.longrepr = f"{type(error).__name__}: the same setup error as {first[1]} (its traceback is there)"
    return report


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(
    config: pytest.Config, report: pytest.CollectReport | pytest.TestReport
) -> Iterator[object]:
    """Reports made UTF-8-safe where pytest-xdist sends them from a worker: the hostile tests put
    lone surrogates in captured logs and in failure messages on purpose, and execnet refuses such a
    string (``DumpError: strings must be utf-8 encodable``, the whole run an INTERNALERROR). The
    character is sent as its ``\\udXXX`` escape; a run in one process shows the report as it is."""
    data: object = yield
    return _utf8_safe(data)


def _utf8_safe(value: object) -> object:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_utf8_safe(key): _utf8_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_utf8_safe(item) for item in value)
    return value
