"""From ``aws_calls.py``'s raw records to its figures: units per method, per task, and cost.

The template's facts (memory, architecture, batch sizes, queue types, API type) from template.yaml;
the records summed into units per A2A method and per component; each task shape's units per task
priced at the constants of :mod:`_aws_units` into a cost per million tasks, the event source
mappings' SQS requests estimated from the template's batch sizes.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from _aws_driver import HELLO_SHAPES, shape_description
from _aws_units import (
    API_GATEWAY_REST_REQUEST,
    AUTHORIZER_ASSUMED_MS,
    DATA_TRANSFER_OUT_GB,
    DAYS_PER_MONTH,
    DYNAMODB_RRU,
    DYNAMODB_WRU,
    GB,
    LAMBDA_GB_SECOND_ARM64,
    LAMBDA_REQUEST,
    S3_GET_REQUEST,
    S3_PUT_REQUEST,
    S3_STANDARD_GB_MONTH,
    SQS_FIFO_REQUEST,
    SQS_STANDARD_REQUEST,
    WRITE_OPS,
)


def template_facts() -> dict[str, Any]:
    """Memory, architecture, event source batch sizes, queue types and the API type, from template.yaml."""
    from a2a_serverless_dev._template import sqs_event_sources
    from a2a_serverless_dev.resources import load_template

    template = load_template()
    resources = template["Resources"]
    globals_ = template.get("Globals", {}).get("Function", {})
    functions = {}
    for name, resource in resources.items():
        if resource["Type"] == "AWS::Serverless::Function":
            props = resource["Properties"]
            functions[name] = {
                "memory_mb": int(props.get("MemorySize", globals_.get("MemorySize", 128))),
                "architectures": props.get("Architectures", globals_.get("Architectures", ["x86_64"])),
            }
    queues = {
        name: {"fifo": bool(r["Properties"].get("FifoQueue"))}
        for name, r in resources.items()
        if r["Type"] == "AWS::SQS::Queue"
    }
    sources = {s.queue_id: {"function": s.function_id, "batch_size": s.batch_size} for s in sqs_event_sources(template)}
    apis = sorted(
        {r["Type"] for r in resources.values() if r["Type"] in ("AWS::Serverless::Api", "AWS::Serverless::HttpApi")}
    )
    auth_default = template.get("Parameters", {}).get("AuthMode", {}).get("Default", "")
    ttl_days = int(template.get("Parameters", {}).get("TaskTtlDays", {}).get("Default", DAYS_PER_MONTH))
    return {
        "functions": functions,
        "queues": queues,
        "sqs_event_sources": sources,
        "api_types": apis,
        "auth_mode": auth_default,
        "task_ttl_days": ttl_days,
        "buckets": sorted(name for name, r in resources.items() if r["Type"] == "AWS::S3::Bucket"),
    }


def method_function(label: str) -> str:
    from a2a_serverless.methods import METHODS_BY_NAME

    method = METHODS_BY_NAME[label.split(" ")[0]]
    if method.function == "gateway":
        return "GatewayFunction"
    return "".join(part.title() for part in method.function.split("_")) + "Function"


def _units(calls: list[dict[str, Any]]) -> dict[str, Any]:
    ops: Counter[str] = Counter()
    out: dict[str, Any] = {
        "rru": 0.0,
        "wru": 0.0,
        "wru_gsi": 0.0,
        "transact_items": 0,
        "sqs_fifo": 0,
        "sqs_std": 0,
        "sqs_entries": 0,
        "dynamodb_write_request_bytes": 0,
        "s3_put_requests": 0,
        "s3_get_requests": 0,
        "s3_free_requests": 0,
        "s3_presigned_urls": 0,
        "s3_bytes_sent": 0,
        "s3_bytes_received": 0,
        "s3_bytes_stored": 0,
        "data_transfer_out_bytes": 0,
    }
    stored: dict[str, int] = {}
    for c in calls:
        ops[f"{c['service']}.{c['op']}"] += 1
        if c["service"] == "dynamodb" and c["op"] in WRITE_OPS:
            out["dynamodb_write_request_bytes"] += c.get("request_bytes", 0)
        out["rru"] += c.get("rru", 0.0)
        out["wru"] += c.get("wru", 0.0)
        out["wru_gsi"] += c.get("wru_gsi", 0.0)
        if c["op"] == "TransactWriteItems":
            out["transact_items"] += c.get("items", 0)
        if c["service"] == "sqs":
            out["sqs_fifo" if c.get("fifo") else "sqs_std"] += c.get("sqs_requests", 1)
            out["sqs_entries"] += c.get("entries", 0)
        if c["service"] == "s3":
            tier = c.get("s3_tier", "get")
            if tier in ("put", "get", "free"):
                out[f"s3_{tier}_requests"] += c.get("s3_requests", 1)
            out["s3_presigned_urls"] += c.get("presigned_url", 0)
            out["s3_bytes_sent"] += c.get("s3_bytes_sent", 0)
            out["s3_bytes_received"] += c.get("s3_bytes_received", 0)
            out["data_transfer_out_bytes"] += c.get("data_transfer_out_bytes", 0)
            if "s3_object" in c:
                stored[c["s3_object"]] = c.get("s3_object_bytes", 0)
    out["s3_bytes_stored"] = sum(stored.values())
    out["s3_objects_stored"] = sorted(stored)
    out["calls"] = dict(sorted(ops.items()))
    out["dynamodb_calls"] = sum(n for k, n in ops.items() if k.startswith("dynamodb."))
    out["sqs_calls"] = sum(n for k, n in ops.items() if k.startswith("sqs."))
    out["s3_calls"] = sum(n for k, n in ops.items() if k.startswith("s3."))
    out["errors"] = dict(Counter(c["error"] for c in calls if c.get("error")))
    return out


def _scaled(units: dict[str, Any], n: float) -> dict[str, Any]:
    if n <= 0:
        return units
    out = {k: (round(v / n, 3) if isinstance(v, (int, float)) else v) for k, v in units.items()}
    out["calls"] = {k: round(v / n, 3) for k, v in units["calls"].items()}
    out["errors"] = {k: round(v / n, 3) for k, v in units["errors"].items()}
    return out


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


def analyse(
    raw: dict[str, Any], samples: int, facts: dict[str, Any], shapes: Sequence[str] = HELLO_SHAPES
) -> dict[str, Any]:
    calls: list[dict[str, Any]] = raw["calls"]
    window_samples: dict[str, int] = raw.get("window_samples", {})  # runs per window: stream shapes 1
    invocations: list[dict[str, Any]] = raw["invocations"]
    # ---- per method, API side, per request
    requests = [i for i in invocations if i["kind"] == "api"]
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i in requests:
        by_label[i["label"]].append(i)
    methods: dict[str, Any] = {}
    for label, reqs in sorted(by_label.items()):
        mine = [c for c in calls if c["component"] == "api" and c["label"] == label]
        entry = _scaled(_units(mine), len(reqs))
        entry.update(
            {
                "method": label.split(" ")[0],
                "function": method_function(label),
                "requests": len(reqs),
                "median_ms": _median([i["ms"] for i in reqs]),
            }
        )
        methods[label] = entry
    # ---- per window: every component, per sample
    windows: dict[str, Any] = {}
    stored_per_task: dict[str, float] = {}
    """Bytes of the S3 objects a window's calls wrote, per run (an object put twice is stored once)."""
    for window in sorted({c["window"] for c in calls} | {i["window"] for i in invocations}):
        if window in ("between", "startup"):
            continue
        components: dict[str, Any] = {}
        in_window = [c for c in calls if c["window"] == window]
        stored_per_task[window] = _units(in_window)["s3_bytes_stored"] / window_samples.get(window, samples)
        invs = [i for i in invocations if i["window"] == window]
        names = sorted({c["component"] if c["component"] != "api" else f"api:{c['label']}" for c in in_window})
        names += sorted({i["name"] for i in invs if i["kind"] == "lambda"} - set(names))
        for name in names:
            if name.startswith("api:"):
                mine = [c for c in in_window if c["component"] == "api" and c["label"] == name[4:]]
            else:
                mine = [c for c in in_window if c["component"] == name]
            runs_of_window = window_samples.get(window, samples)
            entry = _scaled(_units(mine), runs_of_window)
            runs = [i for i in invs if i["kind"] == "lambda" and i["name"] == name]
            entry["invocations"] = round(len(runs) / runs_of_window, 3)
            entry["median_ms"] = _median([i["ms"] for i in runs])
            components[name] = entry
        windows[window] = components
    # ---- per executor event and per notification
    notifications = raw["notes"].get("notifications", [])
    per_notification: dict[str, Any] = {}
    if notifications:
        n = sum(notifications)
        for name in ("PushDispatcherFunction", "PushDeliveryFunction"):
            mine = [c for c in calls if c["window"] == "hello_push" and c["component"] == name]
            per_notification[name] = _scaled(_units(mine), n)
        per_notification["notifications_per_task"] = round(n / len(notifications), 2)
    hello_worker = [c for c in calls if c["window"] == "hello_blocking" and c["component"] == "WorkerFunction"]
    per_event = _scaled(_units(hello_worker), 3 * samples)
    written: dict[str, list[int]] = defaultdict(list)
    moves: Counter[str] = Counter()
    for c in calls:
        if c["window"] in window_samples:
            continue  # the stream shapes have their own figures
        for size in c.get("sizes", []):
            written[size["item"]].append(max(size["before"], size["after"]))
            if size["item"] == "META":
                moves["head writes"] += 1
                moves["head writes moving an index key"] += bool(size["moved"])
    item_sizes = {
        kind: {"writes": len(v), "median_bytes": int(statistics.median(v)), "max_bytes": max(v)}
        for kind, v in sorted(written.items())
    }
    costs = {
        name: cost_of_shape(
            name, windows, requests, invocations, facts, window_samples.get(name, samples), stored_per_task[name]
        )
        for name in shapes
        if name in windows
    }
    return {
        "methods": methods,
        "windows": windows,
        "per_executor_event": per_event,
        "per_notification": per_notification,
        "shapes": costs,
        "stream_shapes": {
            name: stream_figures(name, info, calls, invocations, costs.get(name))
            for name, info in raw.get("stream_shapes", {}).items()
        },
        "artifact_shapes": {
            name: artifact_figures(name, info, calls, costs.get(name))
            for name, info in raw.get("artifact_shapes", {}).items()
        },
        "item_sizes_written": item_sizes,
        "head_index_key_moves": dict(moves),
        "notes": raw["notes"],
        "warmup_only_ssm_calls": raw.get("warmup_only", {}),
        "measure_errors": sorted({c["measure_error"] for c in calls if "measure_error" in c}),
    }


