"""bench/_tck_agent.py behaves as the TCK's scenarios select by messageId prefix (the kit itself is
not here: bench/tck.py runs it). One conversation per scenario, on the in-memory runtime."""

from __future__ import annotations

import base64
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from a2a_serverless_dev.testing import agent_conversation

# bench/ is no package of the test run (tests/bench is): the agent is loaded from its file.
_SPEC = importlib.util.spec_from_file_location("tck_agent", Path(__file__).parents[2] / "bench" / "_tck_agent.py")
assert _SPEC is not None
assert _SPEC.loader is not None
tck_agent = importlib.util.module_from_spec(_SPEC)
sys.modules["tck_agent"] = tck_agent
_SPEC.loader.exec_module(tck_agent)


def _texts(task: dict[str, Any]) -> list[str]:
    return [p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"]]


@pytest.mark.parametrize(
    ("prefix", "state", "check"),
    [
        ("tck-complete-task", "COMPLETED", lambda t: t["status"]["message"]["parts"] == [{"text": "Hello from TCK"}]),
        ("tck-input-required", "INPUT_REQUIRED", lambda t: "artifacts" not in t),
        ("tck-artifact-text", "COMPLETED", lambda t: _texts(t) == ["Generated text content"]),
        (
            "tck-artifact-data",
            "COMPLETED",
            lambda t: t["artifacts"][0]["parts"][0]["data"] == {"key": "value", "count": 42},
        ),
        (
            "tck-artifact-file-url",
            "COMPLETED",
            lambda t: t["artifacts"][0]["parts"][0]["url"] == "https://example.com/output.txt",
        ),
        ("tck-artifact-file", "COMPLETED", lambda t: base64.b64decode(t["artifacts"][0]["parts"][0]["raw"]) == b"tck"),
        ("tck-reject-task", "FAILED", lambda t: "artifacts" not in t and "rejected" not in str(t)),
        ("tck-stream-artifact-chunked", "COMPLETED", lambda t: _texts(t) == ["chunk-1 chunk-2"]),
        ("tck-something-else", "COMPLETED", lambda t: "Unhandled messageId prefix" in str(t["status"]["message"])),
    ],
)
def test_each_prefix_selects_its_scenario(prefix: str, state: str, check: Any) -> None:
    with agent_conversation("tck_agent:TckExecutor") as agent:
        task = agent.send("TCK", messageId=f"{prefix}-abc123")
    assert task["status"]["state"] == f"TASK_STATE_{state}"
    assert check(task), task
