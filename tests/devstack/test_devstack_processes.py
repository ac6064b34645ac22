"""The local stack as it runs from the command line: moto, the API and each event-sourced function in
processes of their own; a function's log lines carry its own name; one Ctrl-C stops everything with
a stream open and a run in flight: the stream ends, the run is cut off as a Lambda environment's
would be, the HTTP port and moto's are freed, no process is left, exit 0, no traceback, no second
Ctrl-C. (The 60 s agent run bounds the test: the stack must be gone long before it would have
finished; no duration is compared.)"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from typing import Any

import httpx

from testkit.devstack import READY, DevStack

MOTO = re.compile(r"moto at (http://127\.0\.0\.1:(\d+))")


def test_processes_of_their_own_and_one_ctrl_c_stops_them_all() -> None:
    stack = DevStack.start("--log-format", "json")
    lines, base = stack.lines, stack.base
    try:
        moto_port = int(next(m.group(2) for line in lines if (m := MOTO.search(line))))
        http_port = int(base.rsplit(":", 1)[1])
        # The banner names the local console, and the API process serves it (issue 20)
        assert any(f"{base}/_console/" in line for line in lines), lines
        console = httpx.get(f"{base}/_console/", timeout=10)
        assert console.status_code == 200
        assert console.headers["content-security-policy"].startswith("default-src 'self'")

        # Given: a 60 s run whose stream is open and has delivered its first events
        events: list[str] = []
        first = threading.Event()
        ended: dict[str, Any] = {}

        def stream() -> None:
            body = {"message": {"messageId": "m-ctrl-c", "role": "ROLE_USER", "parts": [{"text": "sleep 60"}]}}
            try:
                with httpx.stream(
                    "POST", f"{base}/message:stream", json=body, headers={"A2A-Version": "1.0"}, timeout=90
                ) as response:
                    for line in response.iter_lines():
                        if line.startswith("data:"):
                            events.append(line)
                            first.set()
                ended["how"] = "closed"
            except httpx.HTTPError as exc:
                ended["how"] = type(exc).__name__
            first.set()

        reader = threading.Thread(target=stream, daemon=True)
        reader.start()
        assert first.wait(30)
        assert events, ended

        # And: the stack's processes, one per event-sourced function besides the API and moto
        children = subprocess.run(
            ["pgrep", "-a", "-P", str(stack.process.pid)], capture_output=True, text=True, check=False
        ).stdout.splitlines()

        def running(marker: str) -> bool:
            return any(marker in child for child in children)

        assert running("_processes api ")
        for function in ("WorkerFunction", "DeadLetterFunction", "PushDeliveryFunction", "PushDispatcherFunction"):
            assert running(f'_processes function {{"function_id":"{function}"'), children
        assert any("_moto_process" in c for c in children)
        # and a failing run is logged by the worker as the worker
        failing = {"message": {"messageId": "m-fail", "role": "ROLE_USER", "parts": [{"text": "fail"}]}}
        httpx.post(f"{base}/message:send", json=failing, headers={"A2A-Version": "1.0"}, timeout=30)
        deadline = time.monotonic() + 30  # its line may still be on its way through the stack
        while not (failures := [line for line in lines if '"executor failed"' in line]):
            assert time.monotonic() < deadline, "\n".join(lines[-50:])
            time.sleep(0.05)
        assert '"function_name":"a2a-local-WorkerFunction"' in failures[0]

        # When: one Ctrl-C
        before_stop = len(lines)
        code = stack.stop(timeout=40)  # a hang guard: the run alone would take 60 s
        reader.join(10)
    finally:
        stack.kill()

    # Then: a clean exit, the stream ended, both ports free, no traceback; every line JSON (but the ready line)
    output = "\n".join(lines)
    for line in lines:
        if not READY.match(line) and not line.startswith(("INFO:", "WARNING:")):  # (the stack's own, on stderr)
            assert isinstance(json.loads(line), dict), line
    assert code == 0, output
    assert "Traceback" not in "\n".join(lines[before_stop:])  # (the failing run's is the agent's own, logged before)
    assert not reader.is_alive()
    assert "completed" not in "".join(events).lower()  # the run was cut off, not waited for
    for child in children:
        pid = int(child.split()[0])
        assert subprocess.run(["kill", "-0", str(pid)], capture_output=True, check=False).returncode != 0, child
    for port in (http_port, moto_port):
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still open"