def stream_figures(
    name: str,
    info: dict[str, Any],
    calls: list[dict[str, Any]],
    invocations: list[dict[str, Any]],
    cost: dict[str, Any] | None,
) -> dict[str, Any]:
    """One stream shape's run: what happened to the task, every DynamoDB call of its window (all
    components) by operation, the bytes of the write requests, the units, the worker's time, the
    cost per million such tasks."""
    if "skipped" in info or cost is None:
        return dict(info)
    mine = [c for c in calls if c["window"] == name]
    dynamodb = [c for c in mine if c["service"] == "dynamodb"]
    units = _units(dynamodb)
    worker = [i for i in invocations if i["window"] == name and i["kind"] == "lambda" and i["name"] == "WorkerFunction"]
    heads = [max(s["before"], s["after"]) for c in dynamodb for s in c.get("sizes", []) if s["item"] == "META"]
    by_component: dict[str, dict[str, int]] = defaultdict(dict)
    for c in dynamodb:
        component = c["component"] if c["component"] != "api" else f"api:{c['label']}"
        by_component[component][c["op"]] = by_component[component].get(c["op"], 0) + 1
    return {
        **info,
        "description": shape_description(name),
        "dynamodb_calls": {k.split(".", 1)[1]: v for k, v in units["calls"].items()},
        "dynamodb_calls_by_component": {k: dict(sorted(v.items())) for k, v in sorted(by_component.items())},
        "dynamodb_errors": units["errors"],
        "dynamodb_write_request_bytes": units["dynamodb_write_request_bytes"],
        "rru": round(units["rru"], 3),
        "wru": round(units["wru"] + units["wru_gsi"], 3),
        "wru_of_which_gsi": round(units["wru_gsi"], 3),
        "transact_items": units["transact_items"],
        "head_max_bytes": max(heads, default=0),
        "worker_invocations": len(worker),
        "worker_ms": [round(i["ms"], 1) for i in worker],
        "worker_seconds_total": round(sum(i["ms"] for i in worker) / 1000, 2),
        "per_million_tasks_usd": cost["per_million_tasks_usd"],
        "total_per_million_tasks_usd": cost["total_per_million_tasks_usd"],
    }


