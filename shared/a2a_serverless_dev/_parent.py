"""Stop the local stack with the ``make`` that started it.

``make dev`` runs the stack as make's child, and make forwards no signal to its children: a
terminal's Ctrl-C reaches both (one process group), but a script's ``kill $MAKE_PID`` ends make
alone and leaves the stack running, holding its ports. (A script's background jobs also start with
SIGINT ignored, so ``kill -INT`` reaches neither: ``kill`` (SIGTERM) is the signal to send.)

Under make (``MAKELEVEL`` is set in its children), a daemon thread watches the parent process; when
it is gone (the stack was re-parented), the stack gets SIGTERM, and stops as on any SIGTERM. Started
any other way (a terminal, ``nohup``, a service manager), the stack outlives its parent as before.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Mapping

__all__ = ["stop_with_make"]

_POLL_SECONDS = 0.5


def stop_with_make(environ: Mapping[str, str] = os.environ, *, poll_seconds: float = _POLL_SECONDS) -> bool:
    """Send this process SIGTERM once the ``make`` that started it exits; True when watching (the
    process runs under make), False otherwise."""
    if "MAKELEVEL" not in environ:
        return False
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="stop-with-make", daemon=True).start()
    return True
