"""``infra/request_path.py``, the request path in files: a warm SendMessage, from the Lambda handler
to the store's DynamoDB write, goes through few files of the runtime (docs/architecture.md lists
them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "infra" / "request_path.py"

MAX_FILES = 15
"""The files the path goes through now, none of them only forwarding to the next: a file that leaves
the path lowers this bar with it, and a new one on the path fails here."""


def _measured() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, check=True, timeout=300
    )
    measured: dict[str, Any] = json.loads(done.stdout)
    return measured


def test_a_send_message_reaches_the_dynamodb_write_through_few_files() -> None:
    # Given the SendMessage function, warm, on moto's DynamoDB and SQS, when a message is sent,
    # then the files it runs code of, from the handler to the write, are at most MAX_FILES.
    measured = _measured()
    files = [entry["path"] for entry in measured["files"]]
    assert files[0] == "lambda_/http.py"  # measured from the handler
    listing = "\n".join(f"  {name}" for name in files)
    assert len(files) <= MAX_FILES, f"{len(files)} files on the request path (at most {MAX_FILES}):\n{listing}"
