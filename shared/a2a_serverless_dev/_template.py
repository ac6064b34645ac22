"""What the local stack reads from ``template.yaml`` besides the storage resources: the event
sources (which function consumes which queue or stream, how; which runs on a schedule) and the
functions' shared environment.

Both are derived from the template so the local stack wires things exactly as the deployment does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from a2a_serverless.json_types import Json, JsonValue

from .resources import LocalResources

__all__ = [
    "FunctionEnvironment",
    "ScheduleEventSource",
    "SqsEventSource",
    "StreamEventSource",
    "dynamodb_event_sources",
    "function_environment",
    "schedule_event_sources",
    "sqs_event_sources",
]


@dataclass(frozen=True, slots=True)
class SqsEventSource:
    """One ``Type: SQS`` event of an ``AWS::Serverless::Function``."""

    function_id: str
    handler: str
    """Import path ``package.module:attr``, from ``CodeUri`` and ``Handler``."""
    queue_id: str
    batch_size: int
    report_batch_item_failures: bool
    timeout_seconds: int
    memory_mb: int
    max_concurrency: int | None = None
    """How many invocations Lambda runs at once for this source: its ``ScalingConfig``'s
    ``MaximumConcurrency``, else the function's ``ReservedConcurrentExecutions``; None when the
    template sets neither (Lambda then scales up to the account's limit)."""


def sqs_event_sources(template: Mapping[str, JsonValue]) -> list[SqsEventSource]:
    """Every SQS event source mapping of the template's serverless functions."""
    defaults: Mapping[str, JsonValue] = template.get("Globals", {}).get("Function", {})
    parameters = _parameter_defaults(template)
    sources: list[SqsEventSource] = []
    for function_id, res in template["Resources"].items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props: Mapping[str, JsonValue] = {**defaults, **res.get("Properties", {})}
        for event in props.get("Events", {}).values():
            if event.get("Type") != "SQS":
                continue
            ev = event["Properties"]
            sources.append(
                SqsEventSource(
                    function_id=function_id,
                    handler=_handler_path(str(props["CodeUri"]), str(props["Handler"])),
                    queue_id=_get_att_arn(ev["Queue"]),
                    # BatchSize defaults to 10 for SQS event sources.
                    batch_size=int(ev.get("BatchSize", 10)),
                    report_batch_item_failures="ReportBatchItemFailures" in ev.get("FunctionResponseTypes", []),
                    timeout_seconds=int(props.get("Timeout", 3)),
                    memory_mb=int(props.get("MemorySize", 128)),
                    max_concurrency=_number(ev.get("ScalingConfig", {}).get("MaximumConcurrency"), parameters)
                    or _number(props.get("ReservedConcurrentExecutions"), parameters),
                )
            )
    return sources


def _parameter_defaults(template: Mapping[str, JsonValue]) -> dict[str, str]:
    parameters: Mapping[str, JsonValue] = template.get("Parameters", {})
    return {name: str(p["Default"]) for name, p in parameters.items() if "Default" in p}


def _number(value: JsonValue, parameters: Mapping[str, str]) -> int | None:
    """A whole number as the template gives it: a literal, or ``!Ref`` to a parameter (its
    default); None when absent or not resolvable locally."""
    if isinstance(value, dict):
        value = parameters.get(str(value.get("Ref")))
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class StreamEventSource:
    """One ``Type: DynamoDB`` (stream) event of an ``AWS::Serverless::Function``."""

    function_id: str
    handler: str
    table_id: str
    starting_position: str
    batch_size: int
    filters: tuple[Json, ...]
    report_batch_item_failures: bool
    maximum_retry_attempts: int
    maximum_record_age_seconds: int
    on_failure_queue_id: str | None
    timeout_seconds: int
    memory_mb: int


def dynamodb_event_sources(template: Mapping[str, JsonValue]) -> list[StreamEventSource]:
    """Every DynamoDB Streams event source mapping of the template's serverless functions."""
    defaults: Mapping[str, JsonValue] = template.get("Globals", {}).get("Function", {})
    sources: list[StreamEventSource] = []
    for function_id, res in template["Resources"].items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props: Mapping[str, JsonValue] = {**defaults, **res.get("Properties", {})}
        for event in props.get("Events", {}).values():
            if event.get("Type") != "DynamoDB":
                continue
            ev = event["Properties"]
            stream = ev["Stream"]
            if not (isinstance(stream, dict) and stream.get("Fn::GetAtt", [None, None])[1] == "StreamArn"):
                raise ValueError(f"DynamoDB event Stream must be !GetAtt <Table>.StreamArn, got {stream!r}")
            destination = ev.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
            sources.append(
                StreamEventSource(
                    function_id=function_id,
                    handler=_handler_path(str(props["CodeUri"]), str(props["Handler"])),
                    table_id=str(stream["Fn::GetAtt"][0]),
                    starting_position=str(ev.get("StartingPosition", "LATEST")),
                    batch_size=int(ev.get("BatchSize", 100)),
                    filters=tuple(json.loads(f["Pattern"]) for f in ev.get("FilterCriteria", {}).get("Filters", [])),
                    report_batch_item_failures="ReportBatchItemFailures" in ev.get("FunctionResponseTypes", []),
                    maximum_retry_attempts=int(ev.get("MaximumRetryAttempts", 10)),
                    maximum_record_age_seconds=int(ev.get("MaximumRecordAgeInSeconds", 0)),
                    on_failure_queue_id=_get_att_arn(destination) if destination else None,
                    timeout_seconds=int(props.get("Timeout", 3)),
                    memory_mb=int(props.get("MemorySize", 128)),
                )
            )
    return sources


@dataclass(frozen=True, slots=True)
class ScheduleEventSource:
    """One ``Type: Schedule`` (EventBridge rule) or ``ScheduleV2`` (EventBridge Scheduler) event."""

    function_id: str
    handler: str
    rule_name: str
    every_seconds: float
    timeout_seconds: int
    memory_mb: int


_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


def schedule_event_sources(template: Mapping[str, JsonValue]) -> list[ScheduleEventSource]:
    """Every scheduled event of the template's serverless functions. Only ``rate(...)`` schedules
    are understood (a ``cron(...)`` one raises: the local stack would not run it as AWS does)."""
    defaults: Mapping[str, JsonValue] = template.get("Globals", {}).get("Function", {})
    sources: list[ScheduleEventSource] = []
    for function_id, res in template["Resources"].items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props: Mapping[str, JsonValue] = {**defaults, **res.get("Properties", {})}
        for event_id, event in props.get("Events", {}).items():
            if event.get("Type") not in ("Schedule", "ScheduleV2"):
                continue
            ev = event["Properties"]
            expression = str(ev.get("Schedule") or ev.get("ScheduleExpression") or "")
            match = _RATE.match(expression.strip())
            if match is None:
                raise ValueError(
                    f"{function_id}.{event_id}: the local stack runs rate(...) schedules only, not {expression!r}"
                )
            amount, unit = int(match.group(1)), match.group(2).rstrip("s")
            sources.append(
                ScheduleEventSource(
                    function_id=function_id,
                    handler=_handler_path(str(props["CodeUri"]), str(props["Handler"])),
                    rule_name=f"{function_id}{event_id}",
                    every_seconds=float(amount * _UNIT_SECONDS[unit]),
                    timeout_seconds=int(props.get("Timeout", 3)),
                    memory_mb=int(props.get("MemorySize", 128)),
                )
            )
    return sources


@dataclass(frozen=True, slots=True)
class FunctionEnvironment:
    values: dict[str, str]
    resource_keys: frozenset[str]
    """The keys whose value names a local table, queue or bucket."""


def function_environment(template: Mapping[str, JsonValue], resources: LocalResources) -> FunctionEnvironment:
    """``Globals.Function.Environment.Variables`` resolved as CloudFormation would: literals as they
    are, ``!Ref`` to a parameter as its default, ``!Ref`` to a table or a bucket as its name and to a
    queue as its URL (here: the local ones). Values that cannot be resolved locally are left out."""
    variables: Mapping[str, JsonValue] = (
        template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    )
    defaults = _parameter_defaults(template)
    located = {**resources.tables, **resources.queue_urls, **resources.buckets}
    values: dict[str, str] = {}
    resource_keys: set[str] = set()
    for key, value in variables.items():
        if isinstance(value, dict):
            target = value.get("Ref")
            if target in located:
                values[key] = located[target]
                resource_keys.add(key)
            elif target in defaults:
                values[key] = defaults[target]
        elif isinstance(value, bool):
            values[key] = str(value).lower()
        else:
            values[key] = str(value)
    return FunctionEnvironment(values, frozenset(resource_keys))


LAMBDA_TASK_ROOT = "/var/task/"


def localized(environment: FunctionEnvironment, task_root: Path | None) -> FunctionEnvironment:
    """``environment`` with values naming a path under Lambda's ``/var/task/`` (where a function's
    code is: e.g. ``A2A_CARD_FILE=/var/task/agent.json``) pointed at the local code directory."""
    if task_root is None:
        return environment
    values = {
        key: str(task_root / value.removeprefix(LAMBDA_TASK_ROOT)) if value.startswith(LAMBDA_TASK_ROOT) else value
        for key, value in environment.values.items()
    }
    return FunctionEnvironment(values, environment.resource_keys)


def _handler_path(code_uri: str, handler: str) -> str:
    """As Lambda resolves it: the module on the path of the function's code (``CodeUri``) and its
    layers (the kit's ``a2a_serverless.functions`` come from the core layer). The stack puts each
    function's code directory on ``sys.path`` (:func:`code_dirs`)."""
    module, _, attr = handler.rpartition(".")
    return f"{module}:{attr}"


def code_dirs(template: Mapping[str, JsonValue]) -> list[str]:
    """The ``CodeUri`` directories of the template's functions (relative to the template)."""
    resources: Mapping[str, JsonValue] = template.get("Resources", {})
    dirs = {
        str(resource.get("Properties", {}).get("CodeUri", "")).strip("/")
        for resource in resources.values()
        if resource.get("Type") == "AWS::Serverless::Function"
    }
    return sorted(d for d in dirs if d)


def _get_att_arn(value: JsonValue) -> str:
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        logical_id, attribute = value["Fn::GetAtt"]
        if attribute == "Arn":
            return str(logical_id)
    raise ValueError(f"an event source queue must be !GetAtt <Queue>.Arn, got {value!r}")
