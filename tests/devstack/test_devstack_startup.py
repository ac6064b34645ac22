"""``a2a-serverless dev`` checks what its settings turn on before it starts its processes: a bad
setting stops it with one line, and its own default (tracing, for the console's trace view) is
switched off with one line where the OpenTelemetry SDK is missing, never failing each request."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from .test_devstack_stack import READY, Lines

REPO = Path(__file__).resolve().parents[2]

WITHOUT_THE_SDK = (
    "import sys; sys.modules['opentelemetry.sdk'] = None; "  # as installed without the tracing extra
    "from a2a_serverless_dev.cli import main; raise SystemExit(main(sys.argv[1:]))"
)


def _environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "OTEL_"))}
    return {**env, **settings}


def test_a_bad_setting_stops_the_stack_at_start_in_one_line() -> None:
    # Given a tracing setting that names no exporter
    # When the stack starts
    result = subprocess.run(
        [sys.executable, "-m", "a2a_serverless_dev", "dev", "--port", "0"],
        cwd=REPO,
        env=_environment(A2A_TRACING="jaeger"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    # Then it stops before serving, with one line naming the setting
    assert result.returncode == 1, result.stdout + result.stderr
    assert READY not in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "a2a-serverless dev: error: cannot start: A2A_TRACING names no exporter jaeger "
        "(one or more of otlp, file, memory; or off)"
    )


def test_without_the_sdk_the_default_tracing_is_off_and_the_tour_works() -> None:
    # Given the stack started where the OpenTelemetry SDK does not import
    process = subprocess.Popen(
        [sys.executable, "-c", WITHOUT_THE_SDK, "dev", "--port", "0"],
        cwd=REPO,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        out = Lines(process)
        base = out.wait_for(READY, timeout=120).removeprefix(READY).removesuffix("/.well-known/agent-card.json")

        # When the README's SendMessage is sent
        answer = httpx.post(
            f"{base}/",
            headers={"A2A-Version": "1.0"},
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}},
            },
            timeout=60,
        ).json()

        # Then the task completes, and one line said why tracing is off
        assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer
        said = [line for line in out.seen if "tracing is off" in line]
        assert len(said) == 1
        assert "WARNING" in said[0]
        assert said[0].endswith("pip install 'a2a-serverless[tracing]'")
        trace = httpx.get(
            f"{base}/_console/api/tasks/{answer['result']['task']['id']}/trace", headers={"x-a2a-console": "1"}
        ).json()
        assert trace["enabled"] is False
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
