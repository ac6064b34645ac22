"""The tree ``sam build`` made (``make template`` builds it for this machine's architecture, then
runs this file): each function imports its handler from nothing but what Lambda gives it, in the
runtime's Python, and nothing of the local stack or the tests is there to import.

A function's path on Lambda is its code (``/var/task``), its layers (``/opt/python``) and the
runtime's own boto3; here each handler is imported by Python 3.13 in isolation (``-I -S``: no
site-packages, no user or environment paths) from exactly these. The layer is built for the
architecture ``make template`` chose (this machine's), so its binaries load here.

The tracing layer (``TracingLayer``, attached with the template's Tracing parameter) is checked the
same way beside the core layer: it holds the tracing extra's packages and nothing of the core
layer's, which holds none of them (off, nothing of it ships); with it, a function's first traced call
turns tracing on, exports OTLP signed for X-Ray and reads X-Ray's context."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from a2a_serverless_dev._template import function_environment
from a2a_serverless_dev.build_check import runtime_python
from a2a_serverless_dev.kit.layer.build import normalized
from a2a_serverless_dev.resources import LocalResources, load_template
from testkit.otlp import otlp_endpoint

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("A2A_BUILD_DIR") or REPO / ".aws-sam" / "build")
NOT_IMPORTABLE = ["a2a_serverless_dev", "moto", "yaml", "pytest", "aws_durable_execution_sdk_python_testing"]

pytestmark = pytest.mark.skipif(
    not (BUILD / "template.yaml").is_file(), reason=f"no sam build at {BUILD} (make template builds it)"
)

# Run by the runtime's Python: import what a function's handler names, from the given path only.
_IMPORT = """
import importlib, json, sys
paths, handlers, absent = json.loads(sys.argv[1])
sys.path[:0] = paths
for module, attr in handlers:
    assert callable(getattr(importlib.import_module(module), attr)), (module, attr)
found = []
for name in absent:
    try:
        importlib.import_module(name)
        found.append(name)
    except ImportError:
        pass
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def python313() -> Path:
    found = runtime_python()
    if found is None:
        pytest.skip("no Python 3.13 (the functions' runtime) here")
    return found


@pytest.fixture(scope="module")
def runtime_boto3(python313: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the Lambda runtime adds after the layers: boto3 (and what it needs), nothing else."""
    target = tmp_path_factory.mktemp("var-runtime")
    command = [str(python313), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*command, "--target", str(target), "--only-binary=:all:", "boto3"], check=True, timeout=600)
    return target


@pytest.fixture(scope="module")
def built() -> dict[str, Any]:
    return load_template(BUILD / "template.yaml")


def _cold_start_environment(built: dict[str, Any], function: str) -> dict[str, str]:
    """The Globals' variables as CloudFormation resolves them (parameters at their defaults, the
    table, queues and bucket named after their logical ids), as Lambda sets them."""
    names: dict[str, dict[str, str]] = {"AWS::DynamoDB::Table": {}, "AWS::SQS::Queue": {}, "AWS::S3::Bucket": {}}
    for logical_id, resource in built["Resources"].items():
        names.get(resource["Type"], {})[logical_id] = logical_id
    queues = {k: f"https://sqs.us-east-1.amazonaws.com/123456789012/{k}" for k in names["AWS::SQS::Queue"]}
    resources = LocalResources(
        tables=names["AWS::DynamoDB::Table"], queue_urls=queues, buckets=names["AWS::S3::Bucket"]
    )
    return {
        **function_environment(built, resources).values,
        "A2A_PUSH_SIGNING_KEY_PARAMETER": "/a2a-serverless/a2a/push-signing-keys",  # a !Sub
        "AWS_LAMBDA_FUNCTION_NAME": function,
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def _functions(built: dict[str, Any]) -> list[str]:
    return sorted(k for k, v in built["Resources"].items() if v["Type"] == "AWS::Serverless::Function")


def _handlers(code: Path, handler: Any) -> list[tuple[str, str]]:
    """(module, attribute) pairs a handler names: each branch of an ``Fn::If``; for the gateway's
    script under the Lambda Web Adapter, uvicorn and the app factory it serves."""
    if isinstance(handler, dict):
        return [pair for branch in handler["Fn::If"][1:] for pair in _handlers(code, branch)]
    if handler.endswith(".sh"):
        factory = re.search(r"--factory\s+(\S+):(\w+)", (code / handler).read_text())
        assert factory is not None, handler
        return [("uvicorn", "run"), (factory.group(1), factory.group(2))]
    module, _, attr = handler.rpartition(".")
    return [(module, attr)]


def test_every_function_is_checked(built: dict[str, Any]) -> None:
    assert len(_functions(built)) >= 10


@pytest.mark.parametrize("function", _functions(load_template()))
def test_a_function_imports_its_handler_from_its_code_its_layer_and_the_runtimes_boto3_only(
    built: dict[str, Any], python313: Path, runtime_boto3: Path, function: str
) -> None:
    # Given the function as built: its code, its layers, and the runtime's boto3
    resource = built["Resources"][function]
    props = {**built.get("Globals", {}).get("Function", {}), **resource["Properties"]}
    code = BUILD / props["CodeUri"]
    layers = [BUILD / built["Resources"]["CoreLayer"]["Properties"]["ContentUri"] / "python"]
    handlers = _handlers(code, props["Handler"])
    # ... and the environment of its cold start (on Lambda, the worker loads the executor then)
    env = _cold_start_environment(built, function)
    # When the runtime's Python imports each handler from exactly these
    paths = [str(code), *map(str, layers), str(runtime_boto3)]
    argument = json.dumps([paths, handlers, NOT_IMPORTABLE])
    result = _run_isolated(python313, _IMPORT, argument, env)
    # Then each imports, and nothing of the local stack or the tests could have been imported
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == []


TRACING_LAYER_LIMIT_BYTES = 20 * 2**20
"""The tracing layer unzipped (13 MB when it was made: protobuf and OpenTelemetry's SDK, exporter
and generated protos are most of it)."""
TRACING_EXTRA = {"opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-propagator-aws-xray"}

# Run by the runtime's Python with the core and tracing layers: a function's first traced call on
# Lambda (its outermost span's end flushes the batch to the OTLP endpoint), then what the X-Ray
# propagator reads from API Gateway's header.
_TRACED_CALL = """
import importlib, json, sys
paths, module = json.loads(sys.argv[1])
sys.path[:0] = paths
importlib.import_module(module)
from a2a_serverless import telemetry
with telemetry.server_call("ListTasks", {}) as call:
    call.request(version="1.0", tenant="", fields={})
