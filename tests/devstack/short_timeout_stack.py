"""Runs the real local stack (the gateway app, the template's handlers, the demo agent) with a
worker whose template ``Timeout`` is 4 s (for test_devstack_timeouts.py)."""

from __future__ import annotations

import sys
from typing import Any

from a2a_serverless_dev.resources import load_template
from a2a_serverless_dev.stack import DevOptions, run


def template() -> dict[str, Any]:
    loaded = load_template()
    loaded["Resources"]["WorkerFunction"]["Properties"]["Timeout"] = 4
    return loaded


if __name__ == "__main__":
    sys.exit(run(DevOptions(port=0, workers=2, prefix="short"), template=template()))
