#!/usr/bin/env python3
"""The SAM CLI, except that a durable function's container publishes its port on 127.0.0.1 when the
durable execution emulator is an external one (``DURABLE_EXECUTIONS_EXTERNAL_EMULATOR_PORT``).

SAM publishes a durable function's port on every interface of the host (its
``DurableLambdaContainer`` sets ``container_host_interface`` to 0.0.0.0), so that the emulator
container SAM would start reaches the function at ``host.docker.internal``; an external emulator,
on the host, reaches it at ``localhost`` (``_get_lambda_container_endpoint``), for which 127.0.0.1
is enough. Everything else is SAM's ``sam`` command, with the same arguments:

    tests/lambda_runtime/sam_loopback.py local invoke DurableWorkerFunction ...
    SAM=tests/lambda_runtime/sam_loopback.py infra/lambda-image/sam-local invoke ...

Run by any python3: without the SAM CLI in it, it runs itself again with the checkout's
``.venv-sam/bin/python`` (``make docker`` installs SAM there). If a SAM release renames what this
replaces, it fails (an AttributeError) rather than publish the port on every interface.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"

try:
    from samcli.cli.main import cli  # type: ignore[import-not-found]
    from samcli.local.docker.durable_lambda_container import (  # type: ignore[import-not-found]
        DurableLambdaContainer,
    )
except ImportError:
    python = Path(__file__).resolve().parents[2] / ".venv-sam" / "bin" / "python"
    if Path(sys.executable).absolute() == python.absolute() or not python.exists():
        raise
    os.execv(python, [str(python), __file__, *sys.argv[1:]])  # noqa: S606 - the same script, SAM's python

_endpoint = DurableLambdaContainer._update_lambda_environment_with_emulator_endpoint


def _update_lambda_environment_with_emulator_endpoint(self: Any, kwargs: dict[str, Any]) -> None:
    _endpoint(self, kwargs)
    if self.emulator_container._is_external_emulator():
        kwargs["container_host_interface"] = LOOPBACK


DurableLambdaContainer._update_lambda_environment_with_emulator_endpoint = (
    _update_lambda_environment_with_emulator_endpoint
)

if __name__ == "__main__":
    sys.exit(cli(prog_name="sam"))