from opentelemetry import propagate, trace
header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
context = trace.get_current_span(propagate.extract({"X-Amzn-Trace-Id": header})).get_span_context()
print(json.dumps(format(context.trace_id, "032x")))
"""


def _layer_python(built: dict[str, Any], layer: str) -> Path:
    return BUILD / built["Resources"][layer]["Properties"]["ContentUri"] / "python"


def _distributions(python: Path) -> set[str]:
    return {normalized(p.name.split("-")[0]) for p in python.glob("*.dist-info")}


def test_the_tracing_layer_holds_what_the_tracing_extra_adds_and_the_core_layer_none_of_it(
    built: dict[str, Any],
) -> None:
    core, tracing = _layer_python(built, "CoreLayer"), _layer_python(built, "TracingLayer")
    in_core, in_tracing = _distributions(core), _distributions(tracing)
    # The core layer did not grow: no OpenTelemetry in it (a deployment without tracing ships none)
    assert sorted(n for n in in_core if n.startswith("opentelemetry")) == []
    # The tracing layer holds the extra's packages, none of the core layer's, not the kit
    assert in_tracing >= TRACING_EXTRA
    assert in_core & in_tracing == set()
    assert not (tracing / "a2a_serverless").exists()
    size = sum(p.stat().st_size for p in tracing.rglob("*") if p.is_file())
    assert size < TRACING_LAYER_LIMIT_BYTES, f"the tracing layer is {size / 2**20:.1f} MB unzipped"


def test_with_the_tracing_layer_a_functions_traced_call_is_exported_signed_for_x_ray(
    built: dict[str, Any], python313: Path, runtime_boto3: Path
) -> None:
    # Given a function with both layers and the runtime's boto3, tracing on as Tracing CloudWatch
    # sets it (the endpoint played by a receiver on 127.0.0.1), with test credentials
    function = "ListTasksFunction"
    props = {**built.get("Globals", {}).get("Function", {}), **built["Resources"][function]["Properties"]}
    paths = [str(BUILD / props["CodeUri"]), *(str(_layer_python(built, k)) for k in ("CoreLayer", "TracingLayer"))]
    module = str(props["Handler"]).rpartition(".")[0]
    with otlp_endpoint() as (url, received):
        env = {
            **_cold_start_environment(built, function),
            "A2A_TRACING": "otlp",
            "A2A_TRACING_SIGV4": "xray",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": url,
            "OTEL_PROPAGATORS": "tracecontext,baggage,xray-lambda",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_SESSION_TOKEN": "token",
        }
        # When the runtime's Python makes its first traced call
        result = _run_isolated(python313, _TRACED_CALL, json.dumps([[*paths, str(runtime_boto3)], module]), env)
    # Then the span went out signed for X-Ray, and X-Ray's header names the trace to join
    assert result.returncode == 0, result.stderr[-3000:]
    (request,) = received
    assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/xray/aws4_request" in request.headers["authorization"]
    assert json.loads(result.stdout.splitlines()[-1]) == "5759e988bd862e3fe1be46a994272793"


def _run_isolated(python: Path, code: str, argument: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``code`` run by ``python`` as the Lambda runtime runs a handler: isolated (``-I -S``: no
    user site, no site-packages), with ``env`` and PATH only."""
    return subprocess.run(
        [str(python), "-I", "-S", "-c", code, argument],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), **env},
        timeout=120,
        check=False,
    )
