"""Run a measurement against the local stack in this process, counting AWS calls on the way."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import httpx

ROOT = Path(__file__).resolve().parents[1]


def measure_on_local_stack(
    measure: Callable[[str], dict[str, Any]],
    *,
    executor: str | None = None,
    workers: int = 4,
    app_factory: Callable[[], Any] | None = None,
    resolve_handler: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """Start the stack (main thread), call ``measure(base_url)`` from another thread once the card
    answers, stop the stack, and return what ``measure`` returned (or ``{"error": ...}``).
    ``app_factory`` and ``resolve_handler`` are the stack's own hooks (to wrap the app or the
    functions' handlers)."""
    sys.path.insert(0, str(ROOT))
    from a2a_serverless_dev.stack import DevOptions, run

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outcome: dict[str, Any] = {}

    def drive() -> None:
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if httpx.get(base + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        try:
            outcome.update(measure(base))
        except Exception as exc:
            outcome["error"] = repr(exc)
        finally:
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=drive, daemon=True).start()
    run(
        # moto in this process: the AWS-call benchmark reads item sizes straight from its backend.
        DevOptions(port=port, workers=workers, executor=executor, moto_process=False),
        app_factory=app_factory,
        resolve_handler=resolve_handler,
    )
    return outcome


def run_on_local_stack(
    measure: Callable[[str], dict[str, Any]],
    *,
    on_aws_request: Callable[..., None],
    executor: str | None = None,
    workers: int = 4,
    json_out: Path | None = None,
) -> int:
    """:func:`measure_on_local_stack`, then print the results as JSON (and write them to ``json_out``).

    ``on_aws_request`` is registered as a botocore ``before-send`` handler on the default session,
    which the store and queue adapters use; the stack's own moto and poller clients are not counted.
    """
    boto3.setup_default_session()
    boto3.DEFAULT_SESSION.events.register("before-send", on_aws_request)  # type: ignore[union-attr]
    outcome = measure_on_local_stack(measure, executor=executor, workers=workers)
    print(json.dumps(outcome, indent=2))
    if json_out:
        json_out.write_text(json.dumps(outcome, indent=2))
    return 1 if "error" in outcome else 0
