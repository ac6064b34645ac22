"""The a2a-sdk 1.x reference server (``bench/_reference_server.py``: its echo executor, ``tick N
SECONDS`` streaming N appended chunks) served on 127.0.0.1 in a thread of the test process."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path

from testkit.served import Later, served

__all__ = ["reference_agent"]

SERVER = Path(__file__).resolve().parents[2] / "bench" / "_reference_server.py"


@contextlib.contextmanager
def reference_agent(*, push: bool = False) -> Iterator[str]:
    """The reference server's base URL (its card at ``/.well-known/agent-card.json``) until the block
    ends; ``push``: it sends push notifications (and its card says so)."""
    spec = importlib.util.spec_from_file_location("_reference_server", SERVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    later = Later()
    with served(later) as url:
        later.app = module.create_reference_app(url, push=push)
        yield url
