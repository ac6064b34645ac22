"""bench/aws_calls.py --quick end to end: it starts the local stack in a subprocess, drives every A2A
method, and its JSON holds the calls and costs the README's figure 5 is made of. The checks are
call counts (not timings), which do not depend on the machine's load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.spec import V1_METHODS

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
METHODS = set(V1_METHODS)


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("aws_calls") / "result.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "aws_calls.py"), "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Cost per million tasks" in run.stdout
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def test_every_method_is_measured(result: dict[str, Any]) -> None:
    assert {m["method"] for m in result["methods"].values()} == METHODS
    assert all(m["requests"] >= 1 for m in result["methods"].values())
    assert result["measure_errors"] == []


def test_get_task_reads_the_head_once_and_writes_nothing(result: dict[str, Any]) -> None:
    get_task = result["methods"]["GetTask"]
    assert get_task["calls"] == {"dynamodb.GetItem": 1.0}
    assert get_task["rru"] == 1.0  # one strongly consistent read of a head under 4 KB
    assert get_task["wru"] == get_task["wru_gsi"] == 0
    assert get_task["sqs_calls"] == 0


def test_send_message_queues_one_work_item_in_one_transaction(result: dict[str, Any]) -> None:
    sends = {label: m for label, m in result["methods"].items() if m["method"] == "SendMessage"}
    assert len(sends) >= 2  # blocking and returnImmediately at least
    for label, m in sends.items():
        assert m["calls"]["sqs.SendMessage"] == 1.0, label
        assert m["calls"]["dynamodb.TransactWriteItems"] == 1.0, label
        assert m["sqs_fifo"] == 1.0, label  # the work queue is FIFO, one 64 KB chunk
        assert m["wru"] > 0, label


def test_background_work_is_attributed(result: dict[str, Any]) -> None:
    hello = result["windows"]["hello_blocking"]
    assert hello["WorkerFunction"]["invocations"] == 1.0
    assert hello["WorkerFunction"]["calls"].get("dynamodb.TransactWriteItems", 0) >= 3
    assert "sqs.SendMessageBatch" not in hello.get("PushDispatcherFunction", {"calls": {}})["calls"]
    pushed = result["windows"]["hello_push"]
    assert pushed["PushDispatcherFunction"]["calls"]["sqs.SendMessageBatch"] >= 1
    assert pushed["PushDeliveryFunction"]["invocations"] >= 1
    assert result["windows"]["dead_letter"]["DeadLetterFunction"]["invocations"] == 1.0
    assert result["notes"]["dead_letter_states"] == ["TASK_STATE_FAILED"]


def test_costs_are_positive_and_add_up(result: dict[str, Any]) -> None:
    assert set(result["shapes"]) == {"hello_blocking", "hello_push"}
    for name, shape in result["shapes"].items():
        parts = shape["per_million_tasks_usd"]
        services = [parts[k] for k in ("dynamodb", "sqs", "lambda", "api_gateway")]
        assert all(v > 0 for v in services), name
        assert shape["total_per_million_tasks_usd"] == pytest.approx(sum(services), abs=0.011), name
        assert parts["lambda"] == pytest.approx(
            parts["lambda_requests_only"] + parts["lambda_duration_only"], abs=0.011
        )
    assert (
        result["shapes"]["hello_push"]["total_per_million_tasks_usd"]
        > result["shapes"]["hello_blocking"]["total_per_million_tasks_usd"]
    )


def test_render_is_importable_without_side_effects(result: dict[str, Any]) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import aws_calls
    finally:
        sys.path.remove(str(ROOT / "bench"))
    markdown = aws_calls.render(result)
    assert "| GetTask | GatewayFunction | 1 GetItem |" in markdown
    assert "**Cost per million tasks**" in markdown
