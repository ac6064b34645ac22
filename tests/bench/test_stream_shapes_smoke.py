"""bench/stream_shapes.py keeps working: a 20-chunk burst on the local stack (a subprocess) completes
and every figure is there. Only counted facts are checked (chunks, events, invocations), never a
rate or a latency: those depend on the machine's load."""

from __future__ import annotations

from typing import Any

import pytest

from testkit.bench_runs import BenchRun, run_bench

SHAPE = "stream_20_burst"
CHUNKS = 20

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    return run_bench(
        "stream_shapes.py",
        ["--shapes", SHAPE, "--timeout", "600"],
        tmp_path_factory.mktemp("stream_shapes") / "result.json",
        expect_in_stdout=f"| {SHAPE} | COMPLETED |",
    )


@pytest.fixture
def result(bench_run: BenchRun, request: pytest.FixtureRequest) -> dict[str, Any]:
    return bench_run.result(request)


def test_every_chunk_is_emitted_stored_and_streamed(result: dict[str, Any]) -> None:
    s = result["shapes"][SHAPE]
    assert s["final_state"] == "TASK_STATE_COMPLETED", s
    assert not s["timed_out"]
    assert s["stream_errors"] == []
    assert s["chunks_emitted_by_executor"] == CHUNKS
    assert s["executor_events_emitted"] == CHUNKS + 2  # WORKING, the chunks, COMPLETED
    assert s["chunks_reached_stream"] == CHUNKS
    assert s["chunks_stored"] == CHUNKS
    assert s["chunks_stored_in_order"]
    assert s["stream_latency_ms"]["n"] == CHUNKS
    assert len(s["raw"]["stream_latency_ms"]) == CHUNKS


def test_commits_and_the_worker_are_counted(result: dict[str, Any]) -> None:
    s = result["shapes"][SHAPE]
    assert s["events_committed"] >= 1
    assert s["worker_events_per_second"] is not None
    assert s["executor_emit_rate_per_second"] is not None
    assert s["worker_invocations"] >= 1
    assert len(s["worker_ms"]) == s["worker_invocations"]
    assert s["seconds_send_to_terminal"] is not None
