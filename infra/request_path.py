"""The request path in files: which modules of the runtime a SendMessage goes through, from the
Lambda handler to the store's DynamoDB write.

It drives the real SendMessage Lambda entry point (``a2a_serverless.functions.send_message``) with
an API Gateway event for ``POST /message:send`` (``returnImmediately``, so nothing waits on a run),
against moto in process with the template's table and queues (the DynamoDB store, the SQS queue):
once to warm it (cold-start imports, the runtime, the models' validators), then once more under a
profiler. It counts the files of the runtime package (``shared/a2a_serverless/``) that hold a
function that runs during that second call from the handler until the store's first DynamoDB write,
which is the first botocore API call of ``TransactWriteItems``, ``PutItem`` or ``UpdateItem`` (so
it finds the write whatever module of the store makes it). A file counts once, in the order it was
first entered; what only ran at import time does not count, nor does code of other packages
(Starlette, mangum, pydantic, botocore). Threads count too: the operation runs in Starlette's
thread pool.

    /work/main/.venv/bin/python infra/request_path.py [--json]

It measures the tree it lives in (its ``shared/`` first on the path) with the test helpers of
``tests/functions/`` (the recorded API Gateway event). ``tests/test_request_path.py`` runs it and
holds the path to its limit.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WRITES = frozenset({"TransactWriteItems", "PutItem", "UpdateItem"})
"""The DynamoDB operations that write a task: the first of them ends the path."""
ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "POWERTOOLS_METRICS_NAMESPACE": "A2ARequestPath",
}


@dataclass
class PathFile:
    """One file of the runtime on the path: its path in the package, its lines, the functions of it
    that ran (by name, sorted)."""

    path: str
    lines: int
    functions: list[str] = field(default_factory=list)


class _Tracer:
    """A profile function that records the package's files entered until the first write."""

    def __init__(self, package: Path) -> None:
        self.package = str(package) + os.sep
        self.armed = False
        self.done = False
        self.functions: dict[str, set[str]] = {}  # insertion order: the order first entered
        self._lock = threading.Lock()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not self.armed or self.done:
            return
        code = frame.f_code
        if code.co_name == "_make_api_call" and frame.f_locals.get("operation_name") in WRITES:
            self.done = True
            return
        if code.co_filename.startswith(self.package):
            relative = Path(code.co_filename).relative_to(self.package).as_posix()
            with self._lock:
                self.functions.setdefault(relative, set()).add(code.co_name)


def _send(invoke: Any, api_event: Any, number: int) -> None:
    message = {"messageId": f"request-path-{number}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    body = {"message": message, "configuration": {"returnImmediately": True}}
    response = invoke("send_message", api_event("POST", "/message:send", body=body))
    if response.get("statusCode") != 200:
        raise RuntimeError(f"SendMessage answered {response.get('statusCode')}: {response.get('body')}")


def measure() -> list[PathFile]:
    """The runtime's files on the path of a warm SendMessage, from the handler to the store's write."""
    for path in (ROOT / "tests" / "functions", ROOT / "tests", ROOT / "shared"):
        sys.path.insert(0, str(path))
    os.environ.update(ENVIRONMENT)
    os.environ.pop("AWS_ENDPOINT_URL", None)

    import boto3
    from lambda_events import api_event, invoke  # tests/functions: the recorded API Gateway event
    from moto import mock_aws

    import a2a_serverless
    from a2a_serverless_dev.resources import create_resources

    package = Path(a2a_serverless.__file__).resolve().parent
    tracer = _Tracer(package)
    with mock_aws():
        resources = create_resources(boto3.client("dynamodb"), boto3.client("sqs"), prefix="request-path")
        os.environ.update(
            A2A_STORE="dynamodb",
            A2A_TABLE_NAME=resources.tables["TasksTable"],
            A2A_QUEUE_URL=resources.queue_urls["WorkQueue"],
        )
        # Installed before the warm call, so the threads it starts (Starlette's pool) carry it too.
        threading.setprofile(tracer)
        sys.setprofile(tracer)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the functions' metrics (EMF lines)
                _send(invoke, api_event, 0)
                tracer.armed = True
                _send(invoke, api_event, 1)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    if not tracer.done:
        raise RuntimeError(f"the call made no DynamoDB write ({', '.join(sorted(WRITES))})")
    return [
        PathFile(name, len((package / name).read_text().splitlines()), sorted(functions))
        for name, functions in tracer.functions.items()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the files as JSON")
    args = parser.parse_args(argv)
    files = measure()
    if args.json:
        print(json.dumps({"count": len(files), "files": [asdict(f) for f in files]}, indent=2))
        return 0
    for number, found in enumerate(files, 1):
        print(f"{number:3}  {found.path:40} {found.lines:5}  {', '.join(found.functions)}")
    print(f"{len(files)} files, {sum(f.lines for f in files)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
