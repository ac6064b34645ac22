"""The local stack's console (``_logs.format_line``): one readable line per event, labelled with the
function, task and request; metrics left out; the agent's traceback marked as its own; ``json``
passes Powertools' JSON through and wraps what is not JSON; the ready line always as it is."""

from __future__ import annotations

import json

from a2a_serverless_dev._logs import format_line

FAILURE = json.dumps(
    {
        "level": "ERROR",
        "location": "_log_failure:330",
        "message": "executor failed",
        "timestamp": "2026-11-24 02:25:48,123+0000",
        "service": "a2a-serverless",
        "function_name": "a2a-local-WorkerFunction",
        "function_request_id": "98442555-aaaa-bbbb",
        "task_id": "0dcaa5f8-1111-2222",
        "message_id": "m1",
        "exception": 'Traceback (most recent call last):\n  File "agent.py", line 3, in execute\nRuntimeError: boom',
        "exception_name": "RuntimeError",
    }
)
METRIC = json.dumps(
    {"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "A2AServerless"}]}, "Requests": [1.0]}
)
READY = "A2A agent card: http://127.0.0.1:8000/.well-known/agent-card.json"


def test_console_labels_an_event_and_marks_the_agents_traceback() -> None:
    shown = format_line("WorkerFunction", FAILURE, "console")
    assert shown is not None
    first, *rest = shown.splitlines()
    assert first.startswith("02:25:48 ERROR    WorkerFunction ")
    assert first.endswith("task=0dcaa5f8 req=98442555  executor failed message_id=m1")
    assert rest[0].strip() == "── your agent's traceback ──"
    assert rest[-1] == "    RuntimeError: boom"


def test_console_leaves_metrics_out_and_labels_plain_lines() -> None:
    assert format_line("api", METRIC, "console") is None
    shown = format_line("api", 'INFO:     127.0.0.1:1 - "GET /tasks HTTP/1.1" 200 OK', "console")
    assert shown is not None
    assert shown.split(None, 3)[1:3] == ["INFO", "api"]
    assert shown.endswith('"GET /tasks HTTP/1.1" 200 OK')


def test_json_passes_powertools_through_and_wraps_the_rest() -> None:
    assert format_line("WorkerFunction", FAILURE, "json") == FAILURE
    assert format_line("api", METRIC, "json") == METRIC
    wrapped = format_line("api", "WARNING:  something odd", "json")
    assert wrapped is not None
    assert json.loads(wrapped) == {"level": "WARNING", "message": "something odd", "function_name": "api"}


def test_the_ready_line_is_always_as_it_is() -> None:
    assert format_line("api", READY, "console") == READY
    assert format_line("api", READY, "json") == READY
    assert format_line("api", "   ", "console") is None
