"""What an invocation waits for when it exports its spans itself (issue 32): on Lambda the kit
flushes the batch when an invocation's outermost span ends (the environment freezes after the
handler returns), so the OTLP POST is inside the invocation. Straight to CloudWatch's endpoint that
POST is signed (SigV4) and crosses the network; to a collector extension layer it goes to
``localhost:4318`` and the extension forwards later.

Each mode runs in a fresh interpreter "on Lambda" (``AWS_LAMBDA_FUNCTION_NAME`` set): a call's span
with the enqueue's inside it (what SendMessage's invocation exports), ``--calls`` times; wall and CPU
time per invocation, median. Modes: ``off``; ``memory`` (the spans made, not exported); ``local``
(exported unsigned to a receiver on 127.0.0.1: the collector extension's case, a local socket);
``signed`` (the same, each POST signed for X-Ray, test credentials: CloudWatch's case minus the
network). What CloudWatch's endpoint adds beyond ``signed`` (an HTTPS round trip in the Region, a TLS
handshake on the first export of an environment) needs AWS: ``--endpoint URL`` measures ``local``
and ``signed`` against a real endpoint instead (credentials from the environment).

    .venv/bin/python bench/otlp_flush.py [--calls 200] [--endpoint URL] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import statistics
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

MODES = ("off", "memory", "local", "signed")
TEST_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "t"}

# One invocation: the call's span and the enqueue's inside it; its end flushes (on "Lambda").
_CHILD = """
import json, sys, time
from a2a_serverless import telemetry
calls, samples = int(sys.argv[1]), []
for i in range(calls + 1):
    wall, cpu = time.perf_counter(), time.process_time()
    with telemetry.server_call("SendMessage", {}) as call:
        call.request(version="1.0", tenant="", fields={"message": {"messageId": f"m-{i}"}})
        with telemetry.enqueue(f"t-{i}", f"m-{i}"):
            pass
    if i:  # the first one sets the SDK up: a cold start's, not an invocation's
        samples.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
print(json.dumps(samples))
"""


@contextlib.contextmanager
def receiver() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps the connection, as a collector does

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    finally:
        server.shutdown()
        server.server_close()


def run(mode: str, calls: int, endpoint: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "OTEL_"))}
    env |= {"AWS_LAMBDA_FUNCTION_NAME": "SendMessageFunction", "AWS_REGION": env.get("AWS_REGION", "us-east-1")}
    env["A2A_TRACING"] = {"off": "off", "memory": "memory"}.get(mode, "otlp")
    if mode in ("local", "signed"):
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = endpoint
    if mode == "signed":
        env["A2A_TRACING_SIGV4"] = "xray"
        if "127.0.0.1" in endpoint:
            env |= TEST_CREDENTIALS
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(calls)], env=env, capture_output=True, text=True, check=True
    ).stdout
    samples = json.loads(out.splitlines()[-1])
    return {
        "wall_ms": round(statistics.median(w for w, _ in samples), 3),
        "cpu_ms": round(statistics.median(c for _, c in samples), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--endpoint", help="a real OTLP traces URL instead of the local receiver")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        endpoint = args.endpoint or stack.enter_context(receiver())
        results = {mode: run(mode, args.calls, endpoint) for mode in MODES}
    print(f"{'mode':8} {'wall ms':>8} {'CPU ms':>8}   per invocation (2 spans), median of {args.calls}")
    for mode, row in results.items():
        print(f"{mode:8} {row['wall_ms']:8.2f} {row['cpu_ms']:8.2f}")
    if args.json:
        args.json.write_text(json.dumps({"calls": args.calls, "load": os.getloadavg(), "modes": results}, indent=2))


if __name__ == "__main__":
    main()
