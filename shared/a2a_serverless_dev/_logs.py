"""The local stack's console: its processes' output, one line per event, labelled with who said it.

Each process of the stack (the API, one per function) writes Powertools' structured JSON, CloudWatch
metric lines (EMF) and uvicorn's lines; the stack reads them line by line and writes each whole.

* ``console`` (the default): ``HH:MM:SS LEVEL    Function  [task=… req=…] message``; metric lines are
  left out (CloudWatch reads them on AWS; here they would be half the output); a traceback is shown
  once, indented under its line, and one from the user's executor is marked as the agent's own.
* ``json``: Powertools' JSON as it is, one object per line; metric lines too; a line that is not JSON
  (uvicorn's) becomes ``{"level", "message", "function_name"}``.

The ready line (``A2A agent card: ...``) is written as it is in both: scripts wait for it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Literal

from a2a_serverless.json_types import Json

__all__ = ["LogFormat", "format_line"]

LogFormat = Literal["console", "json"]

_READY_PREFIX = "A2A agent card: "
_UVICORN_LEVELS = ("INFO:", "WARNING:", "ERROR:", "DEBUG:", "CRITICAL:")
_AGENT_MARK = "your agent's traceback"
_WIDTH = 22


def format_line(source: str, line: str, mode: LogFormat) -> str | None:
    """How ``line`` (without its newline) from process ``source`` is written; None: not at all."""
    text = line.rstrip("\n")
    if not text.strip():
        return None
    if text.startswith(_READY_PREFIX):
        return text
    record = _json(text)
    if mode == "json":
        if record is not None:
            return text
        level, message = _plain(text)
        return json.dumps({"level": level, "message": message, "function_name": source}, separators=(",", ":"))
    if record is None:
        level, message = _plain(text)
        return _console(datetime.now().strftime("%H:%M:%S"), level, source, "", message)
    if "_aws" in record and "CloudWatchMetrics" in record["_aws"]:
        return None  # a metric (EMF): CloudWatch's on AWS, noise here
    return _console_record(source, record)


def _json(text: str) -> Json | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _plain(text: str) -> tuple[str, str]:
    for prefix in _UVICORN_LEVELS:
        if text.startswith(prefix):
            return prefix.rstrip(":"), text[len(prefix) :].strip()
    return "INFO", text


def _console_record(source: str, record: Json) -> str:
    stamp = str(record.get("timestamp", ""))
    clock = stamp[11:19] if len(stamp) >= 19 else datetime.now().strftime("%H:%M:%S")
    function = str(record.get("function_name") or source)
    function = function.removeprefix("a2a-local-")
    ids = " ".join(
        f"{label}={str(record[key])[:8]}"
        for key, label in (("task_id", "task"), ("function_request_id", "req"), ("request_id", "req"))
        if record.get(key)
    )
    message = str(record.get("message", ""))
    extras = {
        k: v
        for k, v in record.items()
        if k
        not in {
            "level",
            "location",
            "message",
            "timestamp",
            "service",
            "cold_start",
            "function_name",
            "function_memory_size",
            "function_arn",
            "function_request_id",
            "request_id",
            "task_id",
            "exception",
            "exception_name",
            "stack_trace",
            "xray_trace_id",
            "sampling_rate",
            "correlation_id",
        }
    }
    if extras:
        message += " " + " ".join(f"{k}={v}" for k, v in extras.items())
    out = _console(clock, str(record.get("level", "INFO")), function, ids, message)
    exception = record.get("exception")
    if exception:
        mark = _AGENT_MARK if message.startswith("executor") else "traceback"
        body = "\n".join(f"    {row}" for row in str(exception).splitlines())
        out += f"\n    ── {mark} ──\n{body}"
    return out


def _console(clock: str, level: str, function: str, ids: str, message: str) -> str:
    label = f"{function:<{_WIDTH}}"
    return f"{clock} {level:<8} {label} {ids + '  ' if ids else ''}{message}"
