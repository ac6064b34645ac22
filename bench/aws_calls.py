"""Figure 5: AWS calls per A2A operation, and what a million tasks cost at on-demand prices.

On the local stack (moto server + uvicorn + the SQS / stream pollers running the template's
handlers, all in this process), every A2A 1.0 method is driven at least once per sample, and every
AWS call the code makes is seen by botocore hooks on the default session (the one the store, queue
and signer clients use; the pollers' own clients are not on it). Each call is attributed to the
component that made it: the API-side handler of method X (an ASGI wrapper sets a context variable
from a per-request label header, and Starlette's thread pool carries it into the store calls), or
the worker, push dispatcher, push delivery or dead-letter function (the template's handlers,
wrapped). For each call: service, operation, transaction items, batch entries, and the billed
units: DynamoDB read / write request units computed from the items themselves (sizes by
DynamoDB's rules from the stored attribute values, before and after each write, read from moto's
in-process backend; global secondary index writes included), SQS requests per 64 KB chunk.

Task shapes (one window each, run one after another, the stack quiet in between) give the cost per
million tasks: DynamoDB, SQS (our calls plus an estimate of the event source mappings' receive and
delete), Lambda (requests and GB-seconds from the template's MemorySize and the durations measured
here), API Gateway (REST API requests). Prices: the constants below.

Shapes (``--shapes``): ``hello_blocking`` and ``hello_push`` (the default; they come with the
samples of every method), and the streaming shapes of issue 13, ``stream_800_burst``,
``stream_800_paced``, ``stream_200_burst`` (any ``stream_<N>_<burst|paced>``): one task each, run
once after the samples, whose executor (``chunks N INTERVAL`` of ``bench/_stream_agents.py``)
appends N chunks of 40 bytes to one artifact, as fast as it can (burst) or 50 a second (paced);
sent with a returnImmediately SendMessage, the window ends when the task is terminal and the stack
quiet, or at ``--stream-timeout`` seconds. For them: the outcome, DynamoDB calls by operation,
bytes sent in DynamoDB write requests, RRU / WRU, the worker's wall time, the cost per million.

The large-part shape of issue 14, ``artifact_5mb`` (any ``artifact_<N>mb``), run once after the
samples, with the executor ``bigfile N SEED`` of ``bench/_large_agents.py``: one blocking SendMessage
whose executor makes one artifact holding one ``raw`` file part of N MiB of random bytes (stored in
the template's S3 bucket, ``A2A_BLOB_BUCKET``, as the local stack sets it) and completes, then one
GetTask, whose response carries the part as a presigned S3 URL when its base64 is over the
response's inline budget, then one download of the file by that URL (plain HTTP, as a client
would: counted as one S3 GET and its bytes as data transfer out to the internet) and a byte-exact
check. S3 calls are counted like the others (PutObject / GetObject with their body sizes; a
presigned URL, which makes no request, as a ``PresignGetObject`` of no request); the cost per
million adds S3 requests, S3 Standard storage for the task's retention (the template's
``TaskTtlDays``: the bucket's lifecycle expiry) and the data transfer out.

    .venv/bin/python bench/aws_calls.py [--quick] [--samples N] [--json PATH]
        [--shapes hello_blocking,hello_push,stream_800_burst,artifact_5mb,...|all] [--stream-timeout 300]

Prints the markdown tables (``render``); ``--json`` writes the raw result. Importing this module
starts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _aws_analysis import _units, analyse, template_facts
from _aws_driver import (
    ARTIFACT_SHAPES,
    COMPLETED,
    FILE_EXECUTOR,
    HELLO_SHAPES,
    SHAPES,
    STREAM_EXECUTOR,
    STREAM_SHAPES,
    TERMINAL,
    WAIT_LABEL,
    WAIT_POLL_SECONDS,
    Driver,
    artifact_shape,
    bench_executor,
    run_stack,
    stream_shape,
)
from _aws_recorder import Activity, LabelMiddleware, Recorder, _presign_units, _s3_units, wrap_handlers
from _aws_two_turn import WAIT_SHAPES, render_two_turn_wait, two_turn_wait_result
from _aws_units import (
    API_GATEWAY_REST_REQUEST,
    AUTHORIZER_ASSUMED_MS,
    DATA_TRANSFER_OUT_GB,
    DAYS_PER_MONTH,
    DYNAMODB_RRU,
    DYNAMODB_WRU,
    GB,
    LAMBDA_DURABLE_OPERATION,
    LAMBDA_GB_SECOND_ARM64,
    LAMBDA_REQUEST,
    PRICE_SOURCES,
    PRICES_CHECKED,
    S3_GET_REQUEST,
    S3_PUT_REQUEST,
    S3_STANDARD_GB_MONTH,
    SQS_FIFO_REQUEST,
    SQS_STANDARD_REQUEST,
    WRITE_OPS,
    IndexSchema,
    batch_get_units,
    gsi_writes,
)

__all__ = [
    "API_GATEWAY_REST_REQUEST",
    "CAVEATS",
    "COMPLETED",
    "DATA_TRANSFER_OUT_GB",
    "DYNAMODB_RRU",
    "DYNAMODB_WRU",
    "FILE_EXECUTOR",
    "GB",
    "LAMBDA_DURABLE_OPERATION",
    "LAMBDA_GB_SECOND_ARM64",
    "LAMBDA_REQUEST",
    "PRICES_CHECKED",
    "S3_GET_REQUEST",
    "S3_PUT_REQUEST",
    "S3_STANDARD_GB_MONTH",
    "SHAPES",
    "SQS_FIFO_REQUEST",
    "SQS_STANDARD_REQUEST",
    "STREAM_EXECUTOR",
    "STREAM_SHAPES",
    "TERMINAL",
    "WAIT_LABEL",
    "WAIT_POLL_SECONDS",
    "WRITE_OPS",
    "Activity",
    "Driver",
    "IndexSchema",
    "LabelMiddleware",
    "Recorder",
    "_presign_units",
    "_s3_units",
    "_units",
    "analyse",
    "artifact_shape",
    "batch_get_units",
    "bench_executor",
    "build_result",
    "gsi_writes",
    "main",
    "parse_shapes",
    "render",
    "render_artifact_shapes",
    "render_stream_shapes",
    "stream_shape",
    "template_facts",
    "wrap_handlers",
]
"""What the bench scripts and tests use of it: this module is their one entry point (the parts live beside it)."""


# ---------------------------------------------------------------------------------------- output
def render(result: dict[str, Any]) -> str:
    """The markdown section: calls per method, background work per task, cost per million tasks."""
    meta = result["meta"]
    shapes = meta.get("shapes", HELLO_SHAPES)
    sampled = any(shape in HELLO_SHAPES for shape in shapes)
    runs = f"samples: {meta['samples']}" if sampled else "no method samples (stream / artifact shapes only)"
    if any(stream_shape(shape) for shape in shapes):
        runs += "; each stream shape run once"
    if any(artifact_shape(shape) for shape in shapes):
        runs += "; each artifact shape run once"
    out = [
        f"Local stack, {runs} (after a warm-up pass); units per request (methods) or per task "
        "(shapes), averaged over the runs. RRU / WRU computed from item sizes (see the notes).",
        "",
        "**AWS calls per A2A method, API side** (per request; function = the template's function that serves the "
        "REST route; ms = median local request time)",
        "",
        "| method | function | DynamoDB calls | RRU | WRU (of which GSI) | SQS requests | ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in result["methods"].items():
        out.append(
            f"| {label} | {m['function']} | {_ops(m['calls'], 'dynamodb.')} | {_n(m['rru'])} | "
            f"{_n(m['wru'] + m['wru_gsi'])} ({_n(m['wru_gsi'])}) | {_ops(m['calls'], 'sqs.') or '0'} | "
            f"{m['median_ms']} |"
        )
    out += [
        "",
        "**Every component, per task of each window** (api:X = the API side of the requests in that window)",
        "",
        "| window | component | invocations | calls | RRU | WRU (of which GSI) | SQS requests |",
        "|---|---|---|---|---|---|---|",
    ]
    for window, components in result["windows"].items():
        for name, c in components.items():
            sqs = _n(c["sqs_fifo"] + c["sqs_std"])
            inv = _n(c["invocations"]) if not name.startswith("api:") else ""
            out.append(
                f"| {window} | {name} | {inv} | {_ops(c['calls'], '') or '0'} | {_n(c['rru'])} | "
                f"{_n(c['wru'] + c['wru_gsi'])} ({_n(c['wru_gsi'])}) | {sqs} |"
            )
    sizes = ", ".join(
        f"{kind} {v['median_bytes']} B (max {v['max_bytes']})" for kind, v in result["item_sizes_written"].items()
    )
    moves = result["head_index_key_moves"]
    e = result["per_executor_event"]
    if sampled:  # the figures of the method samples' 'hello' tasks
        out += [
            "",
            f"Items written (median size by kind): {sizes}. Head writes that moved both index keys (a status "
            f"change: the ByScope / ByContext sort key is the status timestamp): "
            f"{moves.get('head writes moving an index key', 0)} of {moves.get('head writes', 0)}.",
            f"Worker, per executor event ('hello' task / 3): {_ops(e['calls'], '')}; "
            f"{_n(e['rru'])} RRU, {_n(e['wru'] + e['wru_gsi'])} WRU (of which GSI {_n(e['wru_gsi'])}); "
            f"{_n(e['transact_items'])} transaction items.",
        ]
    pn = result["per_notification"]
    if pn:
        out.append(f"Push, per notification ({pn['notifications_per_task']} notifications per 'hello' task):")
        for name in ("PushDispatcherFunction", "PushDeliveryFunction"):
            c = pn[name]
            out.append(
                f"{name}: {_ops(c['calls'], '')}; {_n(c['rru'])} RRU, {_n(c['wru'] + c['wru_gsi'])} WRU, "
                f"{_n(c['sqs_fifo'] + c['sqs_std'])} SQS requests."
            )
    out += [
        "",
        "**Cost per million tasks** (us-east-1 on-demand, USD; no free tier)",
        "",
        "| task shape | API req | Lambda req | GB-s | RRU | WRU (GSI) | SQS req (ours + event source) | "
        "S3 PUT + GET | DynamoDB | SQS | Lambda (req + duration) | API Gateway | S3 (req + storage) | data out | "
        "**total** |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in result["shapes"].items():
        u, d = s["units_per_task"], s["per_million_tasks_usd"]
        sqs = u["sqs_requests_ours_fifo"] + u["sqs_requests_ours_standard"]
        s3 = d.get("s3_requests", 0.0) + d.get("s3_storage", 0.0)
        out.append(
            f"| {name} | {_n(u['api_requests'])} | {_n(u['lambda_requests'])} | {u['lambda_gb_seconds']:.4f} | "
            f"{_n(u['rru'])} | {_n(u['wru'])} ({_n(u['wru_of_which_gsi'])}) | {_n(sqs)} + "
            f"{_n(u['sqs_requests_event_source_estimate'])} | "
            f"{_n(u.get('s3_put_requests', 0))} + {_n(u.get('s3_get_requests', 0))} | "
            f"{d['dynamodb']:.2f} | {d['sqs']:.2f} | {d['lambda']:.2f} ({d['lambda_requests_only']:.2f} + "
            f"{d['lambda_duration_only']:.2f}) | {d['api_gateway']:.2f} | {s3:,.2f} "
            f"({d.get('s3_requests', 0.0):,.2f} + {d.get('s3_storage', 0.0):,.2f}) | "
            f"{d.get('data_transfer_out', 0.0):,.2f} | **{s['total_per_million_tasks_usd']:,.2f}** |"
        )
    out += render_stream_shapes(result.get("stream_shapes") or {})
    out += render_artifact_shapes(result.get("artifact_shapes") or {})
    out += ["", "Task shapes:"]
    out += [f"- `{name}`: {s['description']}." for name, s in result["shapes"].items()]
    out += ["", "Prices (checked " + meta["prices_checked"] + "):"]
    out += [f"- {k}: {v}" for k, v in meta["prices"].items()]
    out += ["", "Notes:"]
    out += [f"- {note}" for note in meta["caveats"]]
    return "\n".join(out) + "\n"


def render_stream_shapes(streams: dict[str, Any]) -> list[str]:
    """The stream shapes' table: per task, every component of the window."""
    if not streams:
        return []
    out = [
        "",
        "**Streaming task shapes** (one task each; DynamoDB calls of every component in the window; bytes = "
        "serialized request bodies of the DynamoDB write calls; worker s = wall time of its invocations)",
        "",
        "| shape | outcome | chunks stored | DynamoDB calls | write request bytes | RRU | WRU (GSI) | head max B | "
        "DynamoDB $/M | total $/M | worker s (invocations) | send → terminal s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in streams.items():
        if "skipped" in s:
            out.append(f"| {name} | skipped: {s['skipped']} |  |  |  |  |  |  |  |  |  |  |")
            continue
        state = s.get("final_state", "?").removeprefix("TASK_STATE_")
        if s.get("timed_out"):
            state += f" (not terminal after {s['cap_seconds']:g} s)"
        calls = ", ".join(f"{_n(n)} {op}" for op, n in s["dynamodb_calls"].items())
        terminal = s.get("seconds_to_terminal")
        out.append(
            f"| {name} | {state} | {s.get('chunks_stored', '?')} of {s['chunks_sent_by_executor']} | {calls} | "
            f"{s['dynamodb_write_request_bytes']:,} | {_n(s['rru'])} | {_n(s['wru'])} ({_n(s['wru_of_which_gsi'])}) | "
            f"{s['head_max_bytes']:,} | {s['per_million_tasks_usd']['dynamodb']:,.2f} | "
            f"{s['total_per_million_tasks_usd']:,.2f} | {s['worker_seconds_total']:g} ({s['worker_invocations']}) | "
            f"{terminal if terminal is not None else '-'} |"
        )
    messages = {n: s.get("final_status_message") for n, s in streams.items() if s.get("final_status_message")}
    out += [f"- `{n}` final status message: {m!r}" for n, m in messages.items()]
    return out


def render_artifact_shapes(artifacts: dict[str, Any]) -> list[str]:
    """The artifact shapes' table: per task, the S3 and DynamoDB calls of every component."""
    if not artifacts:
        return []
    out = [
        "",
        "**Large-part task shapes** (one task each; every component's calls in the window, the client's download "
        "by the presigned URL included; S3 bytes = object bodies sent / received)",
        "",
        "| shape | outcome | GetTask part | downloaded | S3 calls | S3 bytes sent / received | DynamoDB calls | "
        "RRU | WRU (GSI) | DynamoDB $/M | S3 req $/M | S3 storage $/M | data out $/M | total $/M |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, a in artifacts.items():
        if "s3_calls" not in a:
            out.append(f"| {name} | not measured |  |  |  |  |  |  |  |  |  |  |  |  |")
            continue
        d = a["per_million_tasks_usd"]
        state = a.get("final_state", "?").removeprefix("TASK_STATE_")
        exact = "byte-exact" if a.get("bytes_exact") else "NOT exact"
        s3_calls = ", ".join(f"{_n(n)} {op}" for op, n in a["s3_calls"].items())
        calls = ", ".join(f"{_n(n)} {op}" for op, n in a["dynamodb_calls"].items())
        out.append(
            f"| {name} | {state} | {a.get('get_task_part', '?')} | {a.get('bytes_received', 0):,} B, {exact} | "
            f"{s3_calls} | {a['s3_bytes_sent']:,} / {a['s3_bytes_received']:,} | {calls} | {_n(a['rru'])} | "
            f"{_n(a['wru'])} ({_n(a['wru_of_which_gsi'])}) | {d['dynamodb']:,.2f} | {d['s3_requests']:,.2f} | "
            f"{d['s3_storage']:,.2f} | {d['data_transfer_out']:,.2f} | {a['total_per_million_tasks_usd']:,.2f} |"
        )
    return out


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value else "0"


def _ops(calls: dict[str, float], prefix: str) -> str:
    return ", ".join(f"{_n(n)} {op.split('.', 1)[1]}" for op, n in calls.items() if op.startswith(prefix) and n)


CAVEATS = [
    "Calls are counted in botocore's after-call hook on the default session (one per API call, error responses "
    "included; botocore's own retries are not separate calls). The pollers' clients (SQS receive / delete, stream "
    "reads) are not on it.",
    "RRU / WRU are computed, not reported: moto's ConsumedCapacity (with ReturnConsumedCapacity) is a constant per "
    "operation (0.5 for GetItem, 1 or 2 per item elsewhere) whatever the item size or consistency, so it is not "
    "used. Item sizes follow DynamoDB's published rules, from the attribute values moto stores (approximate: "
    "number sizes, index entry overhead). Reads: per 4 KB, strongly consistent 1, eventually consistent (GSI "
    "queries) 0.5, Query rounded on the sum of the items read (before a filter, a projection or a count; up to "
    "its Limit), at least 1 unit; BatchGetItem as one GetItem per key (each item rounded up to 4 KB, a missing "
    "one 1 unit, ConsistentRead per table); a projection does not lower a read's bill. Writes: per 1 KB of the "
    "larger of the before and after item, at least 1; inside TransactWriteItems 2 per KB per item; "
    "BatchWriteItem 1 per KB per item processed. Failed conditional writes are charged by the existing item's "
    "size.",
    "Global secondary indexes: each index write billed at 1 WRU per KB (the standard rate, also for writes made in "
    "a transaction: an assumption), sized by the index's projection as moto's table defines it (ALL: the whole "
    "item; INCLUDE: the table and index keys plus the listed attributes; KEYS_ONLY: the keys); an item entering "
    "or leaving an index is one write, an index key change a delete plus a put (two writes), a change of a "
    "projected attribute one write, a change of attributes the index does not project none.",
    "Write request bytes: the size of the serialized request body of each DynamoDB PutItem, UpdateItem, "
    "DeleteItem, TransactWriteItems and BatchWriteItem call (botocore's request-created event), failed ones "
    "included.",
    "SQS: every queue is FIFO ($0.50 per million); a request is billed per 64 KB of payload. The event source "
    "mappings' ReceiveMessage / DeleteMessage are not made by our code and not counted; the cost adds an estimate "
    "of one receive and one delete per message (BatchSize 1 on every SQS event source in template.yaml). Their "
    "idle long polling is a fixed cost per queue, not per task, and is left out.",
    "DynamoDB Streams: GetRecords calls by Lambda event source mappings are free; the dispatcher's invocations "
    "(measured here; on AWS they depend on how records batch) are counted as Lambda requests.",
    "Lambda: one request per API call for the function serving the route (REST binding; JSON-RPC would all go to "
    "GatewayFunction, 1 GB) plus one for the REQUEST authorizer (AuthMode Open, the template default, not "
    f"cached; {AUTHORIZER_ASSUMED_MS:.0f} ms assumed), and one per event source invocation. GB-seconds use the "
    "template's MemorySize (arm64) and the durations measured here: handler wall time on a loaded 2-core machine "
    "with moto over local HTTP, so indicative only; a blocking SendMessage's duration includes the wait for the "
    "worker.",
    "S3 (artifact shapes): every call on the default session counted in after-call (PutObject / UploadPart body "
    "bytes from the request's parameters, GetObject bytes from its ContentLength); a presigned URL is signed "
    "locally by generate_presigned_url (botocore emits before-parameter-build, then sends nothing): recorded as "
    "a PresignGetObject of no request and no cost. The client's download by the URL is plain HTTP, recorded as "
    "one S3 GET by component 'client', its bytes as data transfer out to the internet (S3 to Lambda in the "
    "region: free). PUT, COPY, POST, LIST: the PUT price; DELETE free; every other request the GET price. "
    "Storage: the bytes of the distinct objects written, S3 Standard, for TaskTtlDays (the bucket's lifecycle "
    "expiry; S3 expires an object at the midnight UTC after that age, so up to a day more), prorated at "
    f"{DAYS_PER_MONTH} days a month; GB = 2^30 bytes. moto checks neither the URL's signature nor its expiry.",
    "Not included: DynamoDB storage, PITR and stream storage, CloudWatch Logs / metrics, X-Ray (Tracing: Active on "
    "every function), data transfer other than the artifact shapes' downloads, SSM (standard parameters: no "
    "charge; the push signing key set is read once per cold start), the free tiers.",
    "Streaming methods poll the event log while open (a strongly consistent Query every 50 ms while events flow, "
    "backing off to 1 s): their calls grow with the stream's duration; SubscribeToTask here follows a 'sleep 1' "
    "task to its end.",
]


def build_result(
    samples: int, quick: bool, shapes: Sequence[str] = HELLO_SHAPES, stream_cap: float = 300.0
) -> dict[str, Any]:
    raw = run_stack(samples, quick, shapes, stream_cap)
    facts = template_facts()
    result = analyse(raw, samples, facts, shapes)
    result["meta"] = {
        "samples": samples,
        "quick": quick,
        "shapes": list(shapes),
        "stream_cap_seconds": stream_cap,
        "date": time.strftime("%Y-%m-%d"),
        "prices_checked": PRICES_CHECKED,
        "prices": {
            "DynamoDB on-demand write / read request unit": f"${DYNAMODB_WRU * 1e6:.3f} / ${DYNAMODB_RRU * 1e6:.3f} "
            f"per million ({PRICE_SOURCES['DynamoDB on-demand']})",
            "SQS FIFO / standard request": f"${SQS_FIFO_REQUEST * 1e6:.2f} / ${SQS_STANDARD_REQUEST * 1e6:.2f} "
            f"per million ({PRICE_SOURCES['SQS']})",
            "Lambda": f"${LAMBDA_REQUEST * 1e6:.2f} per million requests, ${LAMBDA_GB_SECOND_ARM64} per GB-second "
            f"arm64 ({PRICE_SOURCES['Lambda']})",
            "API Gateway REST API": f"${API_GATEWAY_REST_REQUEST * 1e6:.2f} per million requests "
            f"({PRICE_SOURCES['API Gateway']})",
            "S3 Standard requests": f"PUT, COPY, POST, LIST ${S3_PUT_REQUEST * 1000:.3f} / GET and others "
            f"${S3_GET_REQUEST * 1000:.4f} per 1,000 ({PRICE_SOURCES['S3']})",
            "S3 Standard storage": f"${S3_STANDARD_GB_MONTH} per GB-month ({PRICE_SOURCES['S3']})",
            "Data transfer out to the internet": f"${DATA_TRANSFER_OUT_GB} per GB, first 10 TB a month "
            f"({PRICE_SOURCES['S3']})",
        },
        "template": facts,
        "caveats": CAVEATS,
    }
    return result


def parse_shapes(text: str, parser: argparse.ArgumentParser) -> list[str]:
    everything = [*HELLO_SHAPES, *STREAM_SHAPES, *ARTIFACT_SHAPES]
    names = everything if text.strip() == "all" else [n.strip() for n in text.split(",")]
    names = [n for n in dict.fromkeys(names) if n]
    unknown = [
        n
        for n in names
        if n not in HELLO_SHAPES and n not in WAIT_SHAPES and stream_shape(n) is None and artifact_shape(n) is None
    ]
    if unknown or not names:
        parser.error(
            f"unknown shapes {unknown}: use hello_blocking, hello_push, stream_<N>_<burst|paced>, artifact_<N>mb, "
            "two_turn_wait or all"
        )
    if set(names) & set(WAIT_SHAPES) and set(names) - set(WAIT_SHAPES):
        parser.error("two_turn_wait runs two stacks of its own (queue and durable mode): give it alone")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="AWS calls per A2A method and cost per million tasks (local stack)")
    parser.add_argument("--quick", action="store_true", help="one sample (under a minute)")
    parser.add_argument("--samples", type=int, default=None, help="samples after the warm-up pass (default 5)")
    parser.add_argument("--json", type=Path, help="write the result here")
    parser.add_argument(
        "--shapes",
        default=",".join(HELLO_SHAPES),
        help="comma-separated task shapes: hello_blocking, hello_push (with them, every method is sampled), "
        f"{', '.join(STREAM_SHAPES)} or any stream_<N>_<burst|paced>, {', '.join(ARTIFACT_SHAPES)} or any "
        "artifact_<N>mb (run once each, after the samples); 'all' = the hello, the three stream and the "
        "artifact shapes (default: the hello shapes); two_turn_wait (alone: queue and durable mode, "
        "--samples tasks each)",
    )
    parser.add_argument(
        "--stream-timeout",
        type=float,
        default=300.0,
        help="cap per stream shape, seconds: then what happened so far is reported (default 300)",
    )
    args = parser.parse_args(argv)
    shapes = parse_shapes(args.shapes, parser)
    samples = args.samples or (1 if args.quick else 5)
    if shapes == list(WAIT_SHAPES):
        waited = two_turn_wait_result(samples)
        if args.json:
            args.json.write_text(json.dumps(waited, indent=2))
        print(render_two_turn_wait(waited))
        return 1 if any(waited["modes"][m]["measure_errors"] for m in waited["modes"]) else 0
    result = build_result(samples, args.quick, shapes, args.stream_timeout)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(render(result))
    return 1 if result["measure_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
