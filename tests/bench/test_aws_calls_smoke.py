"""bench/aws_calls.py end to end, and its unit accounting on its own.

The end-to-end run (``--quick`` plus a 20-chunk stream shape and the 5 MiB artifact shape) starts
the local stack in a subprocess, drives every A2A method, and its JSON holds the calls and costs the
README's figure 5 is made of. Every check is on what is counted (calls, units, requests, bytes, and dollars as the
price constants times counted units), never on a measured duration or on a comparison of two
totals that include one: those depend on the machine's load."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from testkit.bench_runs import BenchRun, run_bench
from testkit.spec import V1_METHODS

ROOT = Path(__file__).resolve().parents[2]
METHODS = set(V1_METHODS)
STREAM = "stream_20_burst"
CHUNKS = 20
CHUNK_BYTES = 40
ARTIFACT = "artifact_5mb"
FILE_BYTES = 5 * 1024 * 1024


@pytest.fixture(scope="module")
def aws_calls() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import aws_calls
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return aws_calls


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    return run_bench(
        "aws_calls.py",
        [
            "--quick",
            "--shapes",
            f"hello_blocking,hello_push,{STREAM},{ARTIFACT}",
            "--stream-timeout",
            "600",
        ],
        tmp_path_factory.mktemp("aws_calls") / "result.json",
        expect_in_stdout="Cost per million tasks",
    )


@pytest.fixture
def result(bench_run: BenchRun, request: pytest.FixtureRequest) -> dict[str, Any]:
    return bench_run.result(request)


# ------------------------------------------------------------------------------- end to end (stack)
@pytest.mark.e2e
def test_every_method_is_measured(result: dict[str, Any]) -> None:
    assert {m["method"] for m in result["methods"].values()} == METHODS
    assert all(m["requests"] >= 1 for m in result["methods"].values())
    assert result["measure_errors"] == []


@pytest.mark.e2e
def test_get_task_reads_snapshot_and_head_at_most_twice_and_writes_nothing(result: dict[str, Any]) -> None:
    get_task = result["methods"]["GetTask"]
    # A settled task: one Query (its snapshot and head, the top two keys); a running one (the
    # driver also polls those): a second Query for the events after the snapshot.
    assert set(get_task["calls"]) == {"dynamodb.Query"}
    assert 1.0 <= get_task["calls"]["dynamodb.Query"] <= 2.0
    assert 1.0 <= get_task["rru"] <= 2.0  # small tasks: each Query reads under 4 KB
    assert get_task["wru"] == get_task["wru_gsi"] == 0
    assert get_task["sqs_calls"] == 0
    assert get_task["dynamodb_write_request_bytes"] == 0


@pytest.mark.e2e
def test_send_message_queues_one_work_item_after_three_puts(result: dict[str, Any]) -> None:
    sends = {label: m for label, m in result["methods"].items() if m["method"] == "SendMessage"}
    assert len(sends) >= 2  # blocking and returnImmediately at least
    for label, m in sends.items():
        assert m["calls"]["sqs.SendMessage"] == 1.0, label
        # the send key, the first log item (and an inline push config), the head: no transaction
        assert m["calls"]["dynamodb.PutItem"] >= 3.0, label
        assert "dynamodb.TransactWriteItems" not in m["calls"], label
        assert m["sqs_fifo"] == 1.0, label  # the work queue is FIFO, one 64 KB chunk
        assert m["wru"] > 0, label
        assert m["dynamodb_write_request_bytes"] > 0, label


@pytest.mark.e2e
def test_background_work_is_attributed(result: dict[str, Any]) -> None:
    hello = result["windows"]["hello_blocking"]
    assert hello["WorkerFunction"]["invocations"] == 1.0
    # The claim (the head alone, put whole), then the executor's events: a hello's fit its head with
    # the task's snapshot (the commit that ends it is the head alone)
    assert hello["WorkerFunction"]["calls"]["dynamodb.PutItem"] == 2
    assert hello["WorkerFunction"]["calls"].get("dynamodb.TransactWriteItems", 0) == 0
    assert "sqs.SendMessageBatch" not in hello.get("PushDispatcherFunction", {"calls": {}})["calls"]
    pushed = result["windows"]["hello_push"]
    assert pushed["PushDispatcherFunction"]["calls"]["sqs.SendMessageBatch"] >= 1
    assert pushed["PushDeliveryFunction"]["invocations"] >= 1
    assert result["windows"]["dead_letter"]["DeadLetterFunction"]["invocations"] == 1.0
    assert result["notes"]["dead_letter_states"] == ["TASK_STATE_FAILED"]


@pytest.mark.e2e
def test_each_cost_is_the_prices_times_the_counted_units(result: dict[str, Any], aws_calls: ModuleType) -> None:
    m = aws_calls
    assert set(result["shapes"]) == {"hello_blocking", "hello_push", STREAM, ARTIFACT}
    template = result["meta"]["template"]
    # The event source mappings' requests are billed at the FIFO price when every consumed queue is FIFO.
    all_fifo = all(template["queues"][queue]["fifo"] for queue in template["sqs_event_sources"])
    for name, shape in result["shapes"].items():
        u, usd = shape["units_per_task"], shape["per_million_tasks_usd"]
        assert u["api_requests"] >= 1, name
        assert u["lambda_requests"] >= u["api_requests"] + 1, name  # the routes' functions + the worker
        assert u["rru"] > 0, name
        assert u["wru"] > u["wru_of_which_gsi"] > 0, name
        esm = u["sqs_requests_event_source_estimate"]
        fifo = u["sqs_requests_ours_fifo"] + (esm if all_fifo else 0)
        standard = u["sqs_requests_ours_standard"] + (0 if all_fifo else esm)
        expected = {
            "dynamodb": u["rru"] * m.DYNAMODB_RRU + u["wru"] * m.DYNAMODB_WRU,
            "sqs": fifo * m.SQS_FIFO_REQUEST + standard * m.SQS_STANDARD_REQUEST,
            "lambda_requests_only": u["lambda_requests"] * m.LAMBDA_REQUEST,
            "lambda_duration_only": u["lambda_gb_seconds"] * m.LAMBDA_GB_SECOND_ARM64,
            "api_gateway": u["api_requests"] * m.API_GATEWAY_REST_REQUEST,
            "s3_requests": u["s3_put_requests"] * m.S3_PUT_REQUEST + u["s3_get_requests"] * m.S3_GET_REQUEST,
            "s3_storage": u["s3_bytes_stored"] / m.GB * m.S3_STANDARD_GB_MONTH * template["task_ttl_days"] / 30,
            "data_transfer_out": u["data_transfer_out_bytes"] / m.GB * m.DATA_TRANSFER_OUT_GB,
        }
        for part, dollars in expected.items():
            assert usd[part] == pytest.approx(dollars * 1e6, abs=0.011), (name, part)
        assert usd["lambda"] == pytest.approx(usd["lambda_requests_only"] + usd["lambda_duration_only"], abs=0.011)
        keys = ("dynamodb", "sqs", "lambda", "api_gateway", "s3_requests", "s3_storage", "data_transfer_out")
        services = [usd[k] for k in keys]
        assert shape["total_per_million_tasks_usd"] == pytest.approx(sum(services), abs=0.011), name


@pytest.mark.e2e
def test_push_adds_counted_work(result: dict[str, Any]) -> None:
    methods, windows = result["methods"], result["windows"]
    assert result["notes"]["notifications"][0] >= 3  # at least the task, its artifact, COMPLETED
    # The inline config is written with the task; its deliveries advance a cursor; the dispatcher
    # queues them (the blocking shape's only SQS request is the work item).
    assert methods["SendMessage (blocking, inline push config)"]["wru"] > methods["SendMessage (blocking)"]["wru"]
    assert windows["hello_push"]["PushDeliveryFunction"]["calls"].get("dynamodb.UpdateItem", 0) >= 1
    blocking = result["shapes"]["hello_blocking"]["units_per_task"]
    pushed = result["shapes"]["hello_push"]["units_per_task"]
    assert blocking["sqs_requests_ours_fifo"] == 1
    assert pushed["sqs_requests_ours_fifo"] >= 2


@pytest.mark.e2e
def test_stream_shape_stores_every_chunk_and_counts_its_writes(result: dict[str, Any]) -> None:
    s = result["stream_shapes"][STREAM]
    assert s["final_state"] == "TASK_STATE_COMPLETED", s
    assert not s["timed_out"]
    assert s["chunks_stored"] == CHUNKS
    assert s["chunks_in_order"]
    assert s["artifact_text_bytes"] == CHUNKS * CHUNK_BYTES
    assert s["worker_invocations"] >= 1
    # Every chunk's text goes to DynamoDB at least once; writes of the worker are billed.
    assert s["dynamodb_write_request_bytes"] > CHUNKS * CHUNK_BYTES
    assert sum(n for op, n in s["dynamodb_calls"].items() if op in {"TransactWriteItems", "PutItem"}) >= 1
    assert s["wru"] > s["wru_of_which_gsi"] >= 0
    assert s["per_million_tasks_usd"]["dynamodb"] > 0
    assert "WorkerFunction" in s["dynamodb_calls_by_component"]


@pytest.mark.e2e
def test_artifact_shape_stores_the_file_in_s3_and_the_client_downloads_it_by_url(result: dict[str, Any]) -> None:
    a = result["artifact_shapes"][ARTIFACT]
    assert a["final_state"] == "TASK_STATE_COMPLETED", a
    # The part is over the response's inline budget (5 MiB as base64 > 4 MiB): a presigned URL, with
    # the file's name and media type, in the blocking SendMessage's response and in GetTask's.
    assert a["get_task_part"] == "url"
    assert a["send_part"] == "url"
    assert a["get_task_part_fields"] == ["filename", "mediaType", "url"]
    assert a["url_scheme"] in ("http", "https")
    assert a["downloads"] == 1
    assert a["bytes_received"] == FILE_BYTES
    assert a["bytes_exact"]
    # S3: the worker puts the object (once: the file's bytes), the API side only signs URLs (no
    # request), the client's GET by the URL is the one read, its bytes the data transfer out.
    assert a["s3_calls"].get("PutObject", 0) >= 1
    assert a["s3_put_requests"] >= 1
    assert a["s3_bytes_sent"] >= FILE_BYTES
    assert a["s3_bytes_stored"] == FILE_BYTES
    assert a["s3_presigned_urls"] >= 1  # GetTask's URL at least
    assert a["s3_calls"]["GetObject"] == 1
    assert a["s3_get_requests"] == 1
    assert a["s3_bytes_received"] == FILE_BYTES
    assert a["data_transfer_out_bytes"] == FILE_BYTES
    assert a["calls_by_component"]["client"] == {"s3.GetObject": 1}
    assert "s3.PutObject" in a["calls_by_component"]["WorkerFunction"]
    get_task = a["calls_by_component"][f"api:GetTask ({ARTIFACT})"]
    assert get_task.get("s3.PresignGetObject") == 1
    assert "s3.GetObject" not in get_task
    assert a["s3_errors"] == {}
    # DynamoDB holds only the pointer: no write request carries the file.
    assert a["dynamodb_calls"].get("TransactWriteItems", 0) >= 1
    assert 0 < a["dynamodb_write_request_bytes"] < FILE_BYTES // 10
    assert a["wru"] > 0
    assert a["rru"] > 0
    usd = a["per_million_tasks_usd"]
    assert usd["s3_requests"] > 0
    assert usd["s3_storage"] > 0
    assert usd["data_transfer_out"] > 0


@pytest.mark.e2e
def test_render_is_importable_without_side_effects(result: dict[str, Any], aws_calls: ModuleType) -> None:
    markdown = aws_calls.render(result)
    assert "| GetTask | GatewayFunction | " in markdown
    assert "**Cost per million tasks**" in markdown
    assert f"| {STREAM} | COMPLETED | {CHUNKS} of {CHUNKS} |" in markdown
    assert f"| {ARTIFACT} | COMPLETED | url | {FILE_BYTES:,} B, byte-exact |" in markdown


# ----------------------------------------------------------------------- unit accounting (no stack)
def _s(text: str) -> dict[str, str]:
    return {"S": text}


def _index(m: ModuleType, projection: str, non_key: tuple[str, ...] = ()) -> Any:
    return m.IndexSchema("ByX", ("gk",), projection, non_key, ("pk", "sk"))


def test_gsi_all_projection_sizes_the_whole_item(aws_calls: ModuleType) -> None:
    m = aws_calls
    index = _index(m, "ALL")
    big = {"pk": _s("p"), "sk": _s("s"), "gk": _s("g"), "body": _s("x" * 3000)}
    assert m.gsi_writes([index], None, big) == 3  # enters the index: one put of a 3 KB entry
    assert m.gsi_writes([index], big, {**big, "body": _s("y" * 3000)}) == 3  # changed in place
    assert m.gsi_writes([index], big, {**big, "gk": _s("h")}) == 6  # moved: delete + put
    assert m.gsi_writes([index], big, dict(big)) == 0  # unchanged
    assert m.gsi_writes([index], big, None) == 3  # deleted
    assert m.gsi_writes([index], {"pk": _s("p"), "sk": _s("s")}, {"pk": _s("p"), "sk": _s("t")}) == 0


def test_gsi_keys_only_ignores_other_attributes(aws_calls: ModuleType) -> None:
    m = aws_calls
    index = _index(m, "KEYS_ONLY")
    big = {"pk": _s("p"), "sk": _s("s"), "gk": _s("g"), "body": _s("x" * 3000)}
    assert m.gsi_writes([index], None, big) == 1  # the entry: table keys + index key, under 1 KB
    assert m.gsi_writes([index], big, {**big, "body": _s("y" * 5000)}) == 0  # not projected: free
    assert m.gsi_writes([index], big, {**big, "gk": _s("h")}) == 2  # moved: delete + put


def test_gsi_include_charges_only_projected_changes(aws_calls: ModuleType) -> None:
    m = aws_calls
    index = _index(m, "INCLUDE", ("state",))
    item = {"pk": _s("p"), "sk": _s("s"), "gk": _s("g"), "state": _s("WORKING"), "task": _s("x" * 3000)}
    assert m.gsi_writes([index], None, item) == 1
    assert m.gsi_writes([index], item, {**item, "task": _s("y" * 3000)}) == 0
    assert m.gsi_writes([index], item, {**item, "state": _s("COMPLETED")}) == 1
    include_big = _index(m, "INCLUDE", ("task",))
    assert m.gsi_writes([include_big], item, {**item, "task": _s("y" * 3000)}) == 3


def test_batch_get_rounds_each_item_and_reads_consistency_per_table(aws_calls: ModuleType) -> None:
    m = aws_calls
    a1, a2, b1, gone = ({"pk": _s(k)} for k in ("a1", "a2", "b1", "gone"))
    stored = {
        "a1": {**a1, "v": _s("x" * 5000)},  # 2 units of 4 KB
        "a2": {**a2, "v": _s("x" * 100)},  # 1
        "b1": {**b1, "v": _s("x" * 100)},
    }
    params = {
        "RequestItems": {
            "A": {"Keys": [a1, a2, gone], "ConsistentRead": True},
            "B": {"Keys": [b1], "ProjectionExpression": "pk"},
        }
    }
    parsed = {"Responses": {"A": [stored["a1"], stored["a2"]], "B": [{"pk": _s("b1")}]}}
    seen: list[str] = []

    def full_item(table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(f"{table}:{key['pk']['S']}")
        return stored.get(key["pk"]["S"])

    units, items = m.batch_get_units(params, parsed, full_item)
    # A (consistent): 2 + 1 + 1 (a missing item is still one read); B (eventual): 0.5
    assert (units, items) == (4.5, 4)
    assert seen == ["A:gone", "B:b1"]  # a projected read is billed on the whole item
    parsed["UnprocessedKeys"] = {"A": {"Keys": [a1]}}
    assert m.batch_get_units(params, parsed, full_item) == (2.5, 3)


def test_write_request_bytes_count_write_calls_only(aws_calls: ModuleType) -> None:
    calls = [
        {"service": "dynamodb", "op": "TransactWriteItems", "request_bytes": 900, "error": ""},
        {"service": "dynamodb", "op": "BatchWriteItem", "request_bytes": 50, "error": ""},
        {"service": "dynamodb", "op": "UpdateItem", "request_bytes": 40, "error": "ConditionalCheckFailed"},
        {"service": "dynamodb", "op": "GetItem", "request_bytes": 70, "error": ""},
        {"service": "dynamodb", "op": "Query", "request_bytes": 80, "error": ""},
    ]
    assert aws_calls._units(calls)["dynamodb_write_request_bytes"] == 990


def test_stream_shape_names(aws_calls: ModuleType) -> None:
    assert aws_calls.stream_shape("stream_800_burst") == (800, 0.0)
    assert aws_calls.stream_shape("stream_800_paced") == (800, 0.02)
    assert aws_calls.stream_shape("hello_blocking") is None
    assert set(aws_calls.STREAM_SHAPES) == {"stream_800_burst", "stream_800_paced", "stream_200_burst"}


def test_artifact_shape_names(aws_calls: ModuleType) -> None:
    assert aws_calls.artifact_shape("artifact_5mb") == FILE_BYTES
    assert aws_calls.artifact_shape("artifact_0mb") is None
    assert aws_calls.artifact_shape("stream_800_burst") is None
    assert aws_calls.bench_executor(["hello_blocking"]) is None
    assert aws_calls.bench_executor(["hello_blocking", STREAM]) == aws_calls.STREAM_EXECUTOR
    assert aws_calls.bench_executor([STREAM, ARTIFACT]) == aws_calls.FILE_EXECUTOR


def test_s3_requests_are_priced_by_tier_and_sized_by_body(aws_calls: ModuleType) -> None:
    m = aws_calls
    put = m._s3_units("PutObject", {"Bucket": "b", "Key": "k", "Body": b"x"}, {}, 7)
    assert put == {
        "s3_requests": 1,
        "s3_tier": "put",
        "s3_bytes_sent": 7,
        "s3_object": "b/k",
        "s3_object_bytes": 7,
    }
    get = m._s3_units("GetObject", {"Bucket": "b", "Key": "k"}, {"ContentLength": 11}, 0)
    assert (get["s3_tier"], get["s3_bytes_received"]) == ("get", 11)
    assert m._s3_units("HeadObject", {}, {}, 0)["s3_tier"] == "get"
    assert m._s3_units("ListObjectsV2", {}, {}, 0)["s3_tier"] == "put"
    assert m._s3_units("DeleteObject", {}, {}, 0)["s3_tier"] == "free"
    calls = [
        {"service": "s3", "op": "PutObject", "error": "", **put},
        {"service": "s3", "op": "PutObject", "error": "", **put},  # the same object again: stored once
        {"service": "s3", "op": "GetObject", "error": "", **get},
        {"service": "s3", "op": "PresignGetObject", "error": "", **m._presign_units({"Key": "k"})},
    ]
    units = m._units(calls)
    assert (units["s3_put_requests"], units["s3_get_requests"], units["s3_presigned_urls"]) == (2, 1, 1)
    assert (units["s3_bytes_sent"], units["s3_bytes_received"], units["s3_bytes_stored"]) == (14, 11, 7)
    assert units["data_transfer_out_bytes"] == 0  # S3 to the functions: in the region


def test_a_presigned_url_is_recorded_as_no_request(aws_calls: ModuleType) -> None:
    """generate_presigned_url emits before-parameter-build and sends nothing (no after-call): the
    recorder notes it there, as a call of no request; a client download is one GET."""
    import boto3
    from botocore.config import Config

    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="y", region_name="us-east-1")
    recorder = aws_calls.Recorder()
    recorder.install(session)
    recorder.window = "w"
    s3 = session.client("s3", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "tasks/k"}, ExpiresIn=60)
    assert "X-Amz-Signature=" in url
    recorder.note_download("download", 5, 200)
    presign, download = recorder.snapshot()
    assert (presign["service"], presign["op"], presign["s3_requests"], presign["window"]) == (
        "s3",
        "PresignGetObject",
        0,
        "w",
    )
    assert (download["component"], download["op"], download["s3_requests"]) == ("client", "GetObject", 1)
    assert download["data_transfer_out_bytes"] == 5
