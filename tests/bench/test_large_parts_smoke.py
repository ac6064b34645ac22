"""bench/large_parts.py keeps working: one 5 MiB file artifact on the local stack (a subprocess),
stored in S3, sent by presigned URL, downloaded byte-exact. Only counted facts are checked (states,
parts, bytes), never a time: those depend on the machine's load."""

from __future__ import annotations

from typing import Any

import pytest

from testkit.bench_runs import BenchRun, run_bench

FILE_BYTES = 5 * 1024 * 1024

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    return run_bench(
        "large_parts.py",
        ["--runs", "1"],
        tmp_path_factory.mktemp("large_parts") / "result.json",
        expect_in_stdout="downloads byte-exact: 2 of 2",
    )


@pytest.fixture
def result(bench_run: BenchRun, request: pytest.FixtureRequest) -> dict[str, Any]:
    return bench_run.result(request)


def test_the_file_is_stored_sent_by_url_and_downloaded_exactly(result: dict[str, Any]) -> None:
    assert result["blob_bucket"]
    for run in [result["first_run"], *result["runs"]]:
        assert run["send_state"] == run["final_state"] == "TASK_STATE_COMPLETED", run
        assert run["part_form"] == "url"
        assert run["get_task_part_fields"] == ["filename", "mediaType", "url"]
        assert run["send_part_fields"] == ["filename", "mediaType", "url"]
        assert run["filename_ok"]
        assert run["bytes_received"] == FILE_BYTES
        assert run["bytes_exact"]
        assert run["s3_puts"] == 1  # the worker's PutObject of the part
        assert run["worker_invocations"] == 1
        # The responses carry a URL, not the file.
        assert run["send_response_bytes"] < 64 * 1024
        assert run["get_task_response_bytes"] < 64 * 1024
    summary = result["summary"]
    assert summary["runs_total"] == summary["runs_completed"] == summary["runs_byte_exact"] == 2
    assert set(summary["stages"]) >= {"send_to_completed_ms", "get_task_ms", "download_ms", "s3_put_ms"}