def artifact_figures(
    name: str, info: dict[str, Any], calls: list[dict[str, Any]], cost: dict[str, Any] | None
) -> dict[str, Any]:
    """One artifact shape's run: what the client got, every S3 and DynamoDB call of its window (all
    components) by operation and component, bytes, units and the cost per million such tasks."""
    if cost is None:
        return dict(info)
    mine = [c for c in calls if c["window"] == name]
    s3 = _units([c for c in mine if c["service"] == "s3"])
    dynamodb = _units([c for c in mine if c["service"] == "dynamodb"])
    by_component: dict[str, dict[str, int]] = defaultdict(dict)
    for c in mine:
        component = c["component"] if c["component"] != "api" else f"api:{c['label']}"
        op = f"{c['service']}.{c['op']}"
        by_component[component][op] = by_component[component].get(op, 0) + 1
    return {
        **info,
        "description": shape_description(name),
        "s3_calls": {k.split(".", 1)[1]: v for k, v in s3["calls"].items()},
        "s3_put_requests": s3["s3_put_requests"],
        "s3_get_requests": s3["s3_get_requests"],
        "s3_presigned_urls": s3["s3_presigned_urls"],
        "s3_bytes_sent": s3["s3_bytes_sent"],
        "s3_bytes_received": s3["s3_bytes_received"],
        "s3_bytes_stored": s3["s3_bytes_stored"],
        "data_transfer_out_bytes": s3["data_transfer_out_bytes"],
        "s3_errors": s3["errors"],
        "dynamodb_calls": {k.split(".", 1)[1]: v for k, v in dynamodb["calls"].items()},
        "dynamodb_errors": dynamodb["errors"],
        "dynamodb_write_request_bytes": dynamodb["dynamodb_write_request_bytes"],
        "rru": round(dynamodb["rru"], 3),
        "wru": round(dynamodb["wru"] + dynamodb["wru_gsi"], 3),
        "wru_of_which_gsi": round(dynamodb["wru_gsi"], 3),
        "calls_by_component": {k: dict(sorted(v.items())) for k, v in sorted(by_component.items())},
        "units_per_task": cost["units_per_task"],
        "per_million_tasks_usd": cost["per_million_tasks_usd"],
        "total_per_million_tasks_usd": cost["total_per_million_tasks_usd"],
    }


