"""bench/compare.py keeps working: a --quick run measures every figure for every side, without errors.

It starts our app, the reference server and the local stack as subprocesses, so it is an e2e test;
the numbers themselves are not checked (a shared machine makes them noise at this size).
"""

from __future__ import annotations

from typing import Any

import pytest

from testkit.bench_runs import BenchRun, run_bench

pytestmark = pytest.mark.e2e


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    return run_bench(
        "compare.py",
        ["--quick", "--skip-aws-calls"],
        tmp_path_factory.mktemp("compare") / "compare.json",
    )


@pytest.fixture
def result(bench_run: BenchRun, request: pytest.FixtureRequest) -> dict[str, Any]:
    return bench_run.result(request)


def test_a_quick_run_reports_no_errors(result: dict[str, Any]) -> None:
    assert result["errors"] == []


def test_cold_start_has_both_sides_for_every_entry_point(result: dict[str, Any]) -> None:
    rows = result["import_ms"]["rows"]
    assert {row["ours_target"] for row in rows} >= {"a2a_serverless.functions.send_message", "gateway (uvicorn + app)"}
    for row in rows:
        assert _is_number(row["ours"]), row
        assert _is_number(row["peer"]), row
        assert _is_number(row["ratio"]), row


@pytest.mark.parametrize("operation", ["GetTask", "SendMessage"])
@pytest.mark.parametrize("concurrency", [1, 8, 32])
def test_protocol_overhead_has_both_sides(result: dict[str, Any], operation: str, concurrency: int) -> None:
    key = f"jsonrpc/{operation}/{concurrency}"
    cell = result["protocol"][key]
    for figure in ("rps", "p50_ms", "p99_ms"):
        assert _is_number(cell["ours"][figure]), cell
        assert _is_number(cell["peer"][figure]), cell
        assert _is_number(cell["ratio"][figure]), cell
    assert cell["ours"]["errors"] == cell["peer"]["errors"] == 0


@pytest.mark.parametrize("operation", ["GetTask", "SendMessage"])
@pytest.mark.parametrize("concurrency", [1, 8])
def test_the_local_stack_has_the_same_operations(result: dict[str, Any], operation: str, concurrency: int) -> None:
    cell = result["local_stack"]["cells"][f"jsonrpc/{operation}/{concurrency}"]
    for figure in ("rps", "p50_ms", "p99_ms"):
        assert _is_number(cell[figure]), cell
    assert cell["errors"] == 0


def test_streaming_has_ours_in_memory_ours_on_the_stack_and_the_peer(result: dict[str, Any]) -> None:
    streaming = result["streaming"]
    for side in ("ours_memory", "ours_local_stack", "peer"):
        for figure in ("p50_ms", "p95_ms"):
            assert _is_number(streaming[side][figure]), streaming[side]
    for ratios in ("ratio_memory", "ratio_local_stack"):
        assert all(_is_number(v) for v in streaming[ratios].values()), streaming[ratios]


def test_aws_calls_are_skipped_when_asked(result: dict[str, Any]) -> None:
    assert result["aws_calls"] == {"skipped": "--skip-aws-calls"}
