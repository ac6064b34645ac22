"""moto's server in a process of its own, for the local stack: ``python -m
a2a_serverless_dev._moto_process --host 127.0.0.1``.

moto's server is most of the local stack's CPU (its response serializer above all). Sharing one
process, and its GIL, with uvicorn, the pollers and the functions, it added tens of milliseconds to
every request under load; in a process of its own it uses the second core. The same patches as
in process (:func:`._moto.install_patches`, checked first: :mod:`.moto_fixes`) are applied here, and
the same check of whom it answers (:class:`._moto.GuardedMotoServer`).

Protocol with the parent (:func:`._moto.moto_server` with ``process=True``): the process prints one
line ``moto <endpoint URL>`` when it listens, or, if moto is not shaped as the fixes expect, one
line ``moto-fixes <JSON string: the error>`` and exits 1; SIGUSR1 ends every waiting long poll at once (the stack
stopping its pollers), SIGUSR2 the ones waiting now (a function process died), SIGTERM stops it,
and so does its standard input closing (the parent gone).
It ignores SIGINT: a Ctrl-C in the terminal reaches the whole process group, and the stack must
still be able to write while it stops; the parent stops it last.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from types import FrameType


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m a2a_serverless_dev._moto_process")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)

    from ._moto import GuardedMotoServer, install_patches
    from .moto_fixes import MotoShapeError, drain_receives, end_waiting_receives

    try:
        install_patches()
    except MotoShapeError as error:
        # One line for the parent, which raises it as the reason the stack cannot start.
        sys.stdout.write(f"moto-fixes {json.dumps(str(error))}\n")
        sys.stdout.flush()
        return 1
    stop = threading.Event()

    def on_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    def on_drain(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=drain_receives, daemon=True).start()

    def on_end_waits(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=end_waiting_receives, daemon=True).start()

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGUSR1, on_drain)
    signal.signal(signal.SIGUSR2, on_end_waits)

    def watch_parent() -> None:
        sys.stdin.read()  # returns at EOF: the parent closed the pipe, or died
        stop.set()

    threading.Thread(target=watch_parent, daemon=True).start()
    server = GuardedMotoServer(args.host)
    server.start()
    sys.stdout.write(f"moto {server.endpoint}\n")
    sys.stdout.flush()
    stop.wait()
    drain_receives()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