def cost_of_shape(
    window: str,
    windows: dict[str, Any],
    requests: list[dict[str, Any]],
    invocations: list[dict[str, Any]],
    facts: dict[str, Any],
    samples: int,
    s3_stored_bytes: float = 0.0,
) -> dict[str, Any]:
    """Per task of the shape measured in ``window``: units by service, then dollars.
    ``s3_stored_bytes``: the bytes of the objects its calls wrote, per task (kept for the task's
    retention, ``TaskTtlDays``)."""
    components = windows[window]
    rru = sum(c["rru"] for c in components.values())
    wru = sum(c["wru"] + c["wru_gsi"] for c in components.values())
    wru_gsi = sum(c["wru_gsi"] for c in components.values())
    sqs_fifo = sum(c["sqs_fifo"] for c in components.values())
    sqs_std = sum(c["sqs_std"] for c in components.values())
    # The SQS event source mappings (not our code): one ReceiveMessage and one DeleteMessage(Batch)
    # per message on the queues with BatchSize 1 (every queue here), billed to SQS.
    messages = sum(c["sqs_entries"] for c in components.values())
    esm_requests = 2 * messages
    consumed = facts["sqs_event_sources"]
    esm_fifo = esm_requests if all(facts["queues"][q]["fifo"] for q in consumed) else 0
    # Lambda: API requests (the method's function + the authorizer) and the event source invocations
    api_reqs = [i for i in requests if i["window"] == window]
    lambda_requests = 0.0
    gb_seconds = 0.0
    functions = facts["functions"]
    authorizer = facts["auth_mode"] in ("Open", "Jwt")
    for i in api_reqs:
        memory = functions[method_function(i["label"])]["memory_mb"] / 1024
        lambda_requests += 1
        gb_seconds += memory * i["ms"] / 1000
        if authorizer:
            lambda_requests += 1
            gb_seconds += functions["AuthorizerFunction"]["memory_mb"] / 1024 * AUTHORIZER_ASSUMED_MS / 1000
    for i in invocations:
        if i["window"] == window and i["kind"] == "lambda":
            lambda_requests += 1
            gb_seconds += functions[i["name"]]["memory_mb"] / 1024 * i["ms"] / 1000
    lambda_requests /= samples
    gb_seconds /= samples
    api_requests = len(api_reqs) / samples
    s3_put = sum(c["s3_put_requests"] for c in components.values())
    s3_get = sum(c["s3_get_requests"] for c in components.values())
    out_bytes = sum(c["data_transfer_out_bytes"] for c in components.values())
    storage_months = facts.get("task_ttl_days", DAYS_PER_MONTH) / DAYS_PER_MONTH
    units = {
        "api_requests": round(api_requests, 3),
        "lambda_requests": round(lambda_requests, 3),
        "lambda_gb_seconds": round(gb_seconds, 5),
        "rru": round(rru, 3),
        "wru": round(wru, 3),
        "wru_of_which_gsi": round(wru_gsi, 3),
        "sqs_requests_ours_fifo": round(sqs_fifo, 3),
        "sqs_requests_ours_standard": round(sqs_std, 3),
        "sqs_requests_event_source_estimate": round(esm_requests, 3),
        "notifications": round(sum(c.get("invocations", 0) for n, c in components.items() if "Delivery" in n), 3),
        "s3_put_requests": round(s3_put, 3),
        "s3_get_requests": round(s3_get, 3),
        "s3_presigned_urls": round(sum(c["s3_presigned_urls"] for c in components.values()), 3),
        "s3_bytes_stored": round(s3_stored_bytes),
        "s3_storage_gb_months": round(s3_stored_bytes / GB * storage_months, 6),
        "data_transfer_out_bytes": round(out_bytes),
    }
    dollars = {
        "dynamodb": rru * DYNAMODB_RRU + wru * DYNAMODB_WRU,
        "sqs": (sqs_fifo + esm_fifo) * SQS_FIFO_REQUEST + (sqs_std + esm_requests - esm_fifo) * SQS_STANDARD_REQUEST,
        "lambda": lambda_requests * LAMBDA_REQUEST + gb_seconds * LAMBDA_GB_SECOND_ARM64,
        "api_gateway": api_requests * API_GATEWAY_REST_REQUEST,
        "s3_requests": s3_put * S3_PUT_REQUEST + s3_get * S3_GET_REQUEST,
        "s3_storage": s3_stored_bytes / GB * storage_months * S3_STANDARD_GB_MONTH,
        "data_transfer_out": out_bytes / GB * DATA_TRANSFER_OUT_GB,
    }
    per_million = {k: round(v * 1e6, 2) for k, v in dollars.items()}
    per_million["lambda_requests_only"] = round(lambda_requests * LAMBDA_REQUEST * 1e6, 2)
    per_million["lambda_duration_only"] = round(gb_seconds * LAMBDA_GB_SECOND_ARM64 * 1e6, 2)
    total = round(sum(per_million[k] for k in dollars), 2)
    return {
        "description": shape_description(window),
        "units_per_task": units,
        "per_million_tasks_usd": per_million,
        "total_per_million_tasks_usd": total,
    }
