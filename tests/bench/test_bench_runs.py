"""testkit.bench_runs: a failed bench run is reported by the first check that reads it, once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from testkit.bench_runs import run_bench


def _request(nodeid: str) -> pytest.FixtureRequest:
    return cast(pytest.FixtureRequest, SimpleNamespace(node=SimpleNamespace(nodeid=nodeid)))


def test_a_failed_run_fails_the_first_check_with_its_output_and_skips_the_rest(tmp_path: Path) -> None:
    # Given a bench script that exits at once with a usage error
    run = run_bench("compare.py", ["--no-such-flag"], tmp_path / "out.json")

    # When two checks read its result
    with pytest.raises(pytest.fail.Exception) as first:
        run.result(_request("test_one"))
    with pytest.raises(pytest.skip.Exception) as second:
        run.result(_request("test_two"))

    # Then the first fails with the script's exit and stderr, the second points at the first
    assert "exited 2" in str(first.value)
    assert "--no-such-flag" in str(first.value)
    assert "reported once, by test_one" in str(second.value)


def test_a_run_that_prints_no_json_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    run = run_bench("compare.py", ["--help"], tmp_path / "missing.json")
    assert run.data is None
    failure: Any = run.failure
    assert "wrote no readable JSON" in failure
