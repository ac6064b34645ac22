"""Serve one side of ``compare.py`` under uvicorn, with the same options for both sides.

    python bench/_serve.py ours|peer|local_stack --port N [--poll SECONDS]

``ours``: our app on the memory runtime (in-memory store, inline work queue), with
``bench._compare_agents:BenchExecutor`` (the demo agent, plus ``tick``). ``peer``: the reference
server (``bench/_reference_server.py``). One worker, no access log, 127.0.0.1, uvicorn's defaults
otherwise (its event loop and HTTP parser are chosen the same way for both).

``--poll SECONDS`` sets our blocking-wait and stream poll intervals (a sensitivity check; the
product's defaults otherwise).

``local_stack``: ``a2a-serverless dev`` with the same executor.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

UVICORN_OPTIONS: dict[str, Any] = {"host": "127.0.0.1", "workers": 1, "access_log": False, "log_level": "warning"}


def build(side: str, base_url: str, poll: float | None = None) -> Any:
    if side == "peer":
        from _reference_server import create_reference_app

        return create_reference_app(base_url)
    from a2a_serverless.config import Settings
    from a2a_serverless.transport.app import create_app
    from a2a_serverless.wiring import build_runtime

    polling = {} if poll is None else {"poll_interval_seconds": poll, "stream_poll_seconds": poll}
    settings = Settings(store="memory", executor="bench._compare_agents:BenchExecutor", public_url=base_url, **polling)
    return create_app(build_runtime(settings))


def run_local_stack(port: int) -> int:
    from a2a_serverless_dev import cli

    return cli.main(["dev", "--port", str(port), "--executor", "bench._compare_agents:BenchExecutor"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=["ours", "peer", "local_stack"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--poll", type=float, help="ours: blocking-wait and stream poll interval (default: Settings')")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.side == "local_stack":
        sys.exit(run_local_stack(args.port))
    import uvicorn

    uvicorn.run(build(args.side, f"http://127.0.0.1:{args.port}", args.poll), port=args.port, **UVICORN_OPTIONS)


if __name__ == "__main__":
    main()
